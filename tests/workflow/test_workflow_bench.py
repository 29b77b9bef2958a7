"""The parts of bench/workflow_bench.py that turn a run into the numbers the docs report."""
import importlib.util

from fixtures import REPO


def _bench():
    spec = importlib.util.spec_from_file_location("workflow_bench", REPO / "bench" / "workflow_bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Abridged from a real `snakemake -c2` log (Snakemake 9): two jobs overlap, one has wildcards,
# one fails to finish within the log.
LOG = """\
[Wed Dec  2 13:43:27 2026]
localrule srl_training_data:
    input: ../shared/data/propbank-ewt
    log: logs/srl/srl_training_data.log
    jobid: 10
    reason: Missing output files: results/srl/training_data/ewt.parquet
Shell command: None

[Wed Dec  2 13:43:27 2026]
rule report_errors_keyclips:
    output: results/report/errors/keyclips/tfidf-lr.csv
    jobid: 45
    wildcards: system=tfidf-lr
    resources: tmpdir=/tmp
[Wed Dec  2 13:43:29 2026]
Finished jobid: 10 (Rule: srl_training_data)
1 of 3 steps (33%) done

[Wed Dec  2 13:43:30 2026]
localrule train_srl:
    jobid: 7
[Wed Dec  2 14:01:05 2026]
Finished jobid: 45 (Rule: report_errors_keyclips)
2 of 3 steps (67%) done
"""


def test_job_wall_times_pairs_each_finish_with_its_own_start():
    times = _bench().job_wall_times(LOG)
    assert times == [("report_errors_keyclips (system=tfidf-lr)", 17 * 60 + 38.0), ("srl_training_data", 2.0)]


def test_job_wall_times_reads_two_digit_days_and_ignores_lines_outside_jobs():
    log = LOG.replace("Dec  2", "Dec 12") + "Finished jobid: 99 (Rule: unknown)\n"
    assert [name for name, _ in _bench().job_wall_times(log)] == [
        "report_errors_keyclips (system=tfidf-lr)", "srl_training_data"]


def test_writing_the_report_keeps_the_pages_other_sections():
    bench = _bench()
    page = "# Workflow benchmarks\n\nold table\n\n## Issue 23\nkept\n\n## Issue 20\nkept too\n"
    new = bench.replace_first_section(page, "# Workflow benchmarks\n\nnew table\n")
    assert new == "# Workflow benchmarks\n\nnew table\n\n## Issue 23\nkept\n\n## Issue 20\nkept too\n"
    assert bench.replace_first_section("", "only\n") == "only\n"
