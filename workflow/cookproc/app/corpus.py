"""Procedures over a corpus: a folder of transcripts or subtitles, one file per video, extracted in
shards into one partitioned Parquet dataset with one row per clip (rules/corpus.smk).

A video goes to the shard its id hashes to (:func:`shard_of`: BLAKE2b of the id modulo the shard
count), not to a position in the sorted file list, so adding a file changes one shard's inputs
and leaves every other shard's, and its result, as they were. Each shard's rows are exactly the
clips of :func:`cookproc.app.procedures.procedure_documents` (validated procedure documents), so the
dataset holds the same clips a single file gives through ``cookproc extract`` or rule
procedures_extract with the same settings.

The dataset is a folder, hive-style: ``<dataset>/shard=00003/part-0.parquet`` per shard, and
``<dataset>/_metadata``, the shards' footers collected by :func:`write_dataset_metadata` (pyarrow's
summary file, whose key-value metadata also holds a manifest: the shard count and each partition's
file and rows). ``pyarrow.dataset.dataset(folder, partitioning="hive")``, DuckDB
(``read_parquet('<dataset>/*/*.parquet', hive_partitioning = true)``) and Spark read it as one table with a
``shard`` column; nothing ever holds more than one shard: :func:`iter_shards` reads it shard by
shard, verified.

The dataset is replaced as a whole or not at all. Each shard's job writes its own file beside the
dataset (``<corpus>/shards/shard=00003.parquet``), and :func:`build_dataset` (rule
corpus_dataset, once every shard's job has succeeded) writes a new dataset folder from them, one
shard at a time, and puts it in the place of the old one in one step
(:func:`cookproc.core.model_folders.replace_folder`): a shard whose file fails (a bad transcript, a
full disk, Ctrl-C) leaves the dataset as it was, never with a part missing or a summary of other
partitions. A reader that finds the dataset damaged (a partition that fails its checks, one missing
or added) sets the whole folder aside, so that the next run builds it again.

This module needs neither torch nor spaCy: the dataset's summary, the Markdown and the report run in
the light environment.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cookproc.core import integrity
from cookproc.core.errors import InputError
from cookproc.core.model_folders import building_folder
from cookproc.core.parquet_io import (DECODER_ERRORS, atomic_output, atomic_write_text, read_parquet, refuse_damaged,
                                      verify, write_parquet)
from cookproc.core.schemas import CLIP_KEY, STRING_LIST, SchemaError, conform, to_table
from cookproc.app.documents import steps_markdown
from cookproc.app.cues import format_time
from cookproc.app.subtitles import SUBTITLE_EXTENSIONS

#: One row per clip of every video of a corpus.
CORPUS_CLIPS = pa.schema(
    [
        # The file's name without its extension.
        pa.field("video_id", pa.string(), nullable=False),
        # 0-based position of the clip in its video (time order; file order when untimed).
        pa.field("clip_idx", pa.int32(), nullable=False),
        # The file the clip was read from, by name within the corpus folder.
        pa.field("source", pa.string(), nullable=False),
        # Times in seconds (next clip's start; the last clip's end of speech); null in untimed transcripts.
        pa.field("start_s", pa.float64(), nullable=True),
        pa.field("end_s", pa.float64(), nullable=True),
        # 1-based lines of the file the clip came from.
        pa.field("source_lines", pa.list_(pa.int32()), nullable=False),
        pa.field("sentence", pa.string(), nullable=False),
        pa.field("is_key", pa.bool_(), nullable=False),
        # P(key step) from the trained key-clip selector; null when the SRL extractor's rule decided.
        pa.field("key_probability", pa.float64(), nullable=True),
        # The extractor's own confidence, not a probability (the tagger's); null for spaCy.
        pa.field("key_score", pa.float64(), nullable=True),
        pa.field("verbs", STRING_LIST, nullable=False),
        pa.field("args", STRING_LIST, nullable=False),
        pa.field("tuples", pa.list_(pa.struct([pa.field("verb", pa.string(), nullable=False),
                                               pa.field("args", STRING_LIST, nullable=False)])), nullable=False),
        # The step as a person would write it (a step model's verbs, nouns and text); empty and null
        # without a step model or for a clip that is not a step. verbs/args/tuples: the clip's own words.
        pa.field("step_verbs", STRING_LIST, nullable=False),
        pa.field("step_nouns", STRING_LIST, nullable=False),
        pa.field("step_text", pa.string(), nullable=True),
        # The extractor (<extractor>-<backend>) and the segmentation that cut the video's clips.
        pa.field("extractor", pa.string(), nullable=False),
        pa.field("segmentation", pa.string(), nullable=False),
    ]
)


#: A shard's file within the dataset folder (hive-style: the folder name is the ``shard`` column).
PARTITION_FILE = "shard={shard:05d}/part-0.parquet"
PARTITION_RE = re.compile(r"shard=(\d{5,})/part-0\.parquet")
#: The dataset's summary file: the shards' footers, and the manifest under MANIFEST_KEY.
METADATA_FILE = "_metadata"
MANIFEST_KEY = b"cookproc.app.corpus.manifest"


def shard_of(video_id: str, n_shards: int) -> int:
    """The shard of a video: fixed by its id alone (independent of PYTHONHASHSEED and of the other files)."""
    if n_shards < 1:
        raise ValueError(f"the number of shards must be at least 1, got {n_shards}")
    digest = hashlib.blake2b(video_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % n_shards


def corpus_files(folder: str | Path, extensions: Sequence[str] = SUBTITLE_EXTENSIONS) -> list[Path]:
    """The corpus's files (``*.<ext>`` for each extension, sorted by name), one per video id."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "the corpus folder does not exist (config corpus.dir; when null, the upstream "
                                 "mirror's youcook2/transcript/, which `snakemake results/dataset/upstream-checksums.tsv` "
                                 "downloads)")
    unknown = sorted(set(extensions) - set(SUBTITLE_EXTENSIONS))
    if unknown:
        raise ValueError(f"corpus.extensions: {unknown} cannot be read; expected some of {SUBTITLE_EXTENSIONS}")
    files = sorted(p for ext in extensions for p in folder.glob(f"*.{ext}") if p.is_file())
    if not files:
        raise InputError(folder, f"no transcript or subtitle file (*.{{{','.join(extensions)}}}) in the corpus folder")
    seen: dict[str, Path] = {}
    for path in files:
        if path.stem in seen:
            raise InputError(path, f"video id {path.stem!r} has two files, {seen[path.stem].name} and {path.name}; "
                                   "keep one")
        seen[path.stem] = path
    return files


def shard_files(files: Sequence[str | Path], shard: int, n_shards: int) -> list[Path]:
    """The files of one shard, in name order."""
    if not 0 <= shard < n_shards:
        raise ValueError(f"shard {shard} does not exist: there are {n_shards} shards (0 to {n_shards - 1})")
    return sorted(Path(f) for f in files if shard_of(Path(f).stem, n_shards) == shard)


def document_rows(document: dict, source: str | Path) -> list[dict]:
    """A procedure document's clips as rows of :data:`CORPUS_CLIPS` (its name is the video id)."""
    return [{
        "video_id": document["name"], "clip_idx": clip["clip_idx"], "source": Path(source).name,
        "start_s": clip["start_s"], "end_s": clip["end_s"], "source_lines": clip["source_lines"],
        "sentence": clip["sentence"], "is_key": clip["is_key"], "key_probability": clip["key_probability"],
        "key_score": clip["key_score"], "verbs": clip["verbs"], "args": clip["args"], "tuples": clip["tuples"],
        "step_verbs": clip["step"]["verbs"] if clip.get("step") else [],
        "step_nouns": clip["step"]["nouns"] if clip.get("step") else [],
        "step_text": clip["step"]["text"] if clip.get("step") else None,
        "extractor": document["extractor"], "segmentation": document["segmentation"],
    } for clip in document["clips"]]


def documents_table(documents: Sequence[dict], sources: Sequence[str | Path]) -> pa.Table:
    rows = [row for document, source in zip(documents, sources, strict=True) for row in document_rows(document, source)]
    return to_table(rows, CORPUS_CLIPS, what="corpus clips")


def partition_path(dataset: str | Path, shard: int) -> Path:
    return Path(dataset) / PARTITION_FILE.format(shard=shard)


def _dataset_files(dataset: Path) -> list[str]:
    """Every file of the dataset folder that a reader of the folder would see (relative paths; files
    and folders starting with '.' or '_' are hidden from pyarrow, DuckDB's globs and Spark alike)."""
    files = []
    for root, dirs, names in os.walk(dataset):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        files += [os.path.relpath(os.path.join(root, n), dataset) for n in sorted(names) if not n.startswith((".", "_"))]
    return sorted(files)


def set_aside_leftovers(dataset: str | Path, damaged_dir: str | Path) -> list[str]:
    """Before a new dataset takes the place of ``dataset``: what the old folder holds must be the
    workflow's, since the whole folder is replaced. Its partitions (of any shard count) and
    ``_metadata`` go with it; a damaged file set aside there by an earlier version of the workflow
    (``<file>.damaged``) is moved to ``damaged_dir`` (kept, not deleted); anything else is an error
    naming it (``move it out``), before anything changed. Returns what was moved, for the log."""
    dataset = Path(dataset)
    if not dataset.is_dir():
        return []
    moves, done = [], []
    for name in _dataset_files(dataset):
        if PARTITION_RE.fullmatch(name):
            continue
        if re.fullmatch(r"shard=\d{5,}/part-0\.parquet\.damaged(\.\d+)?", name):
            moves.append(name)
            continue
        raise InputError(dataset / name, "is not a partition of the corpus dataset (expected shard=NNNNN/part-0.parquet), "
                                         "and the dataset is replaced as a whole; move it out")
    for name in moves:
        target = Path(damaged_dir) / name.replace("/", "-")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(dataset / name, target)
        done.append(f"moved {name} to {target}")
    return done


def build_dataset(shards: Sequence[str | Path], dataset: str | Path, damaged_dir: str | Path) -> tuple[dict, list[str]]:
    """Write the dataset ``dataset`` from the shard jobs' files ``shards`` (shard 0 first): each
    read verified (a video of another shard is an error), written as its partition, one shard in
    memory at a time; then ``_metadata``. The new folder is built beside the old one and replaces
    it in one step when it is complete (:func:`set_aside_leftovers` first): a failure on the way
    leaves the old dataset as it was. Returns the manifest and what was set aside."""
    dataset, n_shards = Path(dataset), len(shards)
    done = set_aside_leftovers(dataset, damaged_dir)
    with building_folder(dataset) as folder:
        for shard, path in enumerate(shards):
            table = read_parquet(path, CORPUS_CLIPS)
            for video_id in pc.unique(table.column("video_id")).to_pylist():
                if shard_of(video_id, n_shards) != shard:
                    raise SchemaError(f"{path}: video {video_id!r} belongs to shard {shard_of(video_id, n_shards)} of "
                                      f"{n_shards}, not {shard}")
            write_parquet(table, partition_path(folder, shard), CORPUS_CLIPS, sort_keys=CLIP_KEY)
            del table  # one shard in memory at a time
        manifest = write_dataset_metadata(folder, n_shards)
    return manifest, done


def write_dataset_metadata(dataset: str | Path, n_shards: int) -> dict:
    """Write ``<dataset>/_metadata`` from the footers of the dataset's ``n_shards`` partitions (no
    row is read): pyarrow's summary file, with each row group's file path, and the manifest
    ``{"shards": n, "partitions": [{"shard", "path", "rows"}]}`` in its key-value metadata.
    Deterministic: the same partitions give the same bytes. Returns the manifest."""
    dataset = Path(dataset)
    footers, partitions = [], []
    for shard in range(n_shards):
        path = partition_path(dataset, shard)
        try:
            footer = pq.read_metadata(path)
        except FileNotFoundError:
            raise InputError(path, f"shard {shard} of {n_shards} is missing from the corpus dataset") from None
        except DECODER_ERRORS as exc:
            raise InputError(path, f"its footer cannot be read ({exc})") from None
        relative = PARTITION_FILE.format(shard=shard)
        footer.set_file_path(relative)
        footers.append(footer)
        partitions.append({"shard": shard, "path": relative, "rows": footer.num_rows})
    manifest = {"shards": n_shards, "partitions": partitions}
    schema = CORPUS_CLIPS.with_metadata({MANIFEST_KEY: json.dumps(manifest, sort_keys=True)})
    with atomic_output(dataset / METADATA_FILE) as tmp:
        pq.write_metadata(schema, tmp, metadata_collector=footers)
    return manifest


def _damaged_dataset(dataset: Path, path: str | Path, reason: str, what: str = "damaged, and so is its corpus dataset"):
    """Refuse a damaged dataset as a whole, naming ``path`` (the part that failed): the folder is
    set aside, so that no reader sees it with a part missing and the next run builds it again."""
    refuse_damaged(path, reason, set_aside=dataset, what=what)


def read_manifest(dataset: str | Path) -> dict:
    """The dataset's manifest (``_metadata``), after checking that the folder holds exactly the
    partitions it lists: what pyarrow.dataset, DuckDB and Spark see is what the workflow wrote. A
    file that is not the dataset's is an error naming it; a summary that cannot be read, or a
    partition missing, is damage (the dataset is set aside, to be built again)."""
    dataset = Path(dataset)
    path = dataset / METADATA_FILE
    if not dataset.is_dir():
        raise InputError(dataset, "the corpus dataset does not exist: build it with `snakemake corpus_all`")
    try:
        manifest = json.loads(pq.read_schema(path).metadata[MANIFEST_KEY])
        listed = [p["path"] for p in manifest["partitions"]]
    except FileNotFoundError:
        _damaged_dataset(dataset, path, "a corpus dataset without its summary", what="missing")
    except (*DECODER_ERRORS, KeyError, TypeError, json.JSONDecodeError) as exc:
        _damaged_dataset(dataset, path, f"not a corpus dataset's summary ({type(exc).__name__}: {exc})")
    present = _dataset_files(dataset)
    foreign = sorted(set(present) - set(listed))
    if foreign:
        raise InputError(dataset, f"holds {foreign} besides its partitions; move it out")
    missing = sorted(set(listed) - set(present))
    if missing:
        _damaged_dataset(dataset, dataset / missing[0], f"the dataset's _metadata lists {missing}", what="missing")
    return manifest


def iter_shards(dataset: str | Path, columns: Sequence[str] | None = None) -> Iterator[tuple[int, pa.Table]]:
    """``(shard, table)`` for each shard of the dataset, in shard order, one at a time: the only rows
    in memory are one shard's. Each file is verified (page checksums, column digests, the place it
    was written for), its row count checked against the manifest, and each of its videos against the
    shard its id hashes to, so that no video is in two shards without holding every id. A partition
    that fails sets the whole dataset aside (the next run builds it again), never only itself.
    ``columns``: a subset, in that order (all: CORPUS_CLIPS)."""
    dataset = Path(dataset)
    manifest = read_manifest(dataset)
    n_shards = manifest["shards"]
    for partition in manifest["partitions"]:
        path = dataset / partition["path"]
        try:
            table = verify(path, None if columns is None else list(dict.fromkeys(["video_id", *columns])))
            if columns is None:
                table = conform(table, CORPUS_CLIPS, what=str(path))
        except (integrity.Damage, InputError, SchemaError) as exc:
            _damaged_dataset(dataset, path, str(exc).removeprefix(f"{path}: "))
        if table.num_rows != partition["rows"]:
            _damaged_dataset(dataset, path, f"{table.num_rows} rows, but the dataset's _metadata lists "
                                            f"{partition['rows']}")
        for video_id in pc.unique(table.column("video_id")).to_pylist():
            if shard_of(video_id, n_shards) != partition["shard"]:
                _damaged_dataset(dataset, path, f"video {video_id!r} belongs to shard {shard_of(video_id, n_shards)} "
                                                f"of {n_shards}, not {partition['shard']}")
        yield partition["shard"], table if columns is None or "video_id" in columns else table.drop(["video_id"])


def read_dataset(dataset: str | Path) -> pa.Table:
    """Every row of the dataset in one table (the single-file export of a small corpus), read
    shard by shard as :func:`iter_shards` does."""
    tables = [table for _, table in iter_shards(dataset)]
    return pa.concat_tables(tables) if tables else CORPUS_CLIPS.empty_table()


def video_clips(table: pa.Table) -> dict[str, list[dict]]:
    """``{video_id: clips}`` in video and clip order, each clip with the fields of a procedure
    document's clips (``start``/``end`` formatted), for rendering a video's steps."""
    table = table.sort_by([(k, "ascending") for k in CLIP_KEY])
    videos: dict[str, list[dict]] = {}
    for row in table.to_pylist():
        row["start"], row["end"] = format_time(row["start_s"]), format_time(row["end_s"])
        row["step"] = ({"verbs": row["step_verbs"], "nouns": row["step_nouns"], "text": row["step_text"]}
                       if row["step_text"] else None)
        videos.setdefault(row["video_id"], []).append(row)
    return videos


def write_markdown(dataset: str | Path, folder: str | Path) -> int:
    """One Markdown step list per video of the dataset, ``<folder>/<video_id>.md``, written shard by
    shard (a video's clips are all in its shard); the folder appears whole when every file is
    written (built beside it, then renamed). Returns the number of videos."""
    n_videos = 0
    with building_folder(folder) as building:
        for _, table in iter_shards(dataset):
            videos = video_clips(table)
            del table
            for video_id, clips in videos.items():
                text = steps_markdown(video_id, clips[0]["source"], clips[0]["extractor"], clips, n_clips=len(clips))
                atomic_write_text(os.path.join(building, f"{video_id}.md"), text)
                n_videos += 1
            del videos  # before the next shard is read: one shard's rows at a time
    return n_videos
