"""Procedures over a corpus: a folder of transcripts or subtitles, one file per video, extracted in
shards and gathered into one Parquet dataset with one row per clip (rules/corpus.smk).

A video goes to the shard its id hashes to (:func:`shard_of`: BLAKE2b of the id modulo the shard
count), not to a position in the sorted file list, so adding a file changes one shard's inputs
and leaves every other shard's, and its result, as they were. Each shard's rows are exactly the
clips of :func:`cookproc.procedures.procedure_documents` (validated procedure documents), so the
dataset holds the same clips a single file gives through ``cookproc extract`` or rule
user_procedures with the same settings.

This module needs neither torch nor spaCy: the gather runs in the light environment.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.schemas import CLIP_KEY, STRING_LIST, SchemaError, read_parquet, to_table
from cookproc.subtitles import SUBTITLE_EXTENSIONS, format_time

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
        # The extractor (<extractor>-<backend>) and the segmentation that cut the video's clips.
        pa.field("extractor", pa.string(), nullable=False),
        pa.field("segmentation", pa.string(), nullable=False),
    ]
)


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
        "extractor": document["extractor"], "segmentation": document["segmentation"],
    } for clip in document["clips"]]


def documents_table(documents: Sequence[dict], sources: Sequence[str | Path]) -> pa.Table:
    rows = [row for document, source in zip(documents, sources, strict=True) for row in document_rows(document, source)]
    return to_table(rows, CORPUS_CLIPS, what="corpus clips")


def gather_shards(paths: Sequence[str | Path]) -> pa.Table:
    """The shards' rows in one table; a video in two shards (a changed assignment) is an error."""
    tables = [read_parquet(path, CORPUS_CLIPS) for path in paths]
    owner: dict[str, str] = {}
    for path, table in zip(paths, tables):
        for video_id in sorted(set(table.column("video_id").to_pylist())):
            if video_id in owner:
                raise SchemaError(f"video {video_id!r} is in two shards, {owner[video_id]} and {path}")
            owner[video_id] = str(path)
    return pa.concat_tables(tables) if tables else CORPUS_CLIPS.empty_table()


def video_clips(table: pa.Table) -> dict[str, list[dict]]:
    """``{video_id: clips}`` in video and clip order, each clip with the fields of a procedure
    document's clips (``start``/``end`` formatted), for rendering a video's steps."""
    table = table.sort_by([(k, "ascending") for k in CLIP_KEY])
    videos: dict[str, list[dict]] = {}
    for row in table.to_pylist():
        row["start"], row["end"] = format_time(row["start_s"]), format_time(row["end_s"])
        videos.setdefault(row["video_id"], []).append(row)
    return videos
