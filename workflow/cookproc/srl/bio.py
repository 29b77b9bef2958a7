"""BIO tag sequences and labelled spans.

Spans are ``(role, start, end)`` with ``end`` exclusive, over word positions. Two decoders:
``bio_to_spans`` follows the CoNLL convention (an ``I-X`` that does not continue an ``X`` span
starts a new one) and is what span P/R/F1 uses; ``allennlp_chunks`` reproduces upstream's
``utils.bio_to_frames`` exactly (an ``I-`` tag always extends the current chunk, and after ``O``
it opens a chunk of the *last seen* type), so imported AllenNLP output gives upstream's parses.
"""
from __future__ import annotations

import functools
from typing import Iterable, Sequence

import numpy as np

OUTSIDE = "O"


class OverlapError(ValueError):
    """Two spans of one predicate share a word, which one BIO sequence cannot express."""


def spans_to_bio(n_words: int, spans: Iterable[tuple[str, int, int]]) -> list[str]:
    """BIO tags of ``n_words`` words from non-overlapping ``(role, start, end)`` spans."""
    tags = [OUTSIDE] * n_words
    for role, start, end in sorted(spans, key=lambda s: (s[1], s[2], s[0])):
        if not 0 <= start < end <= n_words:
            raise ValueError(f"span {role} [{start}, {end}) outside 0..{n_words}")
        if any(t != OUTSIDE for t in tags[start:end]):
            raise OverlapError(f"span {role} [{start}, {end}) overlaps another span: {tags[start:end]}")
        tags[start] = f"B-{role}"
        for i in range(start + 1, end):
            tags[i] = f"I-{role}"
    return tags


def bio_to_spans(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """CoNLL-style spans: ``B-X`` opens X; ``I-X`` continues an open X, else opens a new X."""
    spans: list[tuple[str, int, int]] = []
    role, start = None, 0
    for i, tag in enumerate(list(tags) + [OUTSIDE]):
        prefix, _, label = tag.partition("-")
        continues = prefix == "I" and label == role
        if role is not None and not continues:
            spans.append((role, start, i))
            role = None
        if prefix == "B" or (prefix == "I" and not continues):
            role, start = label, i
        elif prefix not in ("I", "O") or (prefix == "O" and tag != OUTSIDE):
            raise ValueError(f"not a BIO tag: {tag!r}")
    return spans


def allennlp_chunks(tags: Sequence[str], words: Sequence[str]) -> list[tuple[str, int, int]]:
    """Upstream's ``bio_to_frames`` as spans: stray ``I-`` tags behave exactly as there.

    Returns ``(role, start, end)``; a chunk's words are ``words[start:end]``. A stray ``I-`` after
    ``O`` opens a chunk of the previous chunk's type ('' when there was none), as upstream does.
    """
    if len(tags) != len(words):
        raise ValueError(f"{len(tags)} tags for {len(words)} words")
    chunks: list[tuple[str, int, int]] = []
    role, start, open_ = "", 0, False
    for i, tag in enumerate(tags):
        if tag.startswith("I-"):
            if not open_:
                start, open_ = i, True
        else:
            if open_:
                chunks.append((role, start, i))
                open_ = False
            if tag.startswith("B-"):
                role, start, open_ = tag[2:], i, True
    if open_:
        chunks.append((role, start, len(tags)))
    return chunks


@functools.lru_cache(maxsize=8)
def _transition_scores(labels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    neg = -1e9
    return (np.where(allowed_transitions(labels), 0.0, neg), np.where(allowed_starts(labels), 0.0, neg))


def allowed_transitions(labels: Sequence[str]) -> np.ndarray:
    """``allowed[i, j]``: tag j may follow tag i (``I-X`` only after ``B-X`` or ``I-X``)."""
    n = len(labels)
    allowed = np.ones((n, n), dtype=bool)
    for j, tag in enumerate(labels):
        if tag.startswith("I-"):
            for i, prev in enumerate(labels):
                allowed[i, j] = prev in (f"B-{tag[2:]}", tag)
    return allowed


def allowed_starts(labels: Sequence[str]) -> np.ndarray:
    return np.array([not t.startswith("I-") for t in labels], dtype=bool)


def viterbi_decode(log_probs: np.ndarray, labels: Sequence[str], *, forced: dict[int, int] | None = None,
                   banned: Sequence[int] = ()) -> list[int]:
    """Best valid BIO path under per-word ``log_probs`` [n_words, n_labels].

    ``forced`` pins word positions to label ids (the predicate to ``B-V``); ``banned`` label ids
    are never used elsewhere (a second ``V``). Ties break towards the lower label id.
    """
    n, k = log_probs.shape
    if n == 0:
        return []
    neg = -1e9
    scores = np.array(log_probs, dtype=np.float64)
    forced = forced or {}
    for lid in banned:
        scores[:, lid] = neg
    for pos, lid in forced.items():
        keep = scores[pos, lid] if scores[pos, lid] > neg else 0.0
        scores[pos, :] = neg
        scores[pos, lid] = keep
    trans, start = _transition_scores(tuple(labels))
    best = scores[0] + start
    back = np.zeros((n, k), dtype=np.int64)
    for t in range(1, n):
        cand = best[:, None] + trans  # [prev, cur]
        back[t] = cand.argmax(axis=0)
        best = cand.max(axis=0) + scores[t]
    path = [int(best.argmax())]
    for t in range(n - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return path[::-1]
