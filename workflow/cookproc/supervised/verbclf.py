"""Clip-level verb classifier: which of the frequent gold verbs a clip's annotators wrote.

Many gold verbs are not said in the sentence ("these are shredded bamboo shoots" -> take; "and some
salt" -> add), so the candidate ranker also sees, per clip, a multinomial logistic regression's
probability for each verb seen at least ``min_count`` times in the training folds. Its inputs are
the sentence's TF-IDF word uni- and bigrams, its neighbours' words (down-weighted) and, when given,
the frozen sentence vector.

The probabilities join the candidates as features, so the ranker is trained on them too: on its
training clips they must come from classifiers that did not see those clips, or the ranker learns
to trust an overfitted score. They are therefore cross-fitted: each training fold's clips get the
probabilities of a classifier fitted on the other training folds, and the validation and held-out
clips those of a classifier fitted on all training clips. Only training clips' gold is ever read.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from cookproc.learn.inputs import shift_rows
from cookproc.supervised.tuples import add_proposed

log = logging.getLogger(__name__)

_TOKENS = r"[a-z]+(?:'[a-z]+)?"


@dataclass(frozen=True)
class VerbClassifier:
    """The inputs and settings of the classifier; ``probabilities`` fits it for one held-out fold."""

    sentences: list[str]
    video: np.ndarray  # per clip, in clip order (a video's clips are contiguous)
    embeddings: np.ndarray | None  # per clip, or None: words only
    min_count: int
    C: float
    context_weight: float
    candidates: int  # its most probable verbs proposed per clip
    max_iter: int = 300

    def features(self, fit_clips: np.ndarray) -> sp.csr_matrix:
        """Clip features, with vocabularies and IDF from the sentences of ``fit_clips`` only."""
        fit_text = [self.sentences[i] for i in fit_clips]
        own = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=_TOKENS).fit(fit_text)
        blocks = [own.transform(self.sentences)]
        if self.context_weight:
            near = TfidfVectorizer(min_df=2, sublinear_tf=True, token_pattern=_TOKENS).fit(fit_text)
            words = self.context_weight * near.transform(self.sentences)
            blocks += [shift_rows(words, self.video, -1), shift_rows(words, self.video, 1)]
        if self.embeddings is not None:
            blocks.append(sp.csr_matrix(self.embeddings))
        return sp.hstack(blocks, format="csr")

    def probabilities(self, gold: list[frozenset[str]], fold: np.ndarray, train: np.ndarray,
                      others: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """(clips x verbs) probabilities and the verbs: cross-fitted over ``train``'s folds, and
        from a classifier on all of ``train`` for ``others``. Rows of other clips stay 0."""
        counts = Counter(v for i in train for v in gold[i])
        verbs = sorted(v for v, c in counts.items() if c >= self.min_count)
        if not verbs:
            raise ValueError(f"no verb occurs {self.min_count} times in the training clips' gold")
        X = self.features(train)
        P = np.zeros((len(self.sentences), len(verbs)))
        for inside in self._cross_fit_parts(fold[train], self.video[train]):
            P[train[inside]] = self._fit_predict(X, gold, train[~inside], train[inside], verbs)
        P[others] = self._fit_predict(X, gold, train, others, verbs)
        return P, verbs

    @staticmethod
    def _cross_fit_parts(train_fold: np.ndarray, train_video: np.ndarray) -> list[np.ndarray]:
        """Masks over the training clips, one per cross-fitting part: their folds (recipe-disjoint); when
        they all come from one fold (k = 2), two halves of their videos; from one video, of its clips."""
        folds = np.unique(train_fold)
        if len(folds) >= 2:
            return [train_fold == f for f in folds]
        videos = np.unique(train_video)
        if len(videos) >= 2:
            what, half = f"{len(videos)} videos", np.searchsorted(videos, train_video) % 2
        elif len(train_video) >= 2:
            what, half = f"{len(train_video)} clips of one video", np.arange(len(train_video)) % 2
        else:
            raise ValueError("cross-fitting the verb classifier needs at least two training clips")
        log.warning("verb classifier: the training clips are one fold; cross-fitting over two halves of its %s "
                    "(a recipe may be on both sides)", what)
        return [half == 0, half == 1]

    def _fit_predict(self, X: sp.csr_matrix, gold: list[frozenset[str]], fit: np.ndarray, predict: np.ndarray,
                     verbs: list[str]) -> np.ndarray:
        index = {v: k for k, v in enumerate(verbs)}
        other = len(verbs)  # the class of every rarer verb
        # One row per gold verb: a clip with two verbs teaches both.
        rows = [i for i in fit for _ in sorted(gold[i])]
        targets = [index.get(v, other) for i in fit for v in sorted(gold[i])]
        out = np.zeros((len(predict), other + 1))
        if len(set(targets)) == 1:  # one class among the fitted clips: it is certain
            out[:, targets[0]] = 1.0
        else:
            model = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(X[rows], targets)
            out[:, model.classes_] = model.predict_proba(X[predict])
        return out[:, :other]


@dataclass(frozen=True)
class KnownProbabilities(VerbClassifier):
    """The verb classifier, with its probabilities on the benchmark clips (the first ``len(known)``
    rows) known from a deployed extractor (cookproc.supervised.deploy): only the classifier fitted on
    all training clips runs, for the new clips. With ``known`` None it runs in full and leaves its
    result in ``record``."""

    known: np.ndarray | None = field(default=None, compare=False)
    known_verbs: tuple[str, ...] = ()
    record: dict | None = field(default=None, compare=False)

    @classmethod
    def wrap(cls, classifier: VerbClassifier, **extra) -> "KnownProbabilities":
        return cls(**{f.name: getattr(classifier, f.name) for f in fields(VerbClassifier)}, **extra)

    def probabilities(self, gold, fold, train, others):
        if self.known is None:
            probs, verbs = super().probabilities(gold, fold, train, others)
            if self.record is not None:
                self.record.update(probabilities=probs, verbs=verbs)
            return probs, verbs
        counts = Counter(v for i in train for v in gold[i])
        verbs = sorted(v for v, c in counts.items() if c >= self.min_count)
        if tuple(verbs) != self.known_verbs:
            raise RuntimeError("the training clips' verbs differ from those the artifact's classifier was fitted on")
        n_known = len(self.known)
        probs = np.zeros((len(self.sentences), len(verbs)))
        probs[:n_known] = self.known
        new = others[others >= n_known]
        if len(new):
            probs[new] = self._fit_predict(self.features(train), gold, train, new, verbs)
        return probs, verbs


def add_classifier_candidates(candidates: pd.DataFrame, probs: np.ndarray, verbs: list[str], clips: np.ndarray,
                              top_k: int) -> pd.DataFrame:
    """``candidates`` plus each of ``clips``' ``top_k`` most probable verbs (flag ``src_classifier``),
    and every candidate's classifier features (0 for verbs outside the classifier's)."""
    df = candidates.copy()
    df["src_classifier"] = 0.0
    if top_k:
        top = np.argsort(-probs[clips], axis=1, kind="stable")[:, :top_k]
        df = add_proposed(df, list(zip(np.repeat(clips, top.shape[1]).tolist(), [verbs[k] for k in top.ravel()])),
                          "src_classifier")
    index = {v: k for k, v in enumerate(verbs)}
    clip = df["clip"].to_numpy()
    k = np.array([index.get(t, -1) for t in df["text"]])
    df["clf_p"] = np.where(k >= 0, probs[clip, np.maximum(k, 0)], 0.0)
    df["clf_max"] = probs.max(axis=1)[clip]
    df["clf_ratio"] = df["clf_p"] / np.maximum(df["clf_max"], 1e-9)
    return df
