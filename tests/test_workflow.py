"""The DAG end to end on the tiny generated fixture, in temporary working directories."""
import csv
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cookproc.metrics import score_keyclips
from fixtures import (UPSTREAM_SYSTEMS_ONLY, VIDEOS, check_provenance_against_snakemake, make_workdir, n_clips,
                      run_snakemake)

pytestmark = pytest.mark.slow
TARGETS = ("results/table2.csv", "results/table4.csv", "results/table5.csv")



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
    workdir = make_workdir(base / "run", upstream, UPSTREAM_SYSTEMS_ONLY)
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
    workdir = make_workdir(tmp_path / "run", upstream, UPSTREAM_SYSTEMS_ONLY)
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
    command = [sys.executable, "-m", "cookproc.cli", "inspect", str(target)]
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
