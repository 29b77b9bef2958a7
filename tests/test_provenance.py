"""Provenance in every Parquet file (cookproc.core.provenance) and `cookproc inspect` (cookproc.app.inspection,
its `--lineage` cookproc.app.lineage), on files written in a simulated job; the fixture workflow's own files
are checked in test_workflow.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from snakemake.iocontainers import Namedlist

from cookproc.app import inspection, lineage
from cookproc.app.cli import main as cli_main
from cookproc.core import digests, provenance
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import KEYCLIPS
from fixtures import REPO

CONFIG = {"keyclips": {"device": "cpu", "text": {"path": None, "pooling": "mean"},
                       "neural": {"max_epochs": 30, "learning_rate": 0.01, "finetune": {"layers": 1, "learning_rate": 0.1}}},
          "user": {"device": "cpu", "learning_rate": 0.01}}


def test_params_are_traced_to_the_config_keys_they_come_from():
    params = {"device": "cpu", "pooling": "mean", "path": None, "finetune": {"layers": 1, "learning_rate": 0.1},
              "train": {"max_epochs": 30, "learning_rate": 0.01}, "variant": "visual"}
    traced, untraced = provenance.config_keys(params, CONFIG)
    # `device` fits keyclips.device and procedures.device: the rule's other keys are under keyclips.
    assert traced == {"keyclips.device": "cpu", "keyclips.neural.finetune": {"layers": 1, "learning_rate": 0.1},
                      "keyclips.neural.learning_rate": 0.01, "keyclips.neural.max_epochs": 30,
                      "keyclips.text.path": None, "keyclips.text.pooling": "mean"}
    assert untraced == ["variant"]
    # Alone, `device` is a tie: left untraced rather than guessed.
    assert provenance.config_keys({"device": "cpu"}, CONFIG) == ({}, ["device"])


class Job:
    """The parts of a script job's `snakemake` object that script_logging reads."""

    def __init__(self, log, inputs, params, wildcards=None, config=None, rule="keyclips_demo"):
        self.log, self.rule = Namedlist(log), rule
        self.input = Namedlist(fromdict=inputs)
        self.params = Namedlist(fromdict=params)
        self.wildcards = Namedlist(fromdict=wildcards or {})
        self.config = config or CONFIG


def keyclips(n=4):
    return pa.table({"system": ["demo"] * n, "video_id": [f"v{i}" for i in range(n)],
                     "clip_idx": pa.array(range(n), pa.int32()), "is_key": [i % 2 == 0 for i in range(n)],
                     "score": [0.1 * i for i in range(n)], "fold": pa.array([None] * n, pa.int32())})


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A workflow working directory: config.yaml, an input under results/ and a non-Parquet input."""
    monkeypatch.chdir(tmp_path)
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    config["keyclips"].update(device="cpu", folds={**config["keyclips"]["folds"], "k": 5, "seed": 0})
    config["keyclips"]["neural"].update(max_epochs=30, patience=5)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    write_parquet(keyclips(), "results/keyclips/upstream.parquet", KEYCLIPS)
    Path("data").mkdir()
    Path("data/families.tsv").write_text("recipe\tfamily\n", encoding="utf-8")
    return tmp_path


def job_write(run_dir, out="results/keyclips/demo.parquet", table=None):
    from cookproc.core.config_schema import validate_config

    config = validate_config(yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")))
    kc = config["keyclips"]
    job = Job([str(run_dir / "demo.log")],
              {"keyclips": "results/keyclips/upstream.parquet", "families": "data/families.tsv"},
              {"code": "f" * 32, "k": kc["folds"]["k"], "seed": kc["folds"]["seed"], "device": kc["device"],
               "train": {key: kc["neural"][key] for key in ("max_epochs", "patience")}, "variant": "text"},
              {"seed": "0"}, config)
    with script_logging(job):
        write_parquet(keyclips() if table is None else table, out, KEYCLIPS)
    return Path(out)


def stored(path):
    return provenance.stored_provenance(pq.read_metadata(path).metadata)


def test_a_job_writes_its_rule_params_config_keys_and_inputs(run_dir):
    path = job_write(run_dir)
    record = stored(path)
    assert record["rule"] == "keyclips_demo" and record["wildcards"] == {"seed": "0"}
    assert record["code"] == "f" * 32
    assert record["params"] == {"k": 5, "seed": 0, "device": "cpu", "train": {"max_epochs": 30, "patience": 5},
                                "variant": "text"}
    assert record["config"] == {"keyclips.device": "cpu", "keyclips.folds.k": 5, "keyclips.folds.seed": 0,
                                "keyclips.neural.max_epochs": 30, "keyclips.neural.patience": 5}
    assert record["untraced_params"] == ["variant"]
    assert record["config_hash"] == digests.sha256_text(digests.compact(record["config"]))
    upstream_digest = "columns:" + digests.sha256_text(digests.compact(
        json.loads(pq.read_metadata("results/keyclips/upstream.parquet").metadata[b"cookproc.column_digests"])["columns"]))
    assert record["inputs"] == [
        {"name": "keyclips", "path": "results/keyclips/upstream.parquet", "digest": upstream_digest},
        {"name": "families", "path": "data/families.tsv",
         "digest": "sha256:" + __import__("hashlib").sha256(b"recipe\tfamily\n").hexdigest()}]
    assert record["software"]["python"] and record["software"]["pyarrow"] == pa.__version__
    # The time is in the job's log, not in the file.
    assert "started at" in (run_dir / "demo.log").read_text()
    assert "started" not in json.dumps(record) and "time" not in record


def test_rewriting_in_a_job_is_byte_identical_and_outside_a_job_the_provenance_is_minimal(run_dir):
    first = job_write(run_dir).read_bytes()
    assert job_write(run_dir).read_bytes() == first
    write_parquet(keyclips(), "plain.parquet", KEYCLIPS)
    assert stored("plain.parquet") == {"format": provenance.PROVENANCE_FORMAT, "rule": None,
                                       "software": stored("plain.parquet")["software"]}
    assert set(stored("plain.parquet")["software"]) <= {"python", "numpy", "pyarrow"}


def test_inspect_says_current_then_names_the_changed_config_key(run_dir):
    path = job_write(run_dir)
    report = inspection.inspect_file(path)
    assert report["status"] == "current", report["reasons"]
    assert report["rows"] == 4 and report["contract"] == "KEYCLIPS"
    assert report["columns"][3] == {"name": "is_key", "type": "bool", "nullable": False,
                                    "description": "the system's decision: the clip is a key step"}
    config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    config["keyclips"]["neural"]["max_epochs"] = 40
    config["keyclips"]["neural"]["learning_rate"] = 0.5  # a key the rule does not read
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    report = inspection.inspect_file(path)
    assert report["status"] == "stale"
    assert report["reasons"] == ["config key keyclips.neural.max_epochs changed 30 -> 40"]
    assert report["unchecked"] == ["param variant (not a config value as such)"]
    assert "stale: config key keyclips.neural.max_epochs changed 30 -> 40" in inspection.render(report)


def test_inspect_names_a_changed_input_and_changed_code(run_dir):
    path = job_write(run_dir)
    Path("data/families.tsv").write_text("recipe\tfamily\npizza\tbaked\n", encoding="utf-8")
    assert inspection.inspect_file(path)["reasons"] == ["input data/families.tsv changed"]
    # A file recorded from this checkout's script: its code is current while its fingerprint is.
    import hashlib

    from cookproc.core.fingerprint import code_fingerprint

    record = stored(path)
    record["script"] = "workflow/scripts/keyclips_folds.py"
    record["code"] = code_fingerprint(REPO / record["script"], REPO / "workflow" / "cookproc", REPO)
    module = "workflow/cookproc/learn/folds.py"
    record["code_files"] = {rel: hashlib.sha256((REPO / rel).read_bytes()).hexdigest()[:16]
                            for rel in (record["script"], module)}
    assert inspection.code_changes(record) == []
    # Recorded by other code: the modules whose content differs are named.
    record["code"] = "0" * 32
    record["code_files"][module] = "0" * 16
    assert inspection.code_changes(record) == [f"code changed: {module}"]
    record["code_files"][module] = hashlib.sha256((REPO / module).read_bytes()).hexdigest()[:16]
    assert inspection.code_changes(record)[0].startswith("code changed: a module workflow/scripts/keyclips_folds.py")


def test_a_damaged_file_is_reported_damaged_without_a_traceback_and_left_in_place(run_dir, capsys):
    path = job_write(run_dir)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF  # inside the data pages
    path.write_bytes(bytes(data))
    assert cli_main(["inspect", str(path)]) == 1
    out = capsys.readouterr()
    assert "damaged:" in out.out and "Traceback" not in out.out + out.err
    assert path.exists() and not Path(str(path) + ".damaged").exists()
    assert cli_main(["inspect", "--json", str(path)]) == 1
    assert json.loads(capsys.readouterr().out)["status"] == "damaged"
    path.write_bytes(b"not parquet at all")
    assert cli_main(["inspect", str(path)]) == 1
    assert "no Parquet magic number" in capsys.readouterr().out


def test_the_command_prints_json_and_the_lineage(run_dir):
    job_write(run_dir)
    proc = subprocess.run([sys.executable, "-m", "cookproc.app.cli", "inspect", "--json", "results/keyclips/demo.parquet"],
                          capture_output=True, text=True, cwd=run_dir)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["provenance"]["rule"] == "keyclips_demo"
    tree = lineage.lineage(run_dir / "results/keyclips/demo.parquet")
    assert tree["rule"] == "keyclips_demo"
    assert [(c["path"], c["rule"], c.get("digest_matches")) for c in tree["inputs"]] == [
        ("results/keyclips/upstream.parquet", None, True), ("data/families.tsv", None, True)]
