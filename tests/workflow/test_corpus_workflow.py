"""Procedures over a corpus as workflow rules (rules/corpus.smk) on the tiny fixture: the scatter over
shards into one partitioned dataset, read by pyarrow.dataset and DuckDB as the same rows as the
single-file export of a single-shard run (row for row; the exports byte for byte); adding a file
reruns one shard; a damaged shard is set aside and rebuilt; bad input names its file; the same
through SLURM (COOKPROC_SLURM_TEST=1). The library's side: tests/unit/app/test_corpus.py."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from cookproc.app.corpus import CORPUS_CLIPS, partition_path, read_manifest, shard_of
from fixtures import REPO, make_workdir, run_snakemake, write_tiny_upstream
from test_corpus import (FILES, PANCAKES, UNPUNCTUATED_SRT, UNTIMED, duckdb_rows, read_with_pyarrow_dataset,
                         snapshot, write_corpus)

ADDED = ("vidG07.txt", "wash the lettuce in cold water .\nserve it .\n")
TARGET = "corpus_all"
DATASET = "results/corpus/tiny/procedures"
EXPORT = "results/corpus/tiny/procedures.parquet"  # the single-file export (today's gathered file)


def partition(work, shard):
    return partition_path(work / DATASET, shard)


def same_data(a, b) -> bool:
    """Two Parquet files hold the same rows, schema and column digests. (Not the same bytes: each
    carries the provenance of the job that wrote it, whose settings, e.g. corpus.shards, differ.)"""
    from cookproc.core import integrity

    ta, tb = pq.read_table(a), pq.read_table(b)
    digests = [integrity.stored_digests(pq.read_metadata(p).metadata) for p in (a, b)]
    return ta.to_pylist() == tb.to_pylist() and ta.schema.remove_metadata() == tb.schema.remove_metadata() \
        and digests[0] is not None and digests[0] == digests[1]


def read_with_duckdb(dataset):
    import duckdb

    with duckdb.connect() as con:
        table = con.sql(f"SELECT * EXCLUDE (shard) FROM read_parquet('{dataset}/*/*.parquet', hive_partitioning = true) "
                        "ORDER BY video_id, clip_idx").to_arrow_table()
    return table


def corpus_workdir(root, name, upstream, shards, files=FILES, single_file=False):
    """A working directory whose corpus is its folder corpus/ (relative: a copy keeps its inputs).
    The SRL extractor gives the tuples and its rule the key clips: these tests are about shards (the
    trained models score each video alone, tests/unit/keyclips/test_keyclip_deploy.py and
    tests/unit/supervised/test_tuple_deploy.py; end to end: tests/workflow/test_procedures_workflow.py)."""
    work = make_workdir(root / name, upstream, {"corpus": {"name": "tiny", "dir": "corpus", "shards": shards,
                                                          "single_file": single_file},
                                               "procedures": {"keyclip_model": None, "tuple_model": None}})
    write_corpus(work / "corpus", files)
    return work


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    return write_tiny_upstream(tmp_path_factory.mktemp("corpus-upstream"))


@pytest.fixture(scope="module")
def three_shards(tmp_path_factory, upstream):
    """The fixture corpus built with 3 shards (one job each), with its single-file export."""
    root = tmp_path_factory.mktemp("corpus3")
    work = corpus_workdir(root, "work", upstream, shards=3, single_file=True)
    run_snakemake(work, TARGET)
    return work


@pytest.mark.slow
def test_three_shards_read_as_one_table_what_one_shard_gives(tmp_path, upstream, three_shards):
    one = corpus_workdir(tmp_path, "one", upstream, shards=1)
    run_snakemake(one, EXPORT)
    for s in range(3):  # every shard had work
        assert pq.read_table(partition(three_shards, s)).num_rows > 0
    single = pq.read_table(one / EXPORT)  # the file the gather job wrote before the dataset
    assert single.schema == CORPUS_CLIPS
    # The dataset, read as one table by pyarrow.dataset and by DuckDB, is the single file row for row.
    by_pyarrow = read_with_pyarrow_dataset(three_shards / DATASET)
    assert by_pyarrow.to_pylist() == single.to_pylist()
    assert read_with_duckdb(three_shards / DATASET).to_pylist() == single.to_pylist()
    assert ds.dataset(three_shards / DATASET, partitioning="hive").schema.field("shard").type == "int32"
    # The exports of 3 shards and of 1 hold the same data.
    assert same_data(three_shards / EXPORT, one / EXPORT)
    assert [p["rows"] for p in read_manifest(three_shards / DATASET)["partitions"]] == [
        pq.read_metadata(partition(three_shards, s)).num_rows for s in range(3)]

    rows = {}
    for row in single.to_pylist():
        rows.setdefault(row["video_id"], []).append(row)
    assert sorted(rows) == sorted(name.split(".")[0] for name in FILES)
    # Untimed transcripts: one clip per line, in order, without times.
    assert [r["sentence"] for r in rows["vidA01"]] == UNTIMED.splitlines()
    assert {(r["start_s"], r["end_s"], r["segmentation"]) for r in rows["vidA01"]} == {(None, None, "cue")}
    assert [r["source_lines"] for r in rows["vidA01"]] == [[1], [2], [3], [4]]
    # Unpunctuated captions: one clip per cue (no 15-second runs); punctuated ones: per sentence.
    assert [r["sentence"] for r in rows["vidB02"]] == PANCAKES and rows["vidB02"][1]["start_s"] == 4.0
    assert [r["sentence"] for r in rows["vidF06"]] == ["Slice the cucumber thinly.", "Then toss everything."]
    assert [r["start_s"] for r in rows["vidD04"]] == [1.0, 9.0]
    # The SRL heuristics' decisions, and no key probability (they decide by rule).
    assert [r["is_key"] for r in rows["vidA01"]] == [False, True, True, False]
    assert rows["vidA01"][1]["verbs"] == ["chop"] and rows["vidA01"][1]["tuples"][0]["verb"] == "chop"
    assert {r["key_probability"] for rs in rows.values() for r in rs} == {None}
    assert {r["extractor"] for rs in rows.values() for r in rs} == {"srl-heur-spacy"}


@pytest.mark.slow
def test_the_corpus_report_reads_the_dataset(three_shards):
    from cookproc.app.report_pages import corpus_summary_html

    run_snakemake(three_shards, "results/report/corpus/tiny.html")
    page = (three_shards / "results/report/corpus/tiny.html").read_text(encoding="utf-8")
    # Shard by shard, the same summary as the whole table at once.
    assert corpus_summary_html(pq.read_table(three_shards / EXPORT), top=20) in page
    assert f"5 videos, {pq.read_metadata(three_shards / EXPORT).num_rows} clips" in page


@pytest.mark.slow
def test_markdown_per_video_on_request(three_shards):
    run_snakemake(three_shards, "results/corpus/tiny/markdown")
    folder = three_shards / "results/corpus/tiny/markdown"
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(f"{name.split('.')[0]}.md" for name in FILES)
    table = pq.read_table(three_shards / EXPORT).to_pylist()
    for video in ("vidA01", "vidB02"):
        text = (folder / f"{video}.md").read_text(encoding="utf-8")
        key = [r for r in table if r["video_id"] == video and r["is_key"]]
        assert re.findall(r"^(\d+)\. ", text, re.MULTILINE) == [str(i) for i in range(1, len(key) + 1)]
        assert all(f"*{r['sentence']}*" in text for r in key)
    assert "1. **line 2** chop" in (folder / "vidA01.md").read_text(encoding="utf-8")
    assert "**00:00:04.0–00:00:08.0** add" in (folder / "vidB02.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_adding_a_file_reruns_only_its_shard(tmp_path, three_shards):
    from test_rerun import planned

    work = shutil.copytree(three_shards, tmp_path / "work", symlinks=True)  # mtimes, .snakemake metadata kept
    before = {s: partition(work, s).read_bytes() for s in range(3)}
    proc = run_snakemake(work, TARGET, "--dry-run")
    assert planned(proc.stdout + proc.stderr) == {}

    (work / "corpus" / ADDED[0]).write_text(ADDED[1], encoding="utf-8")
    proc = run_snakemake(work, TARGET, "--dry-run")
    log = proc.stdout + proc.stderr
    assert planned(log) == {"corpus_shard": 1, "corpus_dataset": 1, "corpus_export": 1, "corpus_all": 1}
    shard = shard_of("vidG07", 3)
    assert set(re.findall(r"output: \S*/shards/shard=(\d+)\.parquet", log)) == {f"{shard:05d}"}
    run_snakemake(work, TARGET)
    assert "vidG07" in read_with_pyarrow_dataset(work / DATASET).column("video_id").to_pylist()
    # Only that shard's rows changed. (Every partition is written again with the dataset, which is
    # replaced as a whole: their footers record the shard files they were made from.)
    after = {s: partition(work, s).read_bytes() for s in range(3)}
    assert [s for s in range(3) if pq.read_table(partition(work, s)).to_pylist()
            != pq.read_table(pa.BufferReader(before[s])).to_pylist()] == [shard]
    assert all(after[s] != before[s] for s in range(3))


@pytest.mark.slow
def test_fewer_shards_leave_no_partition_of_the_former_count(tmp_path, upstream, three_shards):
    work = shutil.copytree(three_shards, tmp_path / "work", symlinks=True)
    make_workdir(work, upstream, {"corpus": {"name": "tiny", "dir": "corpus", "shards": 2, "single_file": True},
                                  "procedures": {"keyclip_model": None, "tuple_model": None}})
    run_snakemake(work, TARGET)
    # (Snakemake marks a folder output with a hidden .snakemake_timestamp, which no reader sees.)
    assert sorted(p.name for p in (work / DATASET).iterdir() if p.name != ".snakemake_timestamp") == [
        "_metadata", "shard=00000", "shard=00001"]
    assert read_with_pyarrow_dataset(work / DATASET).to_pylist() == pq.read_table(three_shards / EXPORT).to_pylist()
    assert same_data(work / EXPORT, three_shards / EXPORT)


@pytest.mark.slow
def test_a_damaged_shard_is_set_aside_and_rebuilt(tmp_path, three_shards):
    work = shutil.copytree(three_shards, tmp_path / "work", symlinks=True)
    intact = partition(work, 1).read_bytes()
    damaged = bytearray(intact)
    damaged[16] ^= 0xFF  # inside the first column chunk (the footer's end holds the provenance text)
    partition(work, 1).write_bytes(bytes(damaged))
    # (A file changed inside the dataset folder does not change the folder's time: the page, built
    # from the intact dataset by an earlier test, is made again on request.)
    proc = run_snakemake(work, "results/report/corpus/tiny.html", "--forcerun", "report_corpus", check=False)
    assert proc.returncode != 0
    log = (work / "logs/report/report_corpus/tiny.log").read_text(encoding="utf-8")
    assert log.splitlines()[-1].startswith("rule report_corpus: error: results/corpus/tiny/procedures/shard=00001/"
                                           "part-0.parquet is damaged, and so is its corpus dataset (")
    assert log.splitlines()[-1].endswith("moved results/corpus/tiny/procedures (all of it) aside to "
                                         "results/corpus/tiny/procedures.damaged; run `snakemake` again to rebuild it")
    # The whole dataset is set aside: no reader sees it with a part missing.
    assert not (work / DATASET).exists()
    assert (work / f"{DATASET}.damaged/shard=00001/part-0.parquet").read_bytes() == bytes(damaged)
    # The next run builds the dataset again from the shards' files (no shard's job reruns), and the page.
    proc = run_snakemake(work, "results/report/corpus/tiny.html")
    assert "corpus_shard" not in proc.stdout + proc.stderr
    assert partition(work, 1).read_bytes() == intact
    assert read_with_pyarrow_dataset(work / DATASET).to_pylist() == pq.read_table(three_shards / EXPORT).to_pylist()


@pytest.mark.slow
def test_a_bad_file_stops_its_shard_naming_the_file_and_line(tmp_path, upstream):
    bad = UNPUNCTUATED_SRT.replace("00:00:08,000 -->", "00:00:0x,000 -->")
    work = corpus_workdir(tmp_path, "work", upstream, shards=3, files={**FILES, "vidB02.srt": bad})
    proc = run_snakemake(work, TARGET, check=False)
    assert proc.returncode != 0
    log = (work / f"logs/corpus/corpus_shard/tiny/{shard_of('vidB02', 3):05d}-of-3.log").read_text(encoding="utf-8")
    assert "vidB02.srt, line 10: cue 3: bad timing '00:00:0x,000 --> 00:00:12,000'" in log
    assert not (work / DATASET).exists()  # no dataset at all rather than one with a part missing


@pytest.mark.slow
def test_a_rerun_in_which_a_new_file_fails_leaves_the_dataset_as_it_was(tmp_path, three_shards):
    """Issue 55: a corpus rerun in which one new file failed (a NUL byte) deleted that shard's
    part-0.parquet and kept the old _metadata: DuckDB read part of the corpus and
    pyarrow.dataset.parquet_dataset(_metadata) failed. The dataset is replaced as a whole or not at
    all: it stays as it was, byte for byte, until the file is fixed."""
    work = shutil.copytree(three_shards, tmp_path / "work", symlinks=True)
    before = snapshot(work / DATASET)
    rows = duckdb_rows(work / DATASET)
    shard = shard_of("vidG07", 3)
    (work / "corpus" / "vidG07.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nwash the \x00lettuce\n")
    proc = run_snakemake(work, TARGET, check=False)
    assert proc.returncode != 0
    line = ("rule corpus_shard: error: corpus/vidG07.srt, line 3: cue 1: control character U+0000 in the text; remove it "
            "(NUL bytes usually mean a UTF-16 file: save it as UTF-8)")
    assert f"\n{line}\n" in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    assert (work / f"logs/corpus/corpus_shard/tiny/{shard:05d}-of-3.log").read_text().splitlines()[-1] == line
    assert snapshot(work / DATASET) == before and duckdb_rows(work / DATASET) == rows
    assert ds.parquet_dataset(work / DATASET / "_metadata", partitioning="hive").count_rows() == rows[0]
    assert read_with_pyarrow_dataset(work / DATASET).to_pylist() == pq.read_table(three_shards / EXPORT).to_pylist()
    # Fixed: the dataset is the new one, whole.
    (work / "corpus" / "vidG07.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nwash the lettuce.\n")
    run_snakemake(work, TARGET)
    assert duckdb_rows(work / DATASET) == (rows[0] + 1, rows[1] + 1)
    assert ds.parquet_dataset(work / DATASET / "_metadata", partitioning="hive").count_rows() == rows[0] + 1


@pytest.mark.slow
def test_ctrl_c_during_corpus_all_is_one_line_a_job_and_leaves_the_dataset(tmp_path, three_shards):
    """Issue 55: Ctrl-C during `snakemake corpus_all` showed a KeyboardInterrupt traceback from the
    shard script, twice. Ctrl-C (SIGINT to Snakemake's process group, as a terminal sends it) while
    two shard jobs run: one line each, no traceback, the dataset as it was."""
    import signal
    import subprocess
    import sys
    import time

    work = shutil.copytree(three_shards, tmp_path / "work", symlinks=True)
    before = snapshot(work / DATASET)
    added = [name for name in ("vidG07", "vidH08", "vidJ10", "vidK11", "vidL12", "vidM13")
             if shard_of(name, 3) in (0, 1)]
    for name in added:  # work for two shards' jobs
        (work / "corpus" / f"{name}.txt").write_text("wash the lettuce .\nserve it .\n", encoding="utf-8")
    logs = [work / f"logs/corpus/corpus_shard/tiny/{k:05d}-of-3.log" for k in (0, 1)]
    for log in logs:  # the first run's: Ctrl-C comes once both jobs of this run have started
        log.unlink()
    command = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "--directory",
               str(work), "-c2", TARGET]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while not all(log.exists() and "started at" in log.read_text() for log in logs):
        assert proc.poll() is None and time.monotonic() < deadline, "the shard jobs did not start"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    line = "rule corpus_shard: interrupted (Ctrl-C): the files it was writing were not written; run it again"
    for log in logs:  # each job: one line, in its log and Snakemake's output
        assert log.read_text().splitlines()[-1] == line and "Traceback" not in log.read_text()
    assert f"\n{line}\n" in output
    assert snapshot(work / DATASET) == before
    assert not list((work / "results/corpus/tiny/shards").glob(".*"))  # no temporary file left


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("COOKPROC_SLURM_TEST") != "1",
                    reason="needs a running SLURM cluster (bash .ci/slurm/start.sh; COOKPROC_SLURM_TEST=1)")
def test_shards_on_slurm_give_the_dataset_a_local_run_gives(tmp_path, upstream, three_shards):
    from test_slurm import assert_ran_on_slurm, run_on_slurm, submitted_jobs

    work = corpus_workdir(tmp_path, "slurm", upstream, shards=3, single_file=True)
    log = run_on_slurm(work, "--snakefile", str(REPO / "Snakefile"), "--max-threads", str(os.cpu_count()), TARGET)
    submitted = submitted_jobs(log)
    assert sorted(submitted.values()) == ["corpus_dataset", "corpus_export", "corpus_shard", "corpus_shard",
                                          "corpus_shard"]
    assert_ran_on_slurm(submitted, gpu_rules=set())
    local = pq.read_table(three_shards / EXPORT).to_pylist()
    assert read_with_pyarrow_dataset(work / DATASET).to_pylist() == local
    assert read_with_duckdb(work / DATASET).to_pylist() == local
    for s in range(3):
        assert partition(work, s).read_bytes() == partition(three_shards, s).read_bytes()
    assert (work / DATASET / "_metadata").read_bytes() == (three_shards / DATASET / "_metadata").read_bytes()
    assert (work / EXPORT).read_bytes() == (three_shards / EXPORT).read_bytes()
