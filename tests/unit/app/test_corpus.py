"""Procedures over a corpus, the library (cookproc.app.corpus): shard assignment, the corpus files,
gathering shards, the partitioned dataset's _metadata and its checks, tidying a former shard count.
The rules that run it (rules/corpus.smk) on the fixture: tests/workflow/test_corpus_workflow.py."""
from __future__ import annotations

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from cookproc.app.corpus import (CORPUS_CLIPS, corpus_files, documents_table, gather_shards, iter_shards, partition_path,
                             read_manifest, shard_files, shard_of, tidy_dataset, write_dataset_metadata)
from cookproc.core.errors import InputError
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


def test_gather_refuses_a_video_in_two_shards(tmp_path):
    document = {"name": "v1", "extractor": "srl-heur-spacy", "segmentation": "cue", "clips": [
        {"clip_idx": 0, "start_s": None, "end_s": None, "source_lines": [1], "sentence": "chop it .", "is_key": True,
         "key_probability": None, "key_score": None, "verbs": ["chop"], "args": ["it"],
         "tuples": [{"verb": "chop", "args": ["it"]}]}]}
    table = documents_table([document], ["corpus/v1.txt"])
    assert table.schema == CORPUS_CLIPS and table.column("source").to_pylist() == ["v1.txt"]
    for name in ("a.parquet", "b.parquet"):
        write_parquet(table, tmp_path / name, CORPUS_CLIPS)
    assert gather_shards([tmp_path / "a.parquet"]).num_rows == 1
    with pytest.raises(SchemaError, match=r"video 'v1' is in two shards, .*a\.parquet and .*b\.parquet"):
        gather_shards([tmp_path / "a.parquet", tmp_path / "b.parquet"])


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
    with pytest.raises(InputError, match=r"holds \['shard=00001/notes.parquet'\] besides its partitions"):
        next(iter_shards(dataset))
    with pytest.raises(InputError, match=r"notes\.parquet: is not a partition of the corpus dataset"):
        tidy_dataset(dataset, 3, tmp_path / "damaged")
    (dataset / "shard=00001" / "notes.parquet").unlink()
    # A video in the wrong shard (a shard written under another count) is named.
    moved = next(v for v in VIDEOS if shard_of(v, 3) == 2)
    table = documents_table([one_clip_document(moved)], [f"{moved}.txt"])
    write_parquet(table, partition_path(dataset, 0), CORPUS_CLIPS)
    write_dataset_metadata(dataset, 3)
    with pytest.raises(SchemaError, match=rf"video '{moved}' belongs to shard 2 of 3, not 0"):
        list(iter_shards(dataset))
    with pytest.raises(InputError, match=r"shard 3 of 4 is missing from the corpus dataset"):
        write_dataset_metadata(dataset, 4)


def test_tidying_drops_a_former_shard_count_and_sets_damaged_files_aside(tmp_path):
    dataset = tmp_path / "results" / "procedures"
    write_shards(dataset, VIDEOS, 5)
    write_shards(dataset, VIDEOS, 2)  # the count went from 5 to 2: shards 2-4 are left over
    (dataset / "shard=00001" / "part-0.parquet.damaged").write_bytes(b"broken")
    done = tidy_dataset(dataset, 2, tmp_path / "damaged")
    assert done == [f"moved shard=00001/part-0.parquet.damaged to {tmp_path / 'damaged' / 'shard=00001-part-0.parquet.damaged'}",
                    *(f"deleted shard={k:05d}/part-0.parquet (a partition of a former shard count)" for k in (2, 3, 4))]
    assert sorted(p.name for p in dataset.iterdir()) == ["shard=00000", "shard=00001"]
    write_dataset_metadata(dataset, 2)
    assert read_with_pyarrow_dataset(dataset).num_rows == len(VIDEOS) * 2


def test_the_workflow_includes_the_corpus_rules():
    assert 'include: "rules/corpus.smk"' in (REPO / "Snakefile").read_text(encoding="utf-8")
