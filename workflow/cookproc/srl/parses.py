"""The parse table every SRL backend writes: one row per labelled chunk of one predicate frame.

``results/srl/<backend>.parquet`` (``SRL_PARSES``): per clip, the frames are numbered in
predicate order; each frame has its ``V`` row and one row per argument chunk, in word order, with the
chunk's words joined by spaces (as upstream joined AllenNLP's words). ``score`` is the backend's
confidence in the chunk (mean tag probability for the tagger; null for rule-based or imported
parses). A clip without predicates has no rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import pyarrow as pa

SRL_PARSES = pa.schema(
    [
        pa.field("backend", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("frame_idx", pa.int32(), nullable=False),
        pa.field("predicate", pa.string(), nullable=False),        # the V chunk's text
        pa.field("predicate_lemma", pa.string(), nullable=False),  # WordNet verb lemma of it
        pa.field("chunk_idx", pa.int32(), nullable=False),         # order of the chunk in its frame
        pa.field("role", pa.string(), nullable=False),             # V, ARG0, ARGM-TMP, ...
        pa.field("text", pa.string(), nullable=False),
        pa.field("token_start", pa.int32(), nullable=False),       # word span [start, end)
        pa.field("token_end", pa.int32(), nullable=False),
        pa.field("score", pa.float64(), nullable=True),
    ]
)
PARSE_KEYS = ("video_id", "clip_idx", "frame_idx", "chunk_idx")


@dataclass(frozen=True)
class Chunk:
    role: str
    text: str
    start: int
    end: int
    score: float | None = None


def parse_rows(backend: str, video_id: str, clip_idx: int, parses: Sequence[Sequence[Chunk]]) -> list[dict]:
    """Rows of ``SRL_PARSES`` for one clip. A frame must hold a ``V`` chunk."""
    from cookproc.data.wordnet import verb_lemma

    rows = []
    for f, chunks in enumerate(parses):
        verbs = [c for c in chunks if c.role == "V"]
        if not verbs:
            raise ValueError(f"{video_id} clip {clip_idx} frame {f}: no V chunk in {chunks}")
        predicate = verbs[0].text
        for c, chunk in enumerate(chunks):
            rows.append({
                "backend": backend, "video_id": video_id, "clip_idx": int(clip_idx), "frame_idx": f,
                "predicate": predicate, "predicate_lemma": verb_lemma(predicate), "chunk_idx": c,
                "role": chunk.role, "text": chunk.text, "token_start": chunk.start, "token_end": chunk.end,
                "score": chunk.score,
            })
    return rows


def clip_parses(table: pa.Table) -> dict[tuple[str, int], list[list[Chunk]]]:
    """``SRL_PARSES`` back to ``{(video_id, clip_idx): [frame chunks in order]}``."""
    out: dict[tuple[str, int], dict[int, list[tuple[int, Chunk]]]] = {}
    cols = table.select(["video_id", "clip_idx", "frame_idx", "chunk_idx", "role", "text",
                         "token_start", "token_end", "score"]).to_pydict()
    for v, c, f, k, role, text, s, e, score in zip(*cols.values()):
        out.setdefault((v, c), {}).setdefault(f, []).append((k, Chunk(role, text, s, e, score)))
    return {key: [[ch for _, ch in sorted(by_frame[f], key=lambda x: x[0])] for f in sorted(by_frame)]
            for key, by_frame in out.items()}


def chunks_from_tags(words: Sequence[str], spans: Iterable[tuple[str, int, int]],
                     probs: Sequence[float] | None = None) -> list[Chunk]:
    """Chunks of one frame from ``(role, start, end)`` spans (in word order)."""
    out = []
    for role, start, end in sorted(spans, key=lambda s: (s[1], s[2])):
        score = None if probs is None else float(sum(probs[start:end]) / (end - start))
        out.append(Chunk(role, " ".join(words[start:end]), start, end, score))
    return out
