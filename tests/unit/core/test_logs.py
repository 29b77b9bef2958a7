"""cookproc.core.logs.Progress: a long loop logs a line at least every `every` seconds, never more
often, with done/total, elapsed time, an ETA from the average step so far, and its figures."""
from __future__ import annotations

import logging

import pytest

from cookproc.core.logs import Progress, format_duration


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return FakeClock()


def lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "test.progress"]


def test_a_line_every_interval_and_one_at_the_end(caplog, clock):
    caplog.set_level(logging.INFO)
    progress = Progress("training", 100, unit="batches", log=logging.getLogger("test.progress"),
                        every=30.0, clock=clock)
    logged_at = []
    for step in range(1, 101):
        clock.now += 7.0  # 7 s a step: a line every 5 steps (35 s), never two within 30 s
        before = len(lines(caplog))
        progress.step()
        if len(lines(caplog)) > before:
            logged_at.append(step)
    assert logged_at == list(range(5, 100, 5)) + [100]
    gaps = [7.0 * (b - a) for a, b in zip(logged_at, logged_at[1:])]
    assert all(gap <= 35.0 for gap in gaps) and all(gap >= 30.0 for gap in gaps[:-1])


def test_eta_is_the_average_step_time_the_remaining_steps(caplog, clock):
    caplog.set_level(logging.INFO)
    progress = Progress("fine-tuning", 40, unit="batches", log=logging.getLogger("test.progress"),
                        every=60.0, clock=clock)
    clock.now += 90.0
    progress.step(10, loss=0.123456)  # 10 steps in 90 s: 30 left take 270 s
    assert lines(caplog) == ["fine-tuning: 10/40 batches (25%), 1m30s elapsed, ETA 4m30s, loss 0.1235"]
    clock.now += 30.0
    progress.step(30)  # the last step logs, with no ETA
    assert lines(caplog)[-1] == "fine-tuning: 40/40 batches (100%), 2m00s elapsed"


def test_no_line_before_the_interval_and_callable_figures_are_read_only_when_logged(caplog, clock):
    caplog.set_level(logging.INFO)
    reads = []

    def loss():
        reads.append(1)
        return 0.5

    progress = Progress("encoding", 1000, log=logging.getLogger("test.progress"), every=30.0, clock=clock)
    for _ in range(10):
        clock.now += 2.9
        progress.step(loss=loss)
    assert lines(caplog) == [] and reads == []
    clock.now += 1.0
    progress.step(loss=loss)
    assert lines(caplog) == ["encoding: 11/1000 (1%), 30s elapsed, ETA 44m57s, loss 0.5"] and reads == [1]


def test_a_loop_shorter_than_the_interval_logs_nothing(caplog, clock):
    caplog.set_level(logging.INFO)
    progress = Progress("parsing", 50, log=logging.getLogger("test.progress"), every=30.0, clock=clock)
    for _ in range(50):
        clock.now += 0.5
        progress.step()
    assert progress.done == 50 and lines(caplog) == []


def test_iterate_steps_once_per_item_and_an_open_total_has_no_eta(caplog, clock):
    caplog.set_level(logging.INFO)
    progress = Progress("parsing", None, unit="sentences", log=logging.getLogger("test.progress"),
                        every=10.0, clock=clock)
    seen = []
    for item in progress.iterate(["a", "b", "c"]):
        clock.now += 5.0
        seen.append(item)
    assert seen == ["a", "b", "c"] and progress.done == 3
    assert lines(caplog) == ["parsing: 2 sentences, 10s elapsed"]


@pytest.mark.parametrize("seconds, text", [(0, "0s"), (59.4, "59s"), (60, "1m00s"), (3599, "59m59s"),
                                           (3600, "1h00m"), (7384, "2h03m"), (-3, "0s")])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


# ----------------------------------------------------------------------------- issue 55: Ctrl-C in one line
JOB_SCRIPT = '''
import os, signal, sys, time
from pathlib import Path
if sys.argv[1] == "imports":  # Ctrl-C while the script imports its library, before script_logging
    from cookproc.core.logs import script_logging
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_output
from snakemake.iocontainers import Namedlist

class Job:
    rule = "corpus_shard"
    log, input, output = Namedlist(["job.log"]), Namedlist(fromdict={}), Namedlist(fromdict={"clips": "out.parquet"})
    params, wildcards, config = Namedlist(fromdict={}), Namedlist(fromdict={}), {}

with script_logging(Job()) as log:
    with atomic_output("out.parquet") as tmp:
        Path(tmp).write_bytes(b"half")
        print("writing", flush=True)
        time.sleep(60)  # SIGINT arrives here
'''


def run_job_script(tmp_path, when):
    """A workflow script (workflow/scripts/demo_job.py) stopped by Ctrl-C (SIGINT, as the terminal
    sends it to Snakemake's jobs), ``when``: "imports" or "work" (inside script_logging)."""
    import os
    import signal
    import subprocess
    import sys

    from fixtures import REPO

    script = tmp_path / "workflow" / "scripts" / "demo_job.py"
    script.parent.mkdir(parents=True)
    script.write_text(JOB_SCRIPT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO / "workflow")}
    proc = subprocess.Popen([sys.executable, str(script), when], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if when == "work":
        assert proc.stdout.readline() == "writing\n"
        os.kill(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return proc.returncode, out, err


@pytest.mark.parametrize("when", ["imports", "work"])
def test_ctrl_c_ends_a_job_with_one_line_and_no_traceback(tmp_path, when):
    """Issue 55: Ctrl-C during `snakemake corpus_all` showed a KeyboardInterrupt traceback from the
    shard script (twice: one per running job). Now one line, in the job's log too once it has one,
    and no output half-written."""
    returncode, _, err = run_job_script(tmp_path, when)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert returncode in (130, -2)  # -2: killed by SIGINT, as Python ends after an uncaught Ctrl-C
    if when == "imports":
        assert err == "demo_job.py: interrupted (Ctrl-C): the files it was writing were not written; run it again\n"
    else:
        line = "rule corpus_shard: interrupted (Ctrl-C): the files it was writing were not written; run it again"
        assert err == line + "\n" and returncode == 130
        log = (tmp_path / "job.log").read_text(encoding="utf-8")
        assert log.splitlines()[-1] == line and "Traceback" not in log
        assert sorted(p.name for p in tmp_path.iterdir()) == ["job.log", "workflow"]  # no out.parquet, no temporary file
