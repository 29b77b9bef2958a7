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

    def __init__(self, log, inputs, params, wildcards=None, config=None, rule="keyclips_demo", outputs=()):
        self.log, self.rule = Namedlist(log), rule
        self.output = Namedlist(list(outputs))
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
              {"seed": "0"}, config, outputs=[out])
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


# ----------------------------------------------------------------------------- the file a rule wrote for a path
def test_a_file_written_for_another_output_is_refused_moved_aside_and_inspected_as_such(run_dir, capsys):
    """Issue 46: `cp results/keyclips/srl-noheur-spacy.parquet results/keyclips/srl-heur-spacy.parquet`
    gave Table 4 the wrong row, and `cookproc inspect` said "current"."""
    import shutil

    from cookproc.core.errors import IntermediateError
    from cookproc.core.parquet_io import read_parquet

    source = job_write(run_dir, out="results/keyclips/srl-noheur-spacy.parquet")
    assert stored(source)["outputs"] == ["results/keyclips/srl-noheur-spacy.parquet"]
    target = Path("results/keyclips/srl-heur-spacy.parquet")
    shutil.copyfile(source, target)
    copied = target.read_bytes()
    assert cli_main(["inspect", str(target)]) == 1
    out = capsys.readouterr().out
    assert ('status     misplaced: written as results/keyclips/srl-noheur-spacy.parquet by rule keyclips_demo '
            '{"seed":"0"}, not as results/keyclips/srl-heur-spacy.parquet') in out
    assert "current" not in out and target.exists()  # inspect leaves it where it is
    with pytest.raises(IntermediateError) as caught:
        read_parquet(target, KEYCLIPS)
    assert str(caught.value) == (
        "results/keyclips/srl-heur-spacy.parquet is not the file its rule wrote for this path (written as "
        'results/keyclips/srl-noheur-spacy.parquet by rule keyclips_demo {"seed":"0"}): moved it aside to '
        "results/keyclips/srl-heur-spacy.parquet.damaged; run `snakemake` again to rebuild it")
    assert not target.exists() and Path(f"{target}.damaged").read_bytes() == copied
    # The file at its own path reads as before, and outside results/ a copy is anybody's file.
    assert read_parquet(source, KEYCLIPS).num_rows == 4
    shutil.copyfile(source, run_dir / "elsewhere.parquet")
    assert read_parquet(run_dir / "elsewhere.parquet", KEYCLIPS).num_rows == 4
    report = inspection.inspect_file(run_dir / "elsewhere.parquet")
    assert report["status"] == "current" and report["written_elsewhere"].startswith("written as results/keyclips/")


def test_a_misplaced_file_of_a_job_with_two_outputs_names_the_one_it_was_written_as(run_dir):
    import shutil

    outputs = ["results/keyclips/srl-noheur-spacy.parquet", "results/tuples/srl-noheur-spacy.parquet"]
    job = Job([str(run_dir / "two.log")], {}, {"code": "f" * 32}, {"srl_backend": "spacy"}, rule="srl_systems_noheur",
              outputs=outputs)
    with script_logging(job):
        write_parquet(keyclips(), outputs[0], KEYCLIPS)
    assert stored(outputs[0])["written_as"] == outputs[0] and stored(outputs[0])["outputs"] == outputs
    shutil.copyfile(outputs[0], "results/keyclips/srl-heur-spacy.parquet")
    assert provenance.written_elsewhere(stored(outputs[0]), "results/keyclips/srl-heur-spacy.parquet") == (
        'written as results/keyclips/srl-noheur-spacy.parquet by rule srl_systems_noheur {"srl_backend":"spacy"}')


def test_a_file_inside_a_folder_output_is_its_jobs_and_a_rewritten_copy_is_the_copying_jobs(run_dir):
    from cookproc.core.parquet_io import copy_parquet, read_table

    source = job_write(run_dir, out="results/keyclips/upstream2.parquet")
    folder = Path("results/models/demo")
    job = Job([str(run_dir / "copy.log")], {"keyclips": str(source)}, {"code": "e" * 32}, rule="deploy_demo",
              outputs=[str(folder)])
    with script_logging(job):
        # As a model folder is built: in a temporary folder beside it, then renamed into place.
        tmp = Path("results/models/.demo.tmp")
        copy_parquet(source, tmp / "keyclips.parquet")
        tmp.rename(folder)
    # Written in the temporary folder: no path it was written as (the folder's name is random).
    assert stored(folder / "keyclips.parquet")["rule"] == "deploy_demo"
    assert stored(folder / "keyclips.parquet")["written_as"] is None
    assert read_table(folder / "keyclips.parquet").num_rows == 4


def test_a_file_of_a_job_whose_provenance_names_no_output_is_refused(run_dir):
    """Written before provenance recorded outputs: its path cannot be vouched for."""
    from cookproc.core import integrity
    from cookproc.core.errors import IntermediateError
    from cookproc.core.parquet_io import read_table

    path = job_write(run_dir)
    record = stored(path)
    assert provenance.written_elsewhere(record, path) is None
    del record["outputs"]
    assert "of an older version of this workflow" in provenance.written_elsewhere(record, path)
    # The file as the old writer made it: that footer, its digests made for it.
    table = pq.read_table(path).replace_schema_metadata(None)
    old = {provenance.PROVENANCE_KEY: digests.compact(record).encode()}
    pq.write_table(table.replace_schema_metadata({**integrity.digest_metadata(table, old), **old}), path,
                   write_page_checksum=True)
    with pytest.raises(IntermediateError, match=r"is not the file its rule wrote for this path \(written by rule "
                                                r"keyclips_demo .* of an older version of this workflow"):
        read_table(path)
    assert not path.exists()


def test_inspect_says_what_it_verified(run_dir):
    """Issue 46: a file of another tool, without page checksums, was "(page checksums verified)"."""
    table = keyclips()
    pq.write_table(table, "plain.parquet", use_dictionary=False, compression="none")
    pq.write_table(table, "crc.parquet", write_page_checksum=True)
    write_parquet(table, "ours.parquet", KEYCLIPS)
    texts = {name: inspection.inspect_file(f"{name}.parquet")["verified"] for name in ("plain", "crc", "ours")}
    assert texts["plain"]["text"].startswith("nothing verified: no column digests and no page checksums")
    assert texts["plain"]["pages_with_checksums"] == 0 and texts["plain"]["pages"] == 6  # a page per column
    for name, start in (("crc", "no column digests"), ("ours", "column digests verified")):
        pages = texts[name]["pages"]
        assert pages >= 6 and texts[name]["pages_with_checksums"] == pages
        assert texts[name]["text"] == f"{start}; page checksums verified ({pages} pages)"
    # A value changed inside a page of a file without either: it decodes, and inspect says it cannot tell.
    data = bytearray(Path("plain.parquet").read_bytes())
    chunk = pq.read_metadata("plain.parquet").row_group(0).column(4)  # score: plain doubles
    data[chunk.data_page_offset + chunk.total_compressed_size - 3] ^= 0x01
    Path("plain.parquet").write_bytes(bytes(data))
    report = inspection.inspect_file("plain.parquet")
    assert report.get("status") != "damaged" and "nothing verified" in inspection.render(report)
    assert "(page checksums verified)" not in inspection.render(report)


# ----------------------------------------------------------------------------- expected errors in a job
def test_an_expected_error_in_a_job_is_one_line_and_exit_1_a_bug_keeps_its_traceback(run_dir, capsys):
    from cookproc.core.errors import InputError

    log = run_dir / "job.log"
    job = Job([str(log)], {}, {"code": "f" * 32}, outputs=["results/x.parquet"])
    with pytest.raises(SystemExit) as caught:
        with script_logging(job):
            raise InputError("data/user/a.srt", "cue 2: control character U+0000 in the text", line=5)
    assert caught.value.code == 1
    line = 'rule keyclips_demo: error: data/user/a.srt, line 5: cue 2: control character U+0000 in the text'
    assert log.read_text().splitlines()[-1] == line and "Traceback" not in log.read_text()
    assert capsys.readouterr().err == line + "\n"
    with pytest.raises(ZeroDivisionError):
        with script_logging(job):
            1 / 0
    assert "Traceback" in log.read_text() and "ZeroDivisionError" in log.read_text()


# ----------------------------------------------------------------------------- issue 55: one verdict per file
def tuples(n=4, verb="stir"):
    from cookproc.core.schemas import TUPLES

    rows = [{"system": "demo", "video_id": f"v{i}", "clip_idx": i, "verbs": [verb], "args": ["pot"]} for i in range(n)]
    return pa.Table.from_pylist(rows, schema=TUPLES)


def two_output_job(run_dir, outputs, tables, schema):
    """A job of one rule with several outputs of one schema (as video_tuples_paper writes the visual,
    naive and oracle fusion tuples), each written where the job writes it."""
    job = Job([str(run_dir / "fusion.log")], {}, {"code": "a" * 32}, {"source": "upstream"}, rule="video_tuples_paper",
              outputs=outputs)
    with script_logging(job):
        for out, table in zip(outputs, tables):
            write_parquet(table, out, schema)
    return [Path(out) for out in outputs]


def verdicts(path):
    """(what `cookproc inspect` says, what a job reading it says): the status, and the reader's
    error or "read" (a job reads a file under results/tuples/ as TUPLES, as table5 does, others as
    KEYCLIPS); the file is put back after the reader moved it aside."""
    from cookproc.core.errors import IntermediateError
    from cookproc.core.parquet_io import read_parquet
    from cookproc.core.schemas import TUPLES

    from cookproc.core.parquet_io import column_names

    report = inspection.inspect_file(path)
    link = path.is_symlink()
    target = Path(path.readlink()) if link else None
    saved = None if link else path.read_bytes()
    says = []
    for reader in (column_names, lambda p: read_parquet(p, TUPLES if p.parent.name == "tuples" else KEYCLIPS)):
        try:
            reader(path)
            says.append("read")
        except IntermediateError as exc:
            says.append(str(exc))
        if not path.exists() and not path.is_symlink():
            for aside in path.parent.glob(path.name + ".damaged*"):
                aside.unlink()
            path.symlink_to(target) if link else path.write_bytes(saved)
    # A job that looks at the columns first (cookproc.learn.inputs) refuses what a reader refuses.
    assert (says[0] == "read") == (says[1] == "read") or "not the schema" in says[1], says
    return report["status"], says[1]


def test_two_outputs_of_one_job_swapped_are_refused_by_its_readers_and_by_inspect(run_dir, capsys):
    """Issue 55: `cp results/tuples/fusion-naive-upstream-paper.parquet
    results/tuples/fusion-oracle-upstream-paper.parquet` was accepted: the place check took any
    output of the job that wrote the file. Only the path it was written as is accepted now."""
    import shutil

    from cookproc.core.errors import IntermediateError
    from cookproc.core.parquet_io import read_parquet
    from cookproc.core.schemas import TUPLES

    outputs = ["results/tuples/visual-upstream-paper.parquet", "results/tuples/fusion-naive-upstream-paper.parquet",
               "results/tuples/fusion-oracle-upstream-paper.parquet"]
    visual, naive, oracle = two_output_job(run_dir, outputs, [tuples(verb=v) for v in ("cut", "add", "stir")], TUPLES)
    assert [stored(p)["written_as"] for p in (visual, naive, oracle)] == outputs
    for path in (visual, naive, oracle):  # each at its own path: read, and current
        assert verdicts(path) == ("current", "read")
    shutil.copyfile(naive, oracle)
    copied = oracle.read_bytes()
    job = ('rule video_tuples_paper {"source":"upstream"}')
    assert cli_main(["inspect", str(oracle)]) == 1
    assert (f"status     misplaced: written as {outputs[1]} by {job}, not as {outputs[2]}: a rule reading it refuses it "
            "and moves it aside") in capsys.readouterr().out
    with pytest.raises(IntermediateError) as caught:
        read_parquet(oracle, TUPLES)
    assert str(caught.value) == (f"{outputs[2]} is not the file its rule wrote for this path (written as {outputs[1]} by "
                                 f"{job}): moved it aside to {outputs[2]}.damaged; run `snakemake` again to rebuild it")
    assert not oracle.exists() and Path(f"{outputs[2]}.damaged").read_bytes() == copied
    # Swapped both ways (mv a b; mv c a), and a hard link of another output: refused alike.
    two_output_job(run_dir, outputs, [tuples(verb=v) for v in ("cut", "add", "stir")], TUPLES)
    shutil.move(naive, "swap.parquet")
    shutil.move(oracle, naive)
    shutil.move("swap.parquet", oracle)
    for path, other in ((naive, outputs[2]), (oracle, outputs[1])):
        status, job_says = verdicts(path)
        assert status == "misplaced" and f"(written as {other} by rule video_tuples_paper" in job_says
    visual.unlink()
    visual.hardlink_to(naive)
    assert verdicts(visual)[0] == "misplaced" and f"(written as {outputs[2]} by" in verdicts(visual)[1]
    # Misplaced and damaged too: refused by both, inspect without a traceback.
    visual.unlink()
    data = bytearray(naive.read_bytes())
    data[16] ^= 0xFF  # inside the first column chunk: the footer, and so the place check, intact
    visual.write_bytes(bytes(data))
    assert cli_main(["inspect", str(visual)]) == 1
    out = capsys.readouterr()
    assert "damaged: written as results/tuples/fusion-oracle-upstream-paper.parquet" in out.out
    assert "Traceback" not in out.out + out.err


def test_inspect_and_a_reading_job_give_one_verdict(run_dir):
    """Issue 55: `cookproc inspect` said "current" on a symbolic link to another output (the workflow
    refused it) and "contract KEYCLIPS ... status current" on a key-clip file copied to a tuple path
    of the same job (the workflow refused it as of the wrong schema). Both now make the one check of
    cookproc.core.parquet_io.verify: on each file below, inspect's status is "misplaced" or
    "damaged" exactly when a job reading the file refuses it."""
    import shutil

    from cookproc.core.schemas import TUPLES

    keyclips_out, tuples_out = "results/keyclips/srl-noheur-spacy.parquet", "results/tuples/srl-noheur-spacy.parquet"
    job = Job([str(run_dir / "srl.log")], {}, {"code": "b" * 32}, {"srl_backend": "spacy"}, rule="srl_systems_noheur",
              outputs=[keyclips_out, tuples_out])
    with script_logging(job):
        write_parquet(keyclips(), keyclips_out, KEYCLIPS)
        write_parquet(tuples(), tuples_out, TUPLES)
    other, own = two_output_job(run_dir, ["results/tuples/fusion-naive-upstream-paper.parquet",
                                          "results/tuples/visual-upstream-paper.parquet"],
                                [tuples(verb="add"), tuples(verb="cut")], TUPLES)
    outside = run_dir / "elsewhere"
    outside.mkdir()
    shutil.copyfile(other, outside / "copy.parquet")
    cases = {}
    # The issue's two: a symbolic link to another output, a key-clip file copied to the tuple path.
    Path("results/tuples/link.parquet").symlink_to("fusion-naive-upstream-paper.parquet")
    cases["link"] = Path("results/tuples/link.parquet")
    shutil.copyfile(keyclips_out, "results/tuples/keyclips-copy.parquet")
    cases["keyclips-copy"] = Path("results/tuples/keyclips-copy.parquet")
    shutil.copyfile(keyclips_out, tuples_out)
    cases["keyclips-over-tuples"] = Path(tuples_out)
    # Variants: a link by an absolute path, a link out of results/ to a copy, a link to its own file.
    Path("results/tuples/abs-link.parquet").symlink_to(other.resolve())
    cases["abs-link"] = Path("results/tuples/abs-link.parquet")
    Path("results/tuples/out-link.parquet").symlink_to(outside / "copy.parquet")
    cases["out-link"] = Path("results/tuples/out-link.parquet")
    (outside / "own.parquet").write_bytes(own.read_bytes())
    own.unlink()
    own.symlink_to(outside / "own.parquet")  # the file written for this path, kept elsewhere: accepted
    cases["own-link"] = own
    cases["own"] = Path(keyclips_out)
    seen = {}
    for name, path in cases.items():
        status, job_says = verdicts(path)
        assert (status in ("misplaced", "damaged")) == (job_says != "read"), (name, status, job_says)
        seen[name] = status
        # Given with an absolute path, inspect says the same.
        assert inspection.inspect_file(run_dir / path)["status"] == status, name
    assert seen == {"link": "misplaced", "keyclips-copy": "misplaced", "keyclips-over-tuples": "misplaced",
                    "abs-link": "misplaced", "out-link": "misplaced", "own-link": "current", "own": "current"}


def test_a_file_built_in_a_folder_is_written_as_its_place_in_the_folder(run_dir):
    """A model folder is built beside its place and renamed into it: each Parquet file records the
    path it has once renamed, so that two files of one folder swapped are refused like two outputs."""
    import shutil

    from cookproc.core.errors import IntermediateError
    from cookproc.core.model_folders import building_folder
    from cookproc.core.parquet_io import read_table

    folder = Path("results/models/demo")
    job = Job([str(run_dir / "deploy.log")], {}, {"code": "c" * 32}, rule="deploy_demo", outputs=[str(folder)])
    for _ in range(2):  # built, then built again over the first
        with script_logging(job), building_folder(folder) as tmp:
            write_parquet(keyclips(), tmp / "a.parquet", KEYCLIPS)
            write_parquet(keyclips(3), tmp / "sub" / "b.parquet", KEYCLIPS)
    assert sorted(p.name for p in folder.parent.iterdir()) == ["demo"]
    assert stored(folder / "a.parquet")["written_as"] == "results/models/demo/a.parquet"
    assert stored(folder / "sub/b.parquet")["written_as"] == "results/models/demo/sub/b.parquet"
    assert read_table(folder / "a.parquet").num_rows == 4
    shutil.copyfile(folder / "sub/b.parquet", folder / "a.parquet")
    with pytest.raises(IntermediateError, match=r"written as results/models/demo/sub/b\.parquet by rule deploy_demo"):
        read_table(folder / "a.parquet")
