"""Stored sentence vectors of the benchmark clips (rule text_features), written and read without torch.

One row per clip: ``video_id``, ``clip_idx`` and one encoder's vector as a fixed-size list of
float32, so that a reader never guesses the width. The encoder itself is in
cookproc.keyclips.sentence_encoder.
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import read_table
from cookproc.learn.inputs import align_rows


def text_features_schema(dim: int) -> pa.Schema:
    """One row per clip: the sentence vector of one encoder (``dim`` depends on the encoder)."""
    return pa.schema(
        [
            pa.field("video_id", pa.string(), nullable=False),
            pa.field("clip_idx", pa.int32(), nullable=False),
            pa.field("embedding", pa.list_(pa.float32(), dim), nullable=False),
        ]
    )


def text_features_table(video_ids: Sequence[str], clip_idx: Sequence[int], vectors: np.ndarray) -> pa.Table:
    """The Parquet table of :func:`text_features_schema` for per-clip vectors."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    if len(video_ids) != n or len(clip_idx) != n:
        raise ValueError(f"{len(video_ids)} video ids / {len(clip_idx)} clip indices for {n} vectors")
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    emb = pa.FixedSizeListArray.from_arrays(flat, dim)
    return pa.table(
        {"video_id": pa.array(list(video_ids), pa.string()),
         "clip_idx": pa.array(np.asarray(clip_idx, dtype=np.int32)),
         "embedding": emb},
        schema=text_features_schema(dim),
    )


def read_text_features(path: str | os.PathLike) -> tuple[list[tuple[str, int]], np.ndarray]:
    """Read a text-feature file: clip keys and a float32 matrix (rows in file order)."""
    
    table = read_table(path)
    for name in ("video_id", "clip_idx", "embedding"):
        if name not in table.column_names:
            raise InputError(path, f"missing column {name!r}; expected video_id, clip_idx, embedding")
    keys = list(zip(table.column("video_id").to_pylist(), table.column("clip_idx").to_pylist()))
    return keys, embedding_matrix(table, path)


def clip_text_features(path: str | os.PathLike, clips) -> np.ndarray:
    """The sentence vectors of a text-feature file, one row per clip of ``clips`` in clip order."""
    keys, vectors = read_text_features(path)
    return vectors[align_rows(path, keys, clips, "text features")]


def embedding_matrix(table: pa.Table, path: str | os.PathLike) -> np.ndarray:
    """The ``embedding`` column (fixed-size float32 lists, no nulls) as a [rows, dim] float32 matrix."""
    emb = table.column("embedding").combine_chunks()
    if not pa.types.is_fixed_size_list(emb.type):
        raise InputError(path, f"column 'embedding' has type {emb.type}, expected a fixed-size list of float32",
                         column="embedding")
    if emb.null_count:
        raise InputError(path, f"{emb.null_count} null embeddings", column="embedding")
    return np.asarray(emb.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, emb.type.list_size)
