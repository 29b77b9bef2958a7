"""Procedures over a corpus, the library (cookproc.app.corpus): shard assignment, the corpus files,
the partitioned dataset built from the shards' files as a whole (or not at all), its _metadata and
its checks, a damaged dataset set aside as a whole.
The rules that run it (rules/corpus.smk) on the fixture: tests/workflow/test_corpus_workflow.py."""
from __future__ import annotations

from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from cookproc.app.corpus import (CORPUS_CLIPS, build_dataset, corpus_files, documents_table, iter_shards,
                                 partition_path, read_dataset, read_manifest, set_aside_leftovers, shard_files, shard_of,
                                 write_dataset_metadata)
from cookproc.core.errors import InputError, IntermediateError
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import CLIP_KEY, SchemaError
from fixtures import REPO

# One file per kind the corpus reads; ids chosen so that each of 3 shards gets at least one video.
UNTIMED = "hi guys , welcome back .\nchop the onions and the garlic .\nheat the oil in a large pot .\nthanks for watching .\n"
TIMED = "[00:00:01] Stir the sauce.\n[00:00:09] Add the salt and stir again.\n"
PANCAKES = ["so today we are making pancakes", "add the flour and a pinch of salt", "mix everything until smooth",
            "heat a pan over medium heat", "pour a ladle of batter into the pan", "serve with maple syrup"]
UNPUNCTUATED_SRT = "\n".join(f"{i + 1}\n00:00:{4 * i:02d},000 --> 00:00:{4 * i + 4:02d},000\n{text}\n"
                             for i, text in enumerate(PANCAKES))
PUNCTUATED_VTT = ("WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nSlice the cucumber\n\n"
                  "00:00:04.000 --> 00:00:07.000\nthinly. Then toss everything.\n")
FILES = {"vidA01.txt": UNTIMED, "vidC03.txt": UNTIMED.replace("onions", "carrots"), "vidB02.srt": UNPUNCTUATED_SRT,
         "vidD04.txt": TIMED, "vidF06.vtt": PUNCTUATED_VTT}


def read_with_pyarrow_dataset(dataset):
    """The dataset as pyarrow.dataset reads the folder (hive partitioning), without its shard column."""
    table = ds.dataset(dataset, partitioning="hive", format="parquet").to_table()
    return table.drop(["shard"]).sort_by([(k, "ascending") for k in CLIP_KEY])


def write_corpus(folder, files=FILES):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_shards_depend_on_the_video_id_alone():
    assert [shard_of(v, 3) for v in ("vidA01", "vidB02", "vidF06")] == [1, 0, 2]  # fixed, not per process
    assert {shard_of(v, 1) for v in ("a", "b", "c")} == {0}
    files = [f"v{i}.txt" for i in range(40)]
    before = {s: shard_files(files, s, 4) for s in range(4)}
    after = {s: shard_files(files + ["new.txt"], s, 4) for s in range(4)}
    # Adding a file changes exactly one shard's list: the one it hashes to.
    assert [s for s in range(4) if before[s] != after[s]] == [shard_of("new", 4)]
    assert sorted(str(p) for s in range(4) for p in before[s]) == sorted(files)  # each file in one shard
    with pytest.raises(ValueError, match="shard 3 does not exist: there are 3 shards"):
        shard_files(files, 3, 3)


def test_corpus_files_one_per_video(tmp_path):
    folder = write_corpus(tmp_path / "c")
    (folder / "notes.md").write_text("not part of the corpus")
    assert [p.name for p in corpus_files(folder)] == sorted(FILES)
    assert [p.name for p in corpus_files(folder, ["srt"])] == ["vidB02.srt"]
    (folder / "vidA01.srt").write_text(UNPUNCTUATED_SRT)
    with pytest.raises(InputError, match=r"vidA01\.txt: video id 'vidA01' has two files, vidA01\.srt and vidA01\.txt"):
        corpus_files(folder)
    with pytest.raises(InputError, match="the corpus folder does not exist"):
        corpus_files(tmp_path / "absent")
    with pytest.raises(InputError, match="no transcript or subtitle file"):
        corpus_files(write_corpus(tmp_path / "empty", {}))


def test_a_shard_file_holding_a_video_of_another_shard_is_refused(tmp_path):
    document = {"name": "v1", "extractor": "srl-heur-spacy", "segmentation": "cue", "clips": [
        {"clip_idx": 0, "start_s": None, "end_s": None, "source_lines": [1], "sentence": "chop it .", "is_key": True,
         "key_probability": None, "key_score": None, "verbs": ["chop"], "args": ["it"],
         "tuples": [{"verb": "chop", "args": ["it"]}]}]}
    table = documents_table([document], ["corpus/v1.txt"])
    assert table.schema == CORPUS_CLIPS and table.column("source").to_pylist() == ["v1.txt"]
    empty = documents_table([], [])
    shard = shard_of("v1", 2)
    for k in range(2):
        write_parquet(table if k != shard else empty, tmp_path / f"{k}.parquet", CORPUS_CLIPS)
    with pytest.raises(SchemaError, match=rf"{1 - shard}\.parquet: video 'v1' belongs to shard {shard} of 2, not "
                                          rf"{1 - shard}"):
        build_dataset([tmp_path / "0.parquet", tmp_path / "1.parquet"], tmp_path / "dataset", tmp_path / "damaged")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.parquet", "1.parquet"]  # nothing built, nothing left


def one_clip_document(video_id):
    return {"name": video_id, "extractor": "srl-heur-spacy", "segmentation": "cue", "clips": [
        {"clip_idx": i, "start_s": None, "end_s": None, "source_lines": [i + 1], "sentence": f"chop {video_id} .",
         "is_key": i == 0, "key_probability": None, "key_score": None, "verbs": ["chop"], "args": [video_id],
         "tuples": [{"verb": "chop", "args": [video_id]}]} for i in range(2)]}


def write_shards(dataset, video_ids, n_shards):
    """A corpus dataset's partitions as the shard jobs write them (no _metadata yet)."""
    for shard in range(n_shards):
        mine = sorted(v for v in video_ids if shard_of(v, n_shards) == shard)
        table = documents_table([one_clip_document(v) for v in mine], [f"{v}.txt" for v in mine])
        write_parquet(table, partition_path(dataset, shard), CORPUS_CLIPS, sort_keys=CLIP_KEY)


VIDEOS = [f"video{i:02d}" for i in range(12)]


def test_the_dataset_summary_lists_its_partitions_and_is_deterministic(tmp_path):
    dataset = tmp_path / "results" / "procedures"
    write_shards(dataset, VIDEOS, 3)
    manifest = write_dataset_metadata(dataset, 3)
    rows = [sum(shard_of(v, 3) == k for v in VIDEOS) * 2 for k in range(3)]
    assert manifest == {"shards": 3, "partitions": [
        {"shard": k, "path": f"shard={k:05d}/part-0.parquet", "rows": rows[k]} for k in range(3)]}
    assert read_manifest(dataset) == manifest
    first = (dataset / "_metadata").read_bytes()
    write_dataset_metadata(dataset, 3)
    assert (dataset / "_metadata").read_bytes() == first
    # pyarrow's summary file: every row group, with the file it lies in.
    summary = pq.read_metadata(dataset / "_metadata")
    assert summary.num_rows == len(VIDEOS) * 2
    assert {summary.row_group(i).column(0).file_path for i in range(summary.num_row_groups)} == {
        f"shard={k:05d}/part-0.parquet" for k in range(3) if rows[k]}
    assert ds.parquet_dataset(dataset / "_metadata", partitioning="hive").count_rows() == len(VIDEOS) * 2
    # Read shard by shard, each verified; together, every row once.
    shards = list(iter_shards(dataset))
    assert [k for k, _ in shards] == [0, 1, 2]
    assert sorted(v for _, t in shards for v in t.column("video_id").to_pylist()) == sorted(VIDEOS * 2)
    assert [t.column_names for _, t in iter_shards(dataset, columns=["is_key"])] == [["is_key"]] * 3


def test_the_dataset_refuses_what_is_not_its_partitions(tmp_path):
    dataset = tmp_path / "results" / "procedures"
    write_shards(dataset, VIDEOS, 3)
    write_dataset_metadata(dataset, 3)
    (dataset / "shard=00001" / "notes.parquet").write_bytes(b"PAR1")
    with pytest.raises(InputError, match=r"holds \['shard=00001/notes.parquet'\] besides its partitions; move it out"):
        next(iter_shards(dataset))
    with pytest.raises(InputError, match=r"notes\.parquet: is not a partition of the corpus dataset"):
        set_aside_leftovers(dataset, tmp_path / "damaged")
    (dataset / "shard=00001" / "notes.parquet").unlink()
    # A video in the wrong shard (a shard written under another count) is named.
    moved = next(v for v in VIDEOS if shard_of(v, 3) == 2)
    table = documents_table([one_clip_document(moved)], [f"{moved}.txt"])
    write_parquet(table, partition_path(dataset, 0), CORPUS_CLIPS)
    write_dataset_metadata(dataset, 3)
    with pytest.raises(IntermediateError, match=rf"\(video '{moved}' belongs to shard 2 of 3, not 0\)"):
        list(iter_shards(dataset))
    with pytest.raises(InputError, match=r"shard 3 of 4 is missing from the corpus dataset"):
        write_dataset_metadata(dataset, 4)


def staged_shards(folder, video_ids, n_shards):
    """The shard jobs' files (results/corpus/<name>/shards/shard=NNNNN.parquet), as they write them."""
    paths = []
    for shard in range(n_shards):
        mine = sorted(v for v in video_ids if shard_of(v, n_shards) == shard)
        table = documents_table([one_clip_document(v) for v in mine], [f"{v}.txt" for v in mine])
        paths.append(folder / f"shard={shard:05d}.parquet")
        write_parquet(table, paths[-1], CORPUS_CLIPS, sort_keys=CLIP_KEY)
    return paths


def snapshot(folder):
    """Every file a reader of the folder sees, with its bytes (not Snakemake's hidden .snakemake_timestamp)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".snakemake_timestamp"}


def test_a_new_dataset_replaces_a_former_shard_count_and_sets_old_damaged_files_aside(tmp_path):
    dataset = tmp_path / "results" / "procedures"
    write_shards(dataset, VIDEOS, 5)  # a dataset of 5 shards, one of its files set aside by an older version
    (dataset / "shard=00001" / "part-0.parquet.damaged").write_bytes(b"broken")
    manifest, done = build_dataset(staged_shards(tmp_path / "shards", VIDEOS, 2), dataset, tmp_path / "damaged")
    assert done == [f"moved shard=00001/part-0.parquet.damaged to {tmp_path / 'damaged' / 'shard=00001-part-0.parquet.damaged'}"]
    assert sorted(p.name for p in dataset.iterdir()) == ["_metadata", "shard=00000", "shard=00001"]
    assert manifest["shards"] == 2 and read_manifest(dataset) == manifest
    assert read_with_pyarrow_dataset(dataset).num_rows == len(VIDEOS) * 2
    assert sorted(p.name for p in dataset.parent.iterdir()) == ["procedures"]  # no temporary folder left
    # The same shard files give the same bytes.
    first = snapshot(dataset)
    build_dataset(staged_shards(tmp_path / "shards", VIDEOS, 2), dataset, tmp_path / "damaged")
    assert snapshot(dataset) == first


def duckdb_rows(dataset):
    import duckdb

    with duckdb.connect() as con:
        return con.sql(f"SELECT count(*), count(DISTINCT video_id) FROM read_parquet('{dataset}/*/*.parquet', "
                       "hive_partitioning = true)").fetchall()[0]


@pytest.mark.parametrize("failure", ["bad shard file", "missing shard file", "write fails", "ctrl-c", "disk full"])
def test_a_failed_rebuild_leaves_the_dataset_as_it_was(tmp_path, monkeypatch, failure):
    """Issue 55: a corpus rerun in which one new file failed deleted that shard's part-0.parquet and
    kept the old _metadata: DuckDB read 490 rows of 32 videos instead of 596 of 40, and
    pyarrow.dataset.parquet_dataset(_metadata) failed. The dataset is replaced as a whole or not at
    all: whatever fails on the way, it stays as it was, readable by every engine."""
    import errno

    import cookproc.app.corpus as corpus
    import cookproc.core.parquet_io as parquet_io

    monkeypatch.chdir(tmp_path)
    dataset = tmp_path / "results" / "corpus" / "c" / "procedures"
    old = staged_shards(tmp_path / "results" / "corpus" / "c" / "shards", VIDEOS[:8], 3)
    build_dataset(old, dataset, tmp_path / "damaged")
    before = snapshot(dataset)
    assert duckdb_rows(dataset) == (16, 8)
    new = staged_shards(tmp_path / "new", VIDEOS, 3)  # four more videos
    if failure == "bad shard file":
        new[1].write_bytes(b"\x00" * 100)
        expected = IntermediateError
    elif failure == "missing shard file":
        new[2].unlink()
        expected = FileNotFoundError
    else:
        real = parquet_io.write_parquet
        raised = {"write fails": OSError(errno.EIO, "I/O error"), "ctrl-c": KeyboardInterrupt(),
                  "disk full": OSError(errno.ENOSPC, "No space left on device")}[failure]
        expected = type(raised) if failure == "ctrl-c" else Exception

        def write_parquet(table, path, *args, **kwargs):
            if "shard=00002" in str(path):
                raise raised
            return real(table, path, *args, **kwargs)

        monkeypatch.setattr(corpus, "write_parquet", write_parquet)
    with pytest.raises(expected):
        build_dataset(new, dataset, tmp_path / "damaged")
    assert snapshot(dataset) == before
    assert sorted(p.name for p in dataset.parent.iterdir()) == ["procedures", "shards"]  # no half-built folder
    assert duckdb_rows(dataset) == (16, 8)
    assert ds.parquet_dataset(dataset / "_metadata", partitioning="hive").count_rows() == 16
    assert sorted(read_dataset(dataset).column("video_id").to_pylist()) == sorted(VIDEOS[:8] * 2)
    # Once it succeeds, the new dataset is there as a whole.
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    build_dataset(staged_shards(tmp_path / "new", VIDEOS, 3), dataset, tmp_path / "damaged")
    assert duckdb_rows(dataset) == (24, 12)
    assert ds.parquet_dataset(dataset / "_metadata", partitioning="hive").count_rows() == 24


@pytest.mark.parametrize("change", ["damaged partition", "deleted partition", "swapped partitions", "no _metadata"])
def test_a_damaged_dataset_is_set_aside_as_a_whole(tmp_path, monkeypatch, change):
    """A reader that finds a partition damaged, missing or swapped sets the whole dataset aside (not
    the one file: the dataset would be left with a part missing), so that the next run builds it
    again from the shards' files; the message names the part that failed."""
    import shutil

    monkeypatch.chdir(tmp_path)
    dataset = Path("results/corpus/c/procedures")
    build_dataset(staged_shards(Path("results/corpus/c/shards"), VIDEOS, 3), dataset, "damaged")
    part = partition_path(dataset, 1)
    if change == "damaged partition":
        data = bytearray(part.read_bytes())
        data[16] ^= 0xFF
        part.write_bytes(bytes(data))
        message = r"shard=00001/part-0\.parquet is damaged, and so is its corpus dataset \("
    elif change == "deleted partition":
        part.unlink()
        message = (r"shard=00001/part-0\.parquet is missing \(the dataset's _metadata lists "
                   r"\['shard=00001/part-0\.parquet'\]\)")
    elif change == "swapped partitions":
        shutil.copyfile(partition_path(dataset, 2), part)  # written outside a job: its videos betray it
        message = r"shard=00001/part-0\.parquet is damaged, and so is its corpus dataset \(video '\w+' belongs to shard 2"
    else:
        (dataset / "_metadata").unlink()
        message = r"_metadata is missing"
    with pytest.raises(IntermediateError, match=message + r".*: moved results/corpus/c/procedures \(all of it\) aside "
                                                          r"to results/corpus/c/procedures\.damaged; run `snakemake` "
                                                          r"again to rebuild it"):
        list(iter_shards(dataset))
    assert not dataset.exists() and Path("results/corpus/c/procedures.damaged/shard=00000/part-0.parquet").exists()


@pytest.mark.parametrize("exchange", [True, False])
def test_a_folder_is_replaced_in_one_step(tmp_path, monkeypatch, exchange):
    """replace_folder: the old folder's content or the new one's at its path, the old one removed;
    where the system cannot exchange two paths in one step, by two renames."""
    from cookproc.core import model_folders

    if not exchange:
        monkeypatch.setattr(model_folders, "_exchange", lambda a, b: False)
    old, new = tmp_path / "data", tmp_path / ".data.new"
    for folder, text in ((old, "old"), (new, "new")):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "f.txt").write_text(text)
    model_folders.replace_folder(new, old)
    assert (old / "sub" / "f.txt").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["data"]
    fresh = tmp_path / ".fresh"
    fresh.mkdir()
    model_folders.replace_folder(fresh, tmp_path / "none-yet")
    assert (tmp_path / "none-yet").is_dir() and not fresh.exists()


def test_the_workflow_includes_the_corpus_rules():
    assert 'include: "rules/corpus.smk"' in (REPO / "Snakefile").read_text(encoding="utf-8")
