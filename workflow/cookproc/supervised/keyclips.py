"""Supervised key-clip classifier: logistic regression on everything known about a clip.

Inputs per clip: the sentence embedding and its neighbours' (a step is often announced or finished in
the sentences around it), layout (position, length), SRL statistics of the clip and its neighbours
(cooking-lexicon predicates with objects are what annotators mark), mean TSM verb/noun evidence of
the overlapping segments, and word/bigram indicators learnt from the training folds' sentences.
Dense inputs are standardised with training-fold statistics; the model is an L2 logistic regression
(liblinear, single-threaded, fixed coordinate-shuffling seed), so reruns are identical.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from cookproc.learn.keyclip_crossval import FitPredict, held_out_fold
from cookproc.learn.inputs import VisualSets, context_features, layout_features
from cookproc.learn.finetuned_vectors import FoldVectors


def tsm_mean(visual: VisualSets) -> np.ndarray:
    """Mean segment vector per clip plus log(1 + number of segments); zeros for clips without segments."""
    idx = visual.index
    valid = idx >= 0
    sums = np.zeros((idx.shape[0], visual.dim), dtype=np.float64)
    for j in range(idx.shape[1]):
        rows = np.flatnonzero(valid[:, j])
        sums[rows] += visual.vectors[idx[rows, j]]
    n = valid.sum(1)
    mean = sums / np.maximum(n, 1)[:, None]
    return np.hstack([mean, np.log1p(n)[:, None]]).astype(np.float32)


def dense_inputs(clips: pd.DataFrame, embeddings: np.ndarray, srl: np.ndarray, tsm: np.ndarray | None,
                 *, window: int, embedding_window: int) -> np.ndarray:
    """Embeddings with ``embedding_window`` neighbours per side, layout, SRL statistics with ``window``
    neighbours per side, TSM evidence. The neighbours' embeddings are kept apart from the neighbours'
    SRL statistics: on the folds, every neighbour embedding costs ~4 F1 points (384 more weights per
    side on ~10k training clips), while the 5 SRL numbers per neighbour are cheap context."""
    parts = [context_features(embeddings, clips, embedding_window), layout_features(clips),
             context_features(srl, clips, window)]
    if tsm is not None:
        parts.append(tsm)
    return np.hstack(parts).astype(np.float64)


def logreg_fit_predict(dense: np.ndarray, sentences: list[str], labels: np.ndarray, *, C: float,
                       ngram_max: int, min_df: int, max_iter: int = 2000):
    """A cookproc.learn.keyclip_crossval FitPredict: every statistic (scaler, vocabulary) from training clips only."""

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        scaler = StandardScaler().fit(dense[train])
        vec = CountVectorizer(ngram_range=(1, ngram_max), min_df=min_df, binary=True, lowercase=True,
                              token_pattern=r"(?u)\b\w+\b")
        vec.fit([sentences[i] for i in train])

        def design(rows: np.ndarray):
            words = vec.transform([sentences[i] for i in rows])
            return sp.hstack([sp.csr_matrix(scaler.transform(dense[rows])), words], format="csr")

        # liblinear shuffles coordinates: a fixed random_state makes the fit reproducible.
        model = LogisticRegression(C=C, max_iter=max_iter, solver="liblinear", random_state=0)
        model.fit(design(train), labels[train])
        info = {"vocabulary": len(vec.vocabulary_), "dense_dim": int(dense.shape[1])}
        return model.predict_proba(design(val))[:, 1], model.predict_proba(design(test))[:, 1], info

    return fit


def regression_candidates(design: Callable[[np.ndarray, int], np.ndarray], sentences: list[str], labels: np.ndarray, *,
                          windows: Sequence[int], Cs: Sequence[float], ngram_max: int, min_df: int,
                          frozen: np.ndarray | None = None, finetuned: dict[int, FoldVectors] | None = None,
                          fold: np.ndarray | None = None) -> list[tuple[dict, FitPredict]]:
    """(settings, FitPredict) for every context window and C: candidates of nested selection
    (cookproc.learn.keyclip_crossval.candidates_with_heads).

    ``design(embeddings, window)`` builds the dense inputs. With ``finetuned`` (per held-out fold f,
    vectors of an encoder that never saw fold f; needs the clips' ``fold``), fold f's design matrix
    is built when fold f comes, so one is in memory at a time.
    """
    if (frozen is None) == (finetuned is None):
        raise ValueError("regression candidates need either frozen or per-fold finetuned vectors")
    if finetuned is not None and fold is None:
        raise ValueError("finetuned sentence vectors are per fold: the clips' fold ids are needed")

    def candidate(window: int, C: float) -> FitPredict:
        def on(embeddings):
            return logreg_fit_predict(design(embeddings, window), sentences, labels, C=C, ngram_max=ngram_max,
                                      min_df=min_df)
        if frozen is not None:
            return on(frozen)

        def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
            return on(finetuned[held_out_fold(fold, test, finetuned)].vectors)(train, val, test)
        return fit

    return [({"context_window": int(window), "C": float(C)}, candidate(window, C)) for window in windows for C in Cs]
