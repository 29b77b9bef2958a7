"""Word and word-bigram ids of each sentence: the lexical half of the sentence vector.

Frozen sentence embeddings blur the exact cooking verbs and nouns that mark a key clip, which a
bag of words keeps (a TF-IDF model alone is as good as the frozen MiniLM vector here, and the two
are complementary). The vocabulary is built from the training clips of a fold only.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import numpy as np

_WORD = re.compile(r"[a-z0-9']+")


def terms(sentence: str, ngram_max: int = 2) -> list[str]:
    """Lower-cased words and word n-grams (joined by a space) up to ``ngram_max``."""
    words = _WORD.findall(sentence.lower())
    out = list(words)
    for n in range(2, ngram_max + 1):
        out += [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]
    return out


def build_vocabulary(sentences: Sequence[str], *, min_count: int = 2, ngram_max: int = 2) -> dict[str, int]:
    """Terms seen in at least ``min_count`` sentences -> ids 1..V in sorted term order (0 = padding)."""
    df = Counter()
    for s in sentences:
        df.update(set(terms(s, ngram_max)))
    kept = sorted(t for t, c in df.items() if c >= min_count)
    return {t: i + 1 for i, t in enumerate(kept)}


def token_matrix(sentences: Sequence[str], vocab: dict[str, int], *, ngram_max: int = 2,
                 max_terms: int = 128) -> np.ndarray:
    """int64 [n, width]: each sentence's known term ids (first ``max_terms``), 0-padded."""
    rows = [[vocab[t] for t in terms(s, ngram_max) if t in vocab][:max_terms] for s in sentences]
    width = max([len(r) for r in rows] + [1])
    out = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out
