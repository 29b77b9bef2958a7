"""The DAG end to end on the tiny generated fixture, in temporary working directories."""
import csv
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq
import pytest

from cookproc.scoring.metrics import score_keyclips
from fixtures import (UPSTREAM_SYSTEMS_ONLY, VIDEOS, check_provenance_against_snakemake, deep_merge, make_workdir,
                      n_clips, run_snakemake)

pytestmark = pytest.mark.slow
TARGETS = ("results/table2.csv", "results/table4.csv", "results/table5.csv", "results/significance.csv")
# Upstream's systems and two user systems; the declared significance family compares the user's
# key-clip system with the paper's best, and the user's gold tuples with upstream's SRL.
RESAMPLES = 999
OVERRIDES = deep_merge(UPSTREAM_SYSTEMS_ONLY, {"tables": {
    "bootstrap": {"resamples": RESAMPLES},
    "significance": {"keyclip_systems": ["user-allkey"], "tuple_systems": [],
                     "pairs": [["user-oracle", "upstream-srl-heur"]]}}})



def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def gold_user_systems(workdir):
    """A user tuple system that outputs the gold annotation, and a key-clip system that says 'all key'."""
    systems = workdir / "data" / "systems"
    systems.mkdir(parents=True)
    with open(systems / "oracle.tuples.jsonl", "w", encoding="utf-8") as out:
        for video_id, (_, clips) in VIDEOS.items():
            for idx, clip in enumerate(clips):
                verbs = [v.strip() for v in clip[2].replace(";", ",").split(",") if v.strip()]
                args = [a.strip() for cell in clip[3:8] for a in cell.split(";") if a.strip()]
                out.write(json.dumps({"video_id": video_id, "clip_idx": idx, "verbs": verbs, "args": args}) + "\n")
    with open(systems / "allkey.keyclips.jsonl", "w", encoding="utf-8") as out:
        for video_id, (_, clips) in VIDEOS.items():
            for idx in range(len(clips)):
                out.write(json.dumps({"video_id": video_id, "clip_idx": idx, "is_key": True}) + "\n")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    from fixtures import write_tiny_upstream

    base = tmp_path_factory.mktemp("wf")
    upstream = write_tiny_upstream(base / "upstream")
    workdir = make_workdir(base / "run", upstream, OVERRIDES)
    gold_user_systems(workdir)
    run_snakemake(workdir, *TARGETS)
    return workdir


def test_tables_hold_every_system_and_block(finished_run):
    t4 = {r["system"]: r for r in read_csv(finished_run / "results/table4.csv")}
    assert list(t4) == ["upstream-neural", "upstream-srl-heur", "user-allkey"]
    gold = [bool(c[1]) for _, (_, clips) in sorted(VIDEOS.items()) for c in clips]
    neural = [bool(c[-1]) for _, (_, clips) in sorted(VIDEOS.items()) for c in clips]
    expected = score_keyclips(gold, neural)
    assert float(t4["upstream-neural"]["f1"]) == pytest.approx(100 * expected.f1)
    assert float(t4["user-allkey"]["recall"]) == 100.0
    assert int(t4["user-allkey"]["n_clips"]) == n_clips()

    t5 = read_csv(finished_run / "results/table5.csv")
    blocks = {(r["system"], r["keyclips"], r["counting"]) for r in t5}
    assert blocks == {(s, k, c) for s in ("upstream-srl-heur", "user-oracle")
                      for k, c in (("oracle", "oracle"), ("upstream-neural", "predicted"),
                                   ("upstream-neural", "predicted-masked"))}
    assert len(t5) == len(blocks) * 6
    oracle_rows = [r for r in t5 if r["system"] == "user-oracle" and r["counting"] == "oracle"]
    assert all(float(r["f1"]) == 100.0 for r in oracle_rows)  # gold scored against itself
    wide = (finished_run / "results/table5.md").read_text()
    assert "| oracle | oracle | user-oracle | 100.0 | 100.0 | 100.0 |" in wide


def test_table4_says_how_each_row_was_obtained(finished_run):
    t4 = {r["system"]: r for r in read_csv(finished_run / "results/table4.csv")}
    # Upstream's neural selector and the user's system ship decisions without scores: no AUC/AP.
    assert t4["upstream-neural"]["threshold_objective"] == "none (binary decisions)"
    assert t4["upstream-neural"]["auc_roc"] == "" and t4["user-allkey"]["average_precision"] == ""
    assert t4["upstream-neural"]["auc_roc_fold_mean"] == "" == t4["user-allkey"]["average_precision_fold_mean"]
    assert (t4["upstream-neural"]["seeds"], t4["user-allkey"]["seeds"]) == ("upstream's predictions", "user's predictions")
    wide = (finished_run / "results/table4.md").read_text()
    assert ("| Seeds | Threshold rule | AUC-ROC (pooled out-of-fold) | AP (pooled out-of-fold) | AUC-ROC (mean per fold) "
            "| AP (mean per fold) |") in wide and "n/a (binary)" in wide and "*Pooled out-of-fold*" in wide
    constants = read_csv(finished_run / "results/table5_predicted_counting.csv")
    assert {r["field"] for r in constants} == {"verbs", "arguments"}
    t5 = read_csv(finished_run / "results/table5.csv")
    for r in constants:  # the paper's counting: every F1 is the oracle F1 times this constant
        for system in ("upstream-srl-heur", "user-oracle"):
            oracle, predicted = (next(float(x["f1"]) for x in t5 if (x["system"], x["counting"], x["field"], x["mode"])
                                      == (system, counting, r["field"], "exact")) for counting in ("oracle", "predicted"))
            assert predicted == pytest.approx(oracle * float(r["constant"]))
    assert "Counting `predicted` is the paper's" in (finished_run / "results/table5.md").read_text()


def test_significance_holds_the_declared_family_only(finished_run):
    rows = read_csv(finished_run / "results/significance.csv")
    # Table 4: the user's system against the paper's best key-clip system (the higher F1 of upstream's
    # two); Table 5: the declared pair in the oracle and masked predicted blocks, two cells each.
    t4 = {r["system"]: float(r["f1"]) for r in read_csv(finished_run / "results/table4.csv")}
    best = max(["upstream-neural", "upstream-srl-heur"], key=t4.get)
    assert [(r["table"], r["system_a"], r["system_b"], r["comparison"]) for r in rows if r["table"] == "table4"] == [
        ("table4", "user-allkey", best, "vs paper's best")]
    assert float(rows[0]["difference"]) == pytest.approx(t4["user-allkey"] - t4[best])
    table5 = [r for r in rows if r["table"] == "table5"]
    assert {(r["keyclips"], r["counting"], r["field"], r["mode"]) for r in table5} == {
        (k, c, f, m) for k, c in (("oracle", "oracle"), ("upstream-neural", "predicted-masked"))
        for f, m in (("verbs", "exact"), ("arguments", "partial"))}
    assert len(rows) == 5 and all(r["comparison"] == "declared pair" for r in table5)
    p_values = [float(r["p_value"]) for r in rows]
    assert min(p_values) >= 2 / (RESAMPLES + 1) and all(int(r["resamples"]) == RESAMPLES for r in rows)
    holm = [float(r["p_holm"]) for r in rows]
    assert all(h >= p for h, p in zip(holm, p_values))
    # Gold arguments beat upstream's SRL in every resample of the four recipes: p is the smallest
    # attainable. Its verbs equal gold on some recipes: resamples of those alone differ by 0.
    arguments = {r["counting"]: r for r in table5 if r["field"] == "arguments"}
    assert all(float(r["p_value"]) == pytest.approx(2 / (RESAMPLES + 1)) and r["significant"] == "True"
               for r in arguments.values())
    assert arguments["oracle"]["run_a"] == "user's predictions"
    assert all(float(r["p_value"]) > 2 / (RESAMPLES + 1) for r in table5 if r["field"] == "verbs")
    ci = read_csv(finished_run / "results/table4_ci.csv")
    assert {r["run"] for r in ci if r["system"] == "upstream-neural"} == {"upstream's predictions"}


def test_too_few_resamples_for_the_family_is_refused_before_any_job(tmp_path, tiny_upstream):
    workdir = make_workdir(tmp_path / "run", tiny_upstream, deep_merge(OVERRIDES, {"tables": {"bootstrap": {"resamples": 100}}}))
    gold_user_systems(workdir)
    proc = run_snakemake(workdir, "-n", "results/significance.csv", check=False)
    assert proc.returncode != 0
    assert "resamples = 100 is too few for a family of 5 comparisons" in proc.stdout + proc.stderr


def test_intermediates_are_typed_parquet(finished_run):
    clips = pq.read_table(finished_run / "results/dataset/clips.parquet")
    assert clips.num_rows == n_clips()
    gold_verbs = clips.schema.field("gold_verbs").type
    assert pa.types.is_list(gold_verbs) and gold_verbs.value_type == pa.string()
    assert not clips.schema.field("video_id").nullable
    assert (finished_run / "results/figures/figure3_verbs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    t2 = {r["field"]: r for r in read_csv(finished_run / "results/table2.csv")}
    assert int(t2["verbs"]["items"]) == sum(len([v for v in c[2].replace(";", ",").split(",") if v.strip()])
                                            for _, (_, clips) in VIDEOS.items() for c in clips)


def test_rerun_is_a_noop(finished_run):
    proc = run_snakemake(finished_run, "-n", *TARGETS)
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_outputs_are_byte_identical_across_hash_seeds(finished_run, tmp_path):
    from fixtures import write_tiny_upstream

    upstream = write_tiny_upstream(tmp_path / "upstream")
    workdir = make_workdir(tmp_path / "run", upstream, OVERRIDES)
    gold_user_systems(workdir)
    env_seed = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = "12345"
    try:
        run_snakemake(workdir, *TARGETS)
    finally:
        if env_seed is None:
            os.environ.pop("PYTHONHASHSEED")
        else:
            os.environ["PYTHONHASHSEED"] = env_seed
    outputs = sorted(p.relative_to(finished_run / "results") for p in (finished_run / "results").rglob("*")
                     if p.is_file() and p.suffix in {".parquet", ".csv", ".md", ".png"})
    assert len(outputs) >= 12
    for rel in outputs:
        assert (workdir / "results" / rel).read_bytes() == (finished_run / "results" / rel).read_bytes(), rel


def test_every_parquet_carries_the_provenance_snakemake_recorded(finished_run):
    checked = check_provenance_against_snakemake(finished_run)
    assert "results/dataset/clips.parquet" in checked and "results/scores/table5_clips.parquet" in checked


def test_inspect_a_fixture_file_current_then_stale_after_a_config_change(finished_run, tmp_path):
    import subprocess
    import sys

    import yaml

    target = finished_run / "results/scores/table5_clips.parquet"
    command = [sys.executable, "-m", "cookproc.app.cli", "inspect", str(target)]
    proc = subprocess.run(command, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "rule       table5" in proc.stdout and "status     current" in proc.stdout
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["tables"]["masked"] = not config["tables"]["masked"]
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    proc = subprocess.run(command + ["--config", str(changed), "--json"], capture_output=True, text=True)
    report = json.loads(proc.stdout)
    was = json.dumps(not config["tables"]["masked"])
    assert report["status"] == "stale"
    assert report["reasons"] == [f"config key tables.masked changed {was} -> {json.dumps(config['tables']['masked'])}"]
    proc = subprocess.run(command[:-1] + ["--lineage", str(target)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "results/dataset/clips.parquet  [rule clips]" in proc.stdout
    assert "youcook2/reviewed_0812.csv  [source file (no rule)]" in proc.stdout


def test_bad_user_system_fails_cleanly(tmp_path, tiny_upstream):
    workdir = make_workdir(tmp_path / "run", tiny_upstream)
    systems = workdir / "data" / "systems"
    systems.mkdir(parents=True)
    (systems / "broken.tuples.jsonl").write_text('{"video_id": "vidPizza001", "clip_idx": 0, "verbs": "add", "args": []}\n')
    proc = run_snakemake(workdir, "results/tuples/user-broken.parquet", check=False)
    assert proc.returncode != 0
    assert not (workdir / "results/tuples/user-broken.parquet").exists()
    log = (workdir / "logs/systems/import_user_tuples/broken.log").read_text()
    assert "broken.tuples.jsonl" in log and "line 1 verbs: expected a list of strings" in log


def test_configured_repair_table_is_applied(tmp_path, tiny_upstream):
    repairs = tmp_path / "repairs.tsv"
    repairs.write_text("line\tcolumn\told\tnew\treason\n2\tIsUsefulSentence\t0\t1\ttest: mark the first clip key\n")
    workdir = make_workdir(tmp_path / "run", tiny_upstream, {"upstream": {"repairs": str(repairs)}})
    run_snakemake(workdir, "results/dataset/clips.parquet")
    first = pq.read_table(workdir / "results/dataset/clips.parquet").slice(0, 1).to_pylist()[0]
    assert (first["video_id"], first["clip_idx"], first["is_key"]) == ("vidPizza001", 0, True)
    assert "test: mark the first clip key" in (workdir / "logs/data/clips.log").read_text()


def test_bad_user_system_files_fail_one_job_listing_them_and_the_rest_runs(tmp_path, tiny_upstream):
    """Issue 37: a name with a space, two formats for one system, a stray file and an upper-case
    extension. The DAG is built, one job fails naming every bad file, and `-k` builds the tables
    with the good systems (the upper-case one among them)."""
    workdir = make_workdir(tmp_path / "run", tiny_upstream, UPSTREAM_SYSTEMS_ONLY)
    gold_user_systems(workdir)
    systems = workdir / "data" / "systems"
    (systems / "oracle.tuples.jsonl").rename(systems / "oracle.tuples.JSONL")
    (systems / "my sys.keyclips.jsonl").write_text((systems / "allkey.keyclips.jsonl").read_text())
    (systems / "dup.tuples.jsonl").write_text((systems / "oracle.tuples.JSONL").read_text())
    (systems / "dup.tuples.parquet").write_bytes(b"")
    (systems / "notes.txt").write_text("my notes\n")
    # The check's own target and a report page: the tables are the check's inputs, so `-k` must build them
    # (the whole default DAG adds nothing to what is checked here but the people's stage).
    proc = run_snakemake(workdir, "-k", "results/systems/user-systems.tsv",
                         "results/report/errors/tuples/user-oracle.html", check=False)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    log = (workdir / "logs/systems/check_user_systems.log").read_text()
    assert "Traceback" not in output + log  # issue 46: one line, no traceback
    assert log.splitlines()[-1].startswith("rule check_user_systems: error: data/systems: 3 problem(s)")
    for text in (output, log):
        assert "data/systems: 3 problem(s) with user systems" in text
        assert "'my sys.keyclips.jsonl': the name 'my sys' must start with a letter or digit" in text
        assert "'notes.txt': not a system file" in text
        assert "user system 'dup' (tuples): 2 files, dup.tuples.jsonl, dup.tuples.parquet; keep one" in text
    assert "MissingInputException" not in output
    assert not (workdir / "results/systems/user-systems.tsv").exists()
    t4 = [r["system"] for r in read_csv(workdir / "results/table4.csv")]
    t5 = {r["system"] for r in read_csv(workdir / "results/table5.csv")}
    assert t4 == ["upstream-neural", "upstream-srl-heur", "user-allkey"]
    assert t5 == {"upstream-srl-heur", "user-oracle"}
    assert (workdir / "results/report/errors/tuples/user-oracle.html").exists()
    # The report's target does not skip them silently either.
    assert "check_user_systems" in run_snakemake(workdir, "--dry-run", "report_all").stdout
    # Fixed: no check job any more, and nothing else to do.
    for name in ("my sys.keyclips.jsonl", "dup.tuples.parquet", "notes.txt"):
        (systems / name).unlink()
    dry = run_snakemake(workdir, "--dry-run")
    assert "check_user_systems" not in dry.stdout and "problem(s)" not in dry.stdout + dry.stderr
    assert "user-dup" in dry.stdout  # dup's one file left is now a system of its own


def test_valid_user_systems_are_scored_before_the_check_of_a_bad_one_stops_the_run(tmp_path, tiny_upstream):
    """Issue 55: docs/methods.md said valid user systems are still scored when another has a bad
    name; without --keep-going the check's failure stopped the run first, and table4.md had no row
    for the valid one. The check now runs once Tables 4 and 5 are written."""
    workdir = make_workdir(tmp_path / "run", tiny_upstream, UPSTREAM_SYSTEMS_ONLY)
    gold_user_systems(workdir)
    systems = workdir / "data" / "systems"
    (systems / "my sys.keyclips.jsonl").write_text((systems / "allkey.keyclips.jsonl").read_text())
    proc = run_snakemake(workdir, "results/table4.md", "results/table5.md", "results/systems/user-systems.tsv",
                         check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "rule check_user_systems: error: data/systems: 1 problem(s)" in output
    assert "Traceback" not in output
    assert "| user-allkey |" in (workdir / "results/table4.md").read_text()
    assert "| user-oracle |" in (workdir / "results/table5.md").read_text()
    assert [r["system"] for r in read_csv(workdir / "results/table4.csv")] == [
        "upstream-neural", "upstream-srl-heur", "user-allkey"]
    assert not (workdir / "results/systems/user-systems.tsv").exists()


def test_a_swapped_intermediate_without_digests_is_moved_aside_and_rebuilt(tmp_path, tiny_upstream):
    """Issue 37: a valid Parquet of the right schema, its digests removed and is_key flipped, put
    over a workflow output. The next job that reads it fails naming it and moves it aside (never a
    silently different Table 4), and the next plain run rebuilds it."""
    workdir = make_workdir(tmp_path / "run", tiny_upstream, UPSTREAM_SYSTEMS_ONLY)
    run_snakemake(workdir, "results/table4.csv")
    table4 = (workdir / "results/table4.csv").read_bytes()
    path = workdir / "results/keyclips/upstream-srl-heur.parquet"
    original = path.read_bytes()
    table = pq.read_table(path)
    flipped = table.set_column(table.column_names.index("is_key"), "is_key", pa.compute.invert(table.column("is_key")))
    pq.write_table(flipped.replace_schema_metadata(None), path)
    proc = run_snakemake(workdir, "results/table4.csv", check=False)
    assert proc.returncode != 0
    log = (workdir / "logs/evaluate/table4.log").read_text()
    assert ("results/keyclips/upstream-srl-heur.parquet is damaged (it carries no column digests, so this workflow did "
            "not write it as it is): moved it aside to results/keyclips/upstream-srl-heur.parquet.damaged; run "
            "`snakemake` again to rebuild it") in log
    assert not path.exists() and path.with_name(path.name + ".damaged").exists()
    assert not (workdir / "results/table4.csv").exists()  # the failed job's output is gone: no wrong table
    run_snakemake(workdir, "results/table4.csv")
    assert path.read_bytes() == original and (workdir / "results/table4.csv").read_bytes() == table4


def test_a_file_written_for_another_output_fails_its_reader_in_one_line_and_the_next_run_rebuilds_it(
        tmp_path, tiny_upstream):
    """Issue 46: `cp results/keyclips/srl-noheur-spacy.parquet results/keyclips/srl-heur-spacy.parquet`
    changed Table 4's row silently. Here: upstream-neural's file copied over upstream-srl-heur's.
    The job reading it fails with one line (no traceback) naming where and by which rule it was
    written, moves it aside, and a plain rerun rebuilds it and Table 4 as they were. Then the
    repair of a deleted intermediate whose dependents exist: one command."""
    import shutil

    workdir = make_workdir(tmp_path / "run", tiny_upstream, UPSTREAM_SYSTEMS_ONLY)
    run_snakemake(workdir, "results/table4.csv")
    table4 = workdir / "results/table4.csv"
    table4_bytes = table4.read_bytes()
    path = workdir / "results/keyclips/upstream-srl-heur.parquet"
    original = path.read_bytes()
    shutil.copyfile(workdir / "results/keyclips/upstream-neural.parquet", path)
    proc = run_snakemake(workdir, "results/table4.csv", check=False)
    assert proc.returncode != 0
    output, log = proc.stdout + proc.stderr, (workdir / "logs/evaluate/table4.log").read_text()
    line = ("rule table4: error: results/keyclips/upstream-srl-heur.parquet is not the file its rule wrote for this "
            "path (written as results/keyclips/upstream-neural.parquet by rule import_upstream_neural): moved it "
            "aside to results/keyclips/upstream-srl-heur.parquet.damaged; run `snakemake` again to rebuild it")
    assert log.splitlines()[-1] == line and f"\n{line}\n" in output
    assert "Traceback" not in output + log
    assert not path.exists() and not table4.exists()  # no wrong table
    run_snakemake(workdir, "results/table4.csv")
    assert path.read_bytes() == original and table4.read_bytes() == table4_bytes

    # A table made from a wrong file (as before this check), whose intermediate is then deleted:
    # a plain run has nothing to do, since nothing needs the missing file ...
    stat = table4.stat()
    table4.write_bytes(table4_bytes.replace(b"upstream-srl-heur", b"upstream-srl-HEUR"))
    os.utime(table4, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    path.unlink()
    assert "Nothing to be done" in run_snakemake(workdir, "results/table4.csv", "--dry-run").stdout
    # ... and the repair command docs/reliability.md gives rebuilds it and everything made from it.
    # (The target first: --forcerun takes every path after it, and with no target left the run is `all`.)
    run_snakemake(workdir, "results/table4.csv", "--forcerun", "results/keyclips/upstream-srl-heur.parquet")
    assert path.read_bytes() == original and table4.read_bytes() == table4_bytes


def test_a_bad_user_system_fails_its_import_job_in_one_line(tmp_path, tiny_upstream):
    """Issue 46: import_user_system on bad JSONL showed a traceback; a key given twice kept the last."""
    workdir = make_workdir(tmp_path / "run", tiny_upstream, UPSTREAM_SYSTEMS_ONLY)
    gold_user_systems(workdir)
    system = workdir / "data/systems/allkey.keyclips.jsonl"
    lines = system.read_text().splitlines()
    lines[2] = lines[2].replace('"is_key": true', '"is_key": true, "is_key": false')
    system.write_text("\n".join(lines) + "\n")
    proc = run_snakemake(workdir, "results/keyclips/user-allkey.parquet", check=False)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    log = (workdir / "logs/systems/import_user_keyclips/allkey.log").read_text()
    line = ("rule import_user_keyclips: error: data/systems/allkey.keyclips.jsonl, line 3: the key 'is_key' appears "
            "twice in one object (JSON keeps only the last): give it once")
    assert log.splitlines()[-1] == line and f"\n{line}\n" in output
    assert "Traceback" not in output + log
    assert not (workdir / "results/keyclips/user-allkey.parquet").exists()
