"""Procedures over a corpus: a folder of transcripts or subtitles, one file per video, extracted in
shards into one partitioned Parquet dataset with one row per clip (rules/corpus.smk).

A video goes to the shard its id hashes to (:func:`shard_of`: BLAKE2b of the id modulo the shard
count), not to a position in the sorted file list, so adding a file changes one shard's inputs
and leaves every other shard's, and its result, as they were. Each shard's rows are exactly the
clips of :func:`cookproc.app.procedures.procedure_documents` (validated procedure documents), so the
dataset holds the same clips a single file gives through ``cookproc extract`` or rule
procedures_extract with the same settings.

The dataset is a folder, hive-style: ``<dataset>/shard=00003/part-0.parquet`` per shard (each
written by its shard's job through ``write_parquet``, so it carries its column digests), and
``<dataset>/_metadata``, the shards' footers collected by :func:`write_dataset_metadata` (pyarrow's
summary file, whose key-value metadata also holds a manifest: the shard count and each partition's
file and rows). ``pyarrow.dataset.dataset(folder, partitioning="hive")``, DuckDB
(``read_parquet('<dataset>/*/*.parquet', hive_partitioning = true)``) and Spark read it as one table with a
``shard`` column; nothing ever holds more than one shard: :func:`iter_shards` reads it shard by
shard, verified.

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

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import DECODER_ERRORS, atomic_output, atomic_write_text, read_parquet, read_table
from cookproc.core.schemas import CLIP_KEY, STRING_LIST, SchemaError, to_table
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


def gather_shards(paths: Sequence[str | Path]) -> pa.Table:
    """The shards' rows in one table (every row in memory: the single-file export of a small
    corpus); a video in two shards (a changed assignment) is an error."""
    tables = [read_parquet(path, CORPUS_CLIPS) for path in paths]
    owner: dict[str, str] = {}
    for path, table in zip(paths, tables):
        for video_id in sorted(set(table.column("video_id").to_pylist())):
            if video_id in owner:
                raise SchemaError(f"video {video_id!r} is in two shards, {owner[video_id]} and {path}")
            owner[video_id] = str(path)
    return pa.concat_tables(tables) if tables else CORPUS_CLIPS.empty_table()


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


def tidy_dataset(dataset: str | Path, n_shards: int, damaged_dir: str | Path) -> list[str]:
    """Make the dataset folder hold exactly its ``n_shards`` partitions before it is summarised:
    the partitions of a former, larger shard count are deleted (every shard is rerun when the count
    changes, but Snakemake does not delete outputs no job declares any more), and damaged files set
    aside by a verified read (``<file>.damaged``) are moved to ``damaged_dir``, since readers of the
    folder would otherwise try to read them. Anything else is not the workflow's: an error naming
    it. Returns what was removed or moved, for the log."""
    dataset = Path(dataset)
    expected = {PARTITION_FILE.format(shard=k) for k in range(n_shards)}
    done = []
    for name in _dataset_files(dataset):
        if name in expected:
            continue
        match = PARTITION_RE.fullmatch(name)
        if match and int(match.group(1)) >= n_shards:
            (dataset / name).unlink()
            done.append(f"deleted {name} (a partition of a former shard count)")
        elif re.fullmatch(r"shard=\d{5,}/part-0\.parquet\.damaged(\.\d+)?", name):
            target = Path(damaged_dir) / name.replace("/", "-")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(dataset / name, target)
            done.append(f"moved {name} to {target}")
        else:
            raise InputError(dataset / name, "is not a partition of the corpus dataset (expected "
                                             f"shard=NNNNN/part-0.parquet for {n_shards} shards); move it out")
    for folder in sorted(p for p in dataset.glob("shard=*") if p.is_dir()):
        if not any(folder.iterdir()):
            folder.rmdir()
    return done


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
            raise InputError(path, f"its footer cannot be read ({exc}); rebuild the shard with "
                                   f"`snakemake --forcerun {os.path.relpath(path)}`") from None
        relative = PARTITION_FILE.format(shard=shard)
        footer.set_file_path(relative)
        footers.append(footer)
        partitions.append({"shard": shard, "path": relative, "rows": footer.num_rows})
    manifest = {"shards": n_shards, "partitions": partitions}
    schema = CORPUS_CLIPS.with_metadata({MANIFEST_KEY: json.dumps(manifest, sort_keys=True)})
    with atomic_output(dataset / METADATA_FILE) as tmp:
        pq.write_metadata(schema, tmp, metadata_collector=footers)
    return manifest


def read_manifest(dataset: str | Path) -> dict:
    """The dataset's manifest (``_metadata``), after checking that the folder holds exactly the
    partitions it lists: what pyarrow.dataset, DuckDB and Spark see is what the workflow wrote."""
    dataset = Path(dataset)
    path = dataset / METADATA_FILE
    try:
        manifest = json.loads(pq.read_schema(path).metadata[MANIFEST_KEY])
    except FileNotFoundError:
        raise InputError(path, "the corpus dataset has no _metadata: build it with its rule corpus_dataset") from None
    except (*DECODER_ERRORS, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"is not a corpus dataset's summary ({type(exc).__name__}: {exc}); rebuild it "
                               f"with `snakemake --forcerun {os.path.relpath(path)}`") from None
    listed = [p["path"] for p in manifest["partitions"]]
    present = _dataset_files(dataset)
    if present != sorted(listed):
        raise InputError(dataset, f"holds {sorted(set(present) - set(listed))} besides its partitions and lacks "
                                  f"{sorted(set(listed) - set(present))}; rebuild its _metadata (rule corpus_dataset)")
    return manifest


def iter_shards(dataset: str | Path, columns: Sequence[str] | None = None) -> Iterator[tuple[int, pa.Table]]:
    """``(shard, table)`` for each shard of the dataset, in shard order, one at a time: the only rows
    in memory are one shard's. Each file is verified (page checksums, column digests; a damaged
    one is set aside so that the next run rebuilds its shard), its row count checked against the
    manifest, and each of its videos against the shard its id hashes to, so that no video is in
    two shards without holding every id. ``columns``: a subset, in that order (all: CORPUS_CLIPS)."""
    dataset = Path(dataset)
    manifest = read_manifest(dataset)
    n_shards = manifest["shards"]
    for partition in manifest["partitions"]:
        path = dataset / partition["path"]
        if columns is None:
            table = read_parquet(path, CORPUS_CLIPS)
        else:
            table = read_table(path, list(dict.fromkeys(["video_id", *columns])))
        if table.num_rows != partition["rows"]:
            raise SchemaError(f"{path}: {table.num_rows} rows, but the dataset's _metadata lists {partition['rows']}; "
                              "rebuild it (rule corpus_dataset)")
        for video_id in pc.unique(table.column("video_id")).to_pylist():
            if shard_of(video_id, n_shards) != partition["shard"]:
                raise SchemaError(f"{path}: video {video_id!r} belongs to shard {shard_of(video_id, n_shards)} of "
                                  f"{n_shards}, not {partition['shard']}")
        yield partition["shard"], table if columns is None or "video_id" in columns else table.drop(["video_id"])


def dataset_partitions(dataset: str | Path) -> list[Path]:
    """The partition files the dataset's manifest lists, in shard order."""
    return [Path(dataset) / p["path"] for p in read_manifest(dataset)["partitions"]]


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
    shard (a video's clips are all in its shard). Returns the number of videos."""
    n_videos = 0
    for _, table in iter_shards(dataset):
        videos = video_clips(table)
        del table
        for video_id, clips in videos.items():
            text = steps_markdown(video_id, clips[0]["source"], clips[0]["extractor"], clips, n_clips=len(clips))
            atomic_write_text(os.path.join(folder, f"{video_id}.md"), text)
            n_videos += 1
        del videos  # before the next shard is read: one shard's rows at a time
    return n_videos
