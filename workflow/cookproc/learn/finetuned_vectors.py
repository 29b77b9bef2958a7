"""Per-fold fine-tuned sentence vectors (rule keyclips_finetune), as stored and read back, without torch.

One Parquet file per seed: for every held-out fold f and every clip, the sentence vector of the
encoder fine-tuned without fold f's recipes and that encoder's head probability
(cookproc.keyclips.finetune computes them). The neural selector and the supervised classifier read
them here, so reading needs no torch.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import read_table
from cookproc.learn.sentence_vectors import embedding_matrix


@dataclass
class FoldVectors:
    """What fold f's fine-tuned encoder (trained without fold f's recipes) gives every clip."""

    vectors: np.ndarray  # [n_clips, dim] float32 sentence vectors
    head: np.ndarray  # [n_clips] float64 key-clip probability of the finetuned linear head
    info: dict = field(default_factory=dict)


def finetuned_vectors_schema(dim: int) -> pa.Schema:
    """One row per (held-out fold, clip): what that fold's finetuned encoder gives the clip."""
    return pa.schema(
        [
            pa.field("fold", pa.int32(), nullable=False),
            pa.field("video_id", pa.string(), nullable=False),
            pa.field("clip_idx", pa.int32(), nullable=False),
            pa.field("embedding", pa.list_(pa.float32(), dim), nullable=False),
            pa.field("head_score", pa.float64(), nullable=False),
        ]
    )


def finetuned_vectors_table(clips: pd.DataFrame, finetuned: dict[int, FoldVectors]) -> pa.Table:
    """The :func:`finetuned_vectors_schema` table of :func:`finetune_folds`' output, rows in fold, clip order."""
    folds = sorted(finetuned)
    dim = finetuned[folds[0]].vectors.shape[1]
    n = len(clips)
    flat = np.concatenate([np.ascontiguousarray(finetuned[f].vectors, dtype=np.float32).reshape(-1) for f in folds])
    return pa.table(
        {"fold": pa.array(np.repeat(np.asarray(folds, dtype=np.int32), n)),
         "video_id": pa.array(clips["video_id"].astype(str).tolist() * len(folds), pa.string()),
         "clip_idx": pa.array(np.tile(clips["clip_idx"].to_numpy().astype(np.int32), len(folds))),
         "embedding": pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), dim),
         "head_score": pa.array(np.concatenate([finetuned[f].head for f in folds]).astype(np.float64))},
        schema=finetuned_vectors_schema(dim),
    )


def read_finetuned_vectors(path: str | os.PathLike, clips: pd.DataFrame, folds: Sequence[int]) -> dict[int, FoldVectors]:
    """Read a finetuned-vectors file: for each of ``folds``, rows aligned to ``clips`` (every clip exactly once)."""

    table = read_table(path)
    missing = [c for c in finetuned_vectors_schema(1).names if c not in table.column_names]
    if missing:
        raise InputError(path, f"missing columns {missing}; expected {finetuned_vectors_schema(1).names}")
    matrix = embedding_matrix(table, path)
    frame = pd.DataFrame({"fold": table.column("fold").to_numpy(), "video_id": table.column("video_id").to_pylist(),
                          "clip_idx": table.column("clip_idx").to_numpy(),
                          "head_score": table.column("head_score").to_numpy()})
    position = {key: i for i, key in enumerate(zip(clips["video_id"].astype(str), clips["clip_idx"].astype(int)))}
    extra = sorted(set(frame["fold"].tolist()) - set(folds))
    if extra:
        raise InputError(path, f"vectors of folds {extra}, which the key-clip folds do not have (stale file?)")
    out = {}
    for f in folds:
        rows = np.flatnonzero(frame["fold"].to_numpy() == f)
        at = np.array([position.get(key, -1) for key in zip(frame["video_id"].iloc[rows], frame["clip_idx"].iloc[rows])],
                      dtype=np.int64)
        if (at < 0).any():
            bad = rows[np.flatnonzero(at < 0)[0]]
            raise InputError(path, f"row {bad}: fold {f}, clip {frame.video_id[bad]}#{frame.clip_idx[bad]} is not in "
                                   "the clip table")
        if len(at) != len(clips) or len(np.unique(at)) != len(clips):
            raise InputError(path, f"fold {f}: {len(np.unique(at))} distinct clips in {len(at)} rows, expected each "
                                   f"of the {len(clips)} clips once")
        order = np.empty(len(clips), dtype=np.int64)
        order[at] = rows
        out[f] = FoldVectors(matrix[order], frame["head_score"].to_numpy()[order].astype(np.float64))
    return out
