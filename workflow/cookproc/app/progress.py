"""Progress reports for the sentences an extractor labels: a callback given (sentences just
labelled, sentences in all), drawn as a terminal's bar or written to a rule's log."""
from __future__ import annotations

from typing import Callable

#: What an extractor calls as it labels: (sentences just labelled, sentences in all).
ProgressCallback = Callable[[int, int], None]


class ProgressBar:
    """A tqdm bar over the sentences an extractor labels (a :data:`ProgressCallback`), on stderr: the
    terminal for the ``cookproc`` command, the job's log in a rule. ``enabled=None``: only on a
    terminal. Call :meth:`close` at the end."""

    def __init__(self, desc: str, *, enabled: bool | None = None, mininterval: float = 0.5):
        self.desc, self.enabled, self.mininterval, self.bar = desc, enabled, mininterval, None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.desc, unit="sentence", mininterval=self.mininterval,
                            disable=None if self.enabled is None else not self.enabled)
        self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class LoggedProgress:
    """A :data:`ProgressCallback` for a rule's log: a line with an ETA at least every 30 seconds
    (:class:`cookproc.core.logs.Progress`) rather than a terminal's bar."""

    def __init__(self, what: str):
        self.what, self.progress = what, None

    def __call__(self, done: int, total: int) -> None:
        if self.progress is None:
            from cookproc.core.logs import Progress

            self.progress = Progress(self.what, total, unit="sentences")
        self.progress.step(done)
