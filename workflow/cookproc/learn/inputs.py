"""Inputs of the learned key-clip selectors, as arrays aligned with one clip order.

The clip order is always the benchmark's, sorted by (video_id, clip_idx). Text inputs are one
vector per clip (optionally with its neighbours' vectors, since a clip's role in the recipe often
shows in the sentences around it). Visual inputs are a *set* of vectors per clip, stored ragged
(all vectors in one matrix plus, per clip, the row indices of its set, padded with -1): either
ResNet-50 frame features or the TSM action evidence of the 5-second segments overlapping the clip.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import column_names, read_table, wrong_columns

#: Columns of results/dataset/clips.parquet (cookproc.core.schemas.CLIPS) the learned selectors read.
CLIP_COLUMNS = ("video_id", "recipe", "clip_idx", "start_s", "end_s", "sentence", "is_key")

#: Class counts of EPIC-Kitchens-55, whose verb/noun labels the upstream TSM predicts.
EPIC_VERB_CLASSES = 125
EPIC_NOUN_CLASSES = 352


def read_clips_parquet(path: str | os.PathLike) -> pd.DataFrame:
    """The benchmark clips of results/dataset/clips.parquet (columns :data:`CLIP_COLUMNS`), checked and
    sorted by (video_id, clip_idx)."""
    schema_names = column_names(path)
    missing = [c for c in CLIP_COLUMNS if c not in schema_names]
    if missing:
        wrong_columns(path, f"missing columns {missing}; expected the CLIPS schema (cookproc.core.schemas)")
    df = read_table(path, columns=list(CLIP_COLUMNS)).to_pandas()
    for col in ("video_id", "recipe", "clip_idx", "sentence", "is_key", "start_s"):
        nulls = df[col].isna()
        if nulls.any():
            raise InputError(path, f"{int(nulls.sum())} null values, first at row {int(np.argmax(nulls.values))}",
                             column=col)
    df = df.sort_values(["video_id", "clip_idx"], kind="stable").reset_index(drop=True)
    dup = df.duplicated(["video_id", "clip_idx"])
    if dup.any():
        row = df[dup].iloc[0]
        raise InputError(path, f"clip ({row.video_id}, {row.clip_idx}) appears more than once")
    recipes = df.groupby("video_id")["recipe"].nunique()
    if (recipes > 1).any():
        raise InputError(path, f"video {recipes[recipes > 1].index[0]} has clips of several recipes", column="recipe")
    df["clip_idx"] = df["clip_idx"].astype(np.int32)
    df["is_key"] = df["is_key"].astype(bool)
    return df


def align_rows(path, keys: list[tuple[str, int]], clips: pd.DataFrame, what: str) -> np.ndarray:
    """Row index into ``keys`` for every clip, in clip order; every clip must be present exactly once."""
    position = {}
    for i, key in enumerate(keys):
        if key in position:
            raise InputError(path, f"{what}: clip {key} appears more than once")
        position[key] = i
    rows = np.empty(len(clips), dtype=np.int64)
    for j, key in enumerate(zip(clips["video_id"], clips["clip_idx"].astype(int))):
        if key not in position:
            raise InputError(path, f"{what}: no row for clip {key}")
        rows[j] = position[key]
    return rows


def shift_rows(matrix: sp.csr_matrix, video: np.ndarray, offset: int) -> sp.csr_matrix:
    """Row i of the result is row i+offset of ``matrix`` when both clips are in the same video, else 0."""
    n = matrix.shape[0]
    src = np.arange(n) + offset
    ok = (src >= 0) & (src < n)
    ok[ok] &= video[src[ok]] == video[ok]
    select = sp.csr_matrix((np.ones(int(ok.sum())), (np.flatnonzero(ok), src[ok])), shape=(n, n))
    return (select @ matrix).tocsr()


def context_features(vectors: np.ndarray, clips: pd.DataFrame, window: int) -> np.ndarray:
    """Concatenate each clip's vector with those of its ``window`` neighbours on each side.

    Order: [v_{i-w}, ..., v_{i-1}, v_i, v_{i+1}, ..., v_{i+w}]; neighbours beyond the video's ends
    are zero vectors. ``vectors`` and ``clips`` share the clip order (sorted by video, clip_idx).
    """
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    if window == 0:
        return np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    video = clips["video_id"].to_numpy()
    out = np.zeros((n, (2 * window + 1) * dim), dtype=np.float32)
    for slot, offset in enumerate(range(-window, window + 1)):
        src = np.arange(n) + offset
        ok = (src >= 0) & (src < n)
        ok[ok] &= video[src[ok]] == video[ok]
        out[ok, slot * dim:(slot + 1) * dim] = vectors[src[ok]]
    return out


def layout_features(clips: pd.DataFrame) -> np.ndarray:
    """Where a clip sits and how long its sentence is: [relative index in the video, is first, is last,
    log(1 + words)]. Intros and outros are rarely key; long sentences are key far more often (8% of
    the shortest tenth, 45% of the longest)."""
    idx = clips.groupby("video_id", sort=False).cumcount().to_numpy()
    count = clips.groupby("video_id", sort=False)["clip_idx"].transform("size").to_numpy()
    rel = idx / np.maximum(count - 1, 1)
    words = clips["sentence"].astype(str).str.split().str.len().to_numpy()
    return np.stack([rel, idx == 0, idx == count - 1, np.log1p(words)], axis=1).astype(np.float32)


def text_inputs(clips: pd.DataFrame, embeddings: np.ndarray, *, context_window: int, layout: bool) -> np.ndarray:
    """The sentence-side input: embeddings (with ``context_window`` neighbours) and layout features."""
    parts = [context_features(embeddings, clips, context_window)]
    if layout:
        parts.append(layout_features(clips))
    return np.hstack(parts).astype(np.float32)


@dataclass
class VisualSets:
    """A set of vectors per clip: ``vectors[index[i, j]]`` for ``index[i, j] >= 0`` (-1 = padding)."""

    vectors: np.ndarray  # float32 [M, dim]
    index: np.ndarray  # int64 [n_clips, max_set]

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def sizes(self) -> np.ndarray:
        return (self.index >= 0).sum(1)


def _subsample(rows: list[int], max_set: int) -> list[int]:
    """At most ``max_set`` rows, spread uniformly over the (time-ordered) set, as the paper samples frames."""
    if len(rows) <= max_set:
        return rows
    pick = np.linspace(0, len(rows) - 1, max_set).round().astype(int)
    return [rows[i] for i in pick]


def _sets_from_groups(groups: dict[tuple[str, int], list[int]], clips: pd.DataFrame, max_set: int) -> np.ndarray:
    index = np.full((len(clips), max_set), -1, dtype=np.int64)
    for j, key in enumerate(zip(clips["video_id"], clips["clip_idx"].astype(int))):
        rows = _subsample(groups.get(key, []), max_set)
        index[j, :len(rows)] = rows
    return index


def tsm_sets(path, clips: pd.DataFrame, *, max_set: int = 16, n_verbs: int = EPIC_VERB_CLASSES,
             n_nouns: int = EPIC_NOUN_CLASSES) -> VisualSets:
    """TSM evidence per clip: one vector per overlapping 5-s segment, [verb distribution ; noun distribution].

    Reads an ALIGNED_SEGMENTS file. A segment's verb (noun) part holds each ranked prediction's
    softmax score at its class, or 1 for the top-1 label when scores are absent (upstream ships
    top-1 labels only). A clip without segments gets an empty set.
    """
    cols = ("video_id", "clip_idx", "segment_idx", "rank", "verb_class", "verb_score", "noun_class", "noun_score")
    names = column_names(path)
    missing = [c for c in cols if c not in names]
    if missing:
        wrong_columns(path, f"missing columns {missing}; expected the ALIGNED_SEGMENTS schema")
    df = read_table(path, columns=list(cols)).to_pandas()
    for col, n in (("verb_class", n_verbs), ("noun_class", n_nouns)):
        bad = (df[col] < 0) | (df[col] >= n)
        if bad.any():
            r = df[bad].iloc[0]
            raise InputError(path, f"class {int(r[col])} of clip ({r.video_id}, {int(r.clip_idx)}) is outside 0..{n - 1}",
                             column=col)
    df = df.sort_values(["video_id", "clip_idx", "segment_idx", "rank"], kind="stable").reset_index(drop=True)
    # When scores are missing, only the top-1 label counts (weight 1); lower ranks need a score.
    top1 = (df["rank"] == 1).astype(np.float64)
    verb_w = df["verb_score"].astype("float64").fillna(pd.Series(top1, index=df.index)).to_numpy()
    noun_w = df["noun_score"].astype("float64").fillna(pd.Series(top1, index=df.index)).to_numpy()
    seg_key = list(zip(df["video_id"], df["clip_idx"].astype(int), df["segment_idx"].astype(int)))
    seg_ids: dict[tuple[str, int, int], int] = {}
    seg_of_row = np.empty(len(df), dtype=np.int64)
    for i, key in enumerate(seg_key):
        seg_of_row[i] = seg_ids.setdefault(key, len(seg_ids))
    vectors = np.zeros((len(seg_ids), n_verbs + n_nouns), dtype=np.float32)
    np.add.at(vectors, (seg_of_row, df["verb_class"].to_numpy()), verb_w)
    np.add.at(vectors, (seg_of_row, n_verbs + df["noun_class"].to_numpy()), noun_w)
    known = set(zip(clips["video_id"], clips["clip_idx"].astype(int)))
    groups: dict[tuple[str, int], list[int]] = {}
    for (vid, cidx, _), sid in seg_ids.items():  # insertion order = sorted by segment_idx
        if (vid, cidx) not in known:
            raise InputError(path, f"segment aligned to clip ({vid}, {cidx}), which is not a benchmark clip")
        groups.setdefault((vid, cidx), []).append(sid)
    return VisualSets(vectors, _sets_from_groups(groups, clips, max_set))


def frame_sets(path, clips: pd.DataFrame, *, max_set: int = 10) -> VisualSets:
    """ResNet-50 frame features per clip (video_id, clip_idx, frame_idx, embedding[2048]), in frame order."""
    cols = ("video_id", "clip_idx", "frame_idx", "embedding")
    names = column_names(path)
    missing = [c for c in cols if c not in names]
    if missing:
        wrong_columns(path, f"missing columns {missing}; expected video_id, clip_idx, frame_idx, embedding")
    table = read_table(path, columns=list(cols))
    table = table.sort_by([("video_id", "ascending"), ("clip_idx", "ascending"), ("frame_idx", "ascending")])
    emb = table.column("embedding").combine_chunks()
    if not pa.types.is_fixed_size_list(emb.type):
        raise InputError(path, f"type {emb.type}, expected a fixed-size list of float32", column="embedding")
    if emb.null_count:
        raise InputError(path, f"{emb.null_count} null embeddings", column="embedding")
    dim = emb.type.list_size
    vectors = np.asarray(emb.flatten().to_numpy(zero_copy_only=False), dtype=np.float32).reshape(-1, dim)
    known = set(zip(clips["video_id"], clips["clip_idx"].astype(int)))
    groups: dict[tuple[str, int], list[int]] = {}
    for i, key in enumerate(zip(table.column("video_id").to_pylist(), table.column("clip_idx").to_pylist())):
        if key not in known:
            raise InputError(path, f"frame of clip {key}, which is not a benchmark clip")
        groups.setdefault(key, []).append(i)
    return VisualSets(vectors, _sets_from_groups(groups, clips, max_set))
