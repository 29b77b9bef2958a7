"""Per-clip inputs of the supervised models: SRL statistics and TSM evidence, aligned with the clip order.

The clip order is the benchmark's (sorted by video_id, clip_idx), as in :mod:`cookproc.learn.inputs`.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import column_names, read_table, wrong_columns

SRL_COLUMNS = ("video_id", "clip_idx", "frame_idx", "predicate_lemma", "chunk_idx", "role", "text",
               "token_start", "token_end")

#: Roles whose chunks are argument candidates (upstream's filter keeps ARG1..ARG5 and most ARGM).
ARG_ROLES = ("ARG1", "ARG2", "ARG3", "ARG4", "ARGM-LOC", "ARGM-DIR", "ARGM-TMP", "ARGM-MNR")


def read_srl(path) -> dict[tuple[str, int], list[list[dict]]]:
    """SRL parses per clip: a list of frames, each a list of chunks (dicts), in frame/chunk order."""
    names = column_names(path)
    missing = [c for c in SRL_COLUMNS if c not in names]
    if missing:
        wrong_columns(path, f"missing columns {missing}; expected an SRL parse table (results/srl/<backend>.parquet)")
    df = read_table(path, columns=list(SRL_COLUMNS)).to_pandas()
    df = df.sort_values(["video_id", "clip_idx", "frame_idx", "chunk_idx"], kind="stable")
    chunks_by_frame: dict[tuple[str, int, int], list[dict]] = {}
    for row in df.itertuples(index=False):
        chunks_by_frame.setdefault((row.video_id, int(row.clip_idx), int(row.frame_idx)), []).append(
            {"role": row.role, "text": row.text, "lemma": row.predicate_lemma,
             "start": int(row.token_start), "end": int(row.token_end)})
    out: dict[tuple[str, int], list[list[dict]]] = defaultdict(list)
    for (vid, cidx, _), chunks in chunks_by_frame.items():  # insertion order is sorted
        out[(vid, cidx)].append(chunks)
    return dict(out)


def srl_clip_features(clips: pd.DataFrame, parses, lexicon: frozenset[str]) -> np.ndarray:
    """[predicates, lexicon predicates, lexicon predicates with an ARG1, argument chunks, ARG0 'you/we' frames]
    per clip: how much cooking action the parser sees in the sentence."""
    out = np.zeros((len(clips), 5), dtype=np.float32)
    for i, key in enumerate(zip(clips["video_id"], clips["clip_idx"].astype(int))):
        for frame in parses.get(key, []):
            lemma = next((c["lemma"] for c in frame if c["role"] == "V"), frame[0]["lemma"])
            roles = {c["role"] for c in frame}
            in_lex = lemma in lexicon
            out[i, 0] += 1
            out[i, 1] += in_lex
            out[i, 2] += in_lex and "ARG1" in roles
            out[i, 3] += sum(c["role"] in ARG_ROLES for c in frame)
            out[i, 4] += any(c["role"] == "ARG0" and c["text"].lower() in ("you", "we", "i") for c in frame)
    return np.log1p(out)


def read_tsm_words(path, clips: pd.DataFrame, max_rank: int = 1) -> list[list[tuple[str, str, float]]]:
    """Per clip (clip order): the (verb_key, noun_key, weight) labels of its aligned TSM segments of
    rank <= ``max_rank`` (weight: softmax score, or 1 when the source ships labels only)."""
    cols = ("video_id", "clip_idx", "segment_idx", "rank", "verb_key", "noun_key", "verb_score")
    names = column_names(path)
    missing = [c for c in cols if c not in names]
    if missing:
        wrong_columns(path, f"missing columns {missing}; expected the ALIGNED_SEGMENTS schema")
    df = read_table(path, columns=list(cols)).to_pandas()
    df = df[df["rank"] <= max_rank].sort_values(["video_id", "clip_idx", "segment_idx", "rank"], kind="stable")
    groups: dict[tuple[str, int], list] = defaultdict(list)
    for row in df.itertuples(index=False):
        w = 1.0 if pd.isna(row.verb_score) else float(row.verb_score)
        groups[(row.video_id, int(row.clip_idx))].append((str(row.verb_key), str(row.noun_key), w))
    return [groups.get(key, []) for key in zip(clips["video_id"], clips["clip_idx"].astype(int))]
