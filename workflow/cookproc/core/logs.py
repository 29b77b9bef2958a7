"""Logging for workflow scripts: everything a script says goes to its rule's log file, and long
loops say how far they are (:class:`Progress`), so that ``tail -f logs/<stage>/<rule>.log`` shows a
sign of life at least once a minute with an ETA."""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import traceback
from typing import Callable, Iterable, Iterator, TypeVar

from cookproc.core import provenance
from cookproc.core.errors import ExpectedError, one_line

# The nltk_data folder cookproc.data.wordnet reads WordNet from. In a job it is the rule's `wordnet`
# input (rules/resources.smk), or empty when the rule declares none, so that WordNet is never
# read from an environment's own install (the .venv's nltk_data, say) that a conda job lacks.
NLTK_DATA_ENV = "COOKPROC_NLTK_DATA"
#: The exit status of a job stopped by an expected error (its message, no traceback).
EXIT_EXPECTED_ERROR = 1
#: The exit status of a job or command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130
#: What a job or command stopped by Ctrl-C says, on one line, instead of a traceback.
INTERRUPTED = "interrupted (Ctrl-C): the files it was writing were not written; run it again"


def _quiet_interrupt(kind, value, traceback_) -> None:
    """``sys.excepthook``: Ctrl-C anywhere in a workflow script or the ``cookproc`` command (its
    imports included, before :func:`script_logging` starts) ends it with one line, not a traceback;
    every other exception as before."""
    if issubclass(kind, KeyboardInterrupt):
        script = provenance.script_name() or os.path.basename(sys.argv[0] or "python")
        print(f"{script}: {INTERRUPTED}", file=sys.stderr)
        return
    _previous_excepthook(kind, value, traceback_)


_previous_excepthook = sys.excepthook
if not hasattr(sys, "ps1"):  # not at an interactive prompt, which reports Ctrl-C its own way
    sys.excepthook = _quiet_interrupt


@contextlib.contextmanager
def script_logging(smk):
    """Send stderr and ``logging`` to ``smk.log[0]``; on a failure, end the job.

    An expected error (:class:`cookproc.core.errors.ExpectedError`: bad input, a damaged or misplaced
    intermediate, an unwritable output, a bad config) is its message, on one line, in the log and on
    the job's stderr (Snakemake's output), and the script exits with status 1: no traceback, since the
    message names the file and what to do. Ctrl-C (KeyboardInterrupt) ends the job with one line as
    well (exit status 130; the temporary files of its outputs are removed on the way, so none is
    left half-written). Any other exception is a bug: its traceback goes to the log and it is
    re-raised. Also points cookproc.data.wordnet at the rule's ``wordnet`` input
    (none: WordNet raises), and sets the job's provenance, which every Parquet file it writes
    carries (cookproc.core.provenance)."""
    previous = os.environ.get(NLTK_DATA_ENV)
    os.environ[NLTK_DATA_ENV] = str(smk.input.wordnet) if "wordnet" in smk.input.keys() else ""
    failure, status = None, EXIT_EXPECTED_ERROR
    try:
        with _logging_to(smk.log[0] if len(smk.log) else None) as handle:
            try:
                # Every Parquet file the job writes carries its provenance (the start time goes to the log).
                provenance.start_job(smk)
                yield logging.getLogger(f"cookproc.{smk.rule}" if handle else "cookproc")
            except ExpectedError as exc:
                failure = f"rule {smk.rule}: error: {one_line(exc)}"
                if handle:
                    print(failure, file=handle)
            except KeyboardInterrupt:
                failure, status = f"rule {smk.rule}: {INTERRUPTED}", EXIT_INTERRUPTED
                if handle:
                    print(failure, file=handle)
            except BaseException:
                if handle:
                    traceback.print_exc(file=handle)
                raise
            finally:
                provenance.end_job()
    finally:
        # A caller that outlives the job (a test, a notebook) gets its environment back.
        if previous is None:
            os.environ.pop(NLTK_DATA_ENV, None)
        else:
            os.environ[NLTK_DATA_ENV] = previous
    if failure is not None:
        # stderr is the job's own again here: Snakemake shows it with the failed job.
        print(failure, file=sys.stderr)
        raise SystemExit(status)


@contextlib.contextmanager
def _logging_to(log_path):
    """stderr and the root logger into ``log_path`` for the block (nothing when it is None)."""
    if log_path is None:
        yield None
        return
    with open(log_path, "w", encoding="utf-8", buffering=1) as handle:
        old_stderr = sys.stderr
        sys.stderr = handle
        root = logging.getLogger()
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            yield handle
        finally:
            root.removeHandler(handler)
            sys.stderr = old_stderr


#: Seconds between two progress lines of a loop whose steps come often enough.
PROGRESS_EVERY_S = 30.0
_T = TypeVar("_T")


def format_duration(seconds: float) -> str:
    """``42s``, ``6m05s``, ``2h03m``: short enough for a progress line."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


class Progress:
    """Progress of a loop of ``total`` steps, logged as
    ``<what>: <done>/<total> <unit> (<pct>%), <elapsed> elapsed, ETA <left>[, <name> <value>...]``.

    Call :meth:`step` once per step (or ``step(n)`` for n steps), with the figures worth seeing as
    keywords (``loss=...``). A line is logged when ``every`` seconds have passed since the last one
    (or since the start), and at the last step of a loop that has logged before: a loop whose
    steps each take less than ``every`` seconds logs at least that often, never more, and a loop
    shorter than ``every`` seconds logs nothing (its caller reports it). ETA assumes the remaining steps
    take as long as the done ones did on average. A keyword value may be a callable, called only
    when a line is logged (a loss on a GPU is then copied to the host once a line, not once a
    batch). ``total=None``: no percentage or ETA.
    """

    def __init__(self, what: str, total: int | None, *, unit: str = "", log: logging.Logger | None = None,
                 every: float = PROGRESS_EVERY_S, clock: Callable[[], float] = time.monotonic):
        self.what, self.total, self.unit, self.every, self.clock = what, total, unit, every, clock
        self.log = log or logging.getLogger("cookproc.progress")
        self.done, self.lines = 0, 0
        self.started = self.last_line = clock()

    def step(self, n: int = 1, **extra) -> None:
        self.done += n
        now = self.clock()
        if now - self.last_line >= self.every or (self.lines and self.done == self.total):
            self.last_line = now
            self.lines += 1
            self.log.info("%s", self.line(now, extra))

    def iterate(self, items: Iterable[_T], **extra) -> Iterator[_T]:
        """Yield ``items``, one step after each."""
        for item in items:
            yield item
            self.step(**extra)

    def line(self, now: float, extra: dict | None = None) -> str:
        elapsed = now - self.started
        unit = f" {self.unit}" if self.unit else ""
        if self.total is None:
            text = f"{self.what}: {self.done}{unit}, {format_duration(elapsed)} elapsed"
        else:
            pct = 100.0 * self.done / self.total if self.total else 100.0
            text = f"{self.what}: {self.done}/{self.total}{unit} ({pct:.0f}%), {format_duration(elapsed)} elapsed"
            if self.done < self.total:
                eta = elapsed / self.done * (self.total - self.done) if self.done else None
                text += f", ETA {'unknown' if eta is None else format_duration(eta)}"
        for name, value in (extra or {}).items():
            value = value() if callable(value) else value
            text += f", {name} {value:.4g}" if isinstance(value, float) else f", {name} {value}"
        return text
