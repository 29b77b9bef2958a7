"""Out-of-fold tuple extraction under the shared leave-recipes-out folds.

For each held-out fold: gold rates and the classifier come from the other folds' training recipes,
the selection threshold from their inner-validation recipes; the held-out fold's gold is never read.
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from cookproc.scoring.metrics import score_clips
from cookproc.scoring.similarity import SimilarityCache
from cookproc.learn.folds import split_indices
from cookproc.learn.selection import validation_halves
from cookproc.core.logs import Progress
from cookproc.supervised import tuples as T
from cookproc.supervised.verbclf import VerbClassifier, add_classifier_candidates

log = logging.getLogger(__name__)

#: The Table 5 mode each field's selection threshold is tuned for.
TUNE_MODE = {"verbs": "exact", "arguments": "partial"}


@dataclass
class FieldSetup:
    name: str  # verbs | arguments
    candidates: pd.DataFrame
    labels: np.ndarray  # per candidate (read only on training / validation clips)
    gold: list[frozenset[str]]  # per clip
    rate_columns: tuple[str, ...]
    dedupe_overlap: bool
    max_items: int
    prior_items: int = 0  # propose the training folds' most frequent gold items on every clip
    classifier: VerbClassifier | None = None  # clip-level classifier: its probabilities and top items join


def feature_matrix(setup: FieldSetup, rates: pd.DataFrame) -> np.ndarray:
    skip = {"clip", "text", "head", "prevword", "nextword", "text_src"}
    cols = [c for c in setup.candidates.columns if c not in skip]
    return np.hstack([setup.candidates[cols].to_numpy(np.float64), rates.to_numpy(np.float64)])


def with_prior(setup: FieldSetup, train_clips: np.ndarray, n_clips: int) -> FieldSetup:
    """``setup`` plus the prior candidates of one fold: the most frequent gold items of its training clips."""
    if not setup.prior_items:
        return setup
    counts = Counter(item for i in train_clips for item in setup.gold[i])
    items = [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:setup.prior_items]]
    return with_candidates(setup, T.add_prior_candidates(setup.candidates, items, n_clips), prior_items=0)


def with_candidates(setup: FieldSetup, candidates: pd.DataFrame, **changes) -> FieldSetup:
    """``setup`` with new candidates, labelled against its gold (exact items)."""
    labels = np.array([t in setup.gold[c] for c, t in zip(candidates["clip"], candidates["text"])], dtype=bool)
    return replace(setup, candidates=candidates, labels=labels, **changes)


def with_classifier(setup: FieldSetup, fold: np.ndarray, train: np.ndarray, others: np.ndarray) -> FieldSetup:
    """``setup`` plus the clip classifier's features and candidates for one held-out fold: fitted on the
    gold of ``train`` (cross-fitted there), applied to ``others``."""
    if setup.classifier is None:
        return setup
    probs, items = setup.classifier.probabilities(setup.gold, fold, train, others)
    clips = np.union1d(train, others)
    cands = add_classifier_candidates(setup.candidates, probs, items, clips, setup.classifier.candidates)
    return with_candidates(setup, cands, classifier=None)


@dataclass(frozen=True)
class ModelCandidate:
    """One candidate of nested selection for a field: boosting settings, and whether the clip-level
    verb classifier's features and candidates join (only where the field has one)."""

    boosting: dict  # max_iter, learning_rate, max_leaf_nodes
    classifier: bool | None = None  # None: the field's classifier if it has one (not a choice)

    def settings(self) -> dict:
        return {**self.boosting, **({"verb_classifier": self.classifier} if self.classifier is not None else {})}


def _field_f1(setup: FieldSetup, clips: np.ndarray, predicted: dict[int, list[str]], cache: SimilarityCache) -> float:
    gold = [setup.gold[i] for i in clips]
    pred = [frozenset(predicted.get(int(i), [])) for i in clips]
    return score_clips(gold, pred, [True] * len(clips), TUNE_MODE[setup.name], cache).f1


def _best_threshold(setup: FieldSetup, candidates: pd.DataFrame, prob: np.ndarray, clips: np.ndarray,
                    thresholds: list[float], cache: SimilarityCache) -> tuple[float, float]:
    """The selection threshold with the best F1 on ``clips`` (the first on ties), and that F1."""
    best_t, best_f1 = thresholds[0], -1.0
    for t in thresholds:
        chosen = T.select(candidates, prob, clips, t, setup.max_items, setup.dedupe_overlap)
        f1 = _field_f1(setup, clips, chosen, cache)
        if f1 > best_f1 + 1e-12:
            best_t, best_f1 = t, f1
    return best_t, best_f1


def _crossfit_f1(setup: FieldSetup, candidates: pd.DataFrame, prob: np.ndarray, clips: np.ndarray,
                 halves: np.ndarray, thresholds: list[float], cache: SimilarityCache) -> float:
    """F1 on ``clips`` when each half of their recipes is cut at the threshold chosen on the other half."""
    predicted: dict[int, list[str]] = {}
    for half in (0, 1):
        t, _ = _best_threshold(setup, candidates, prob, clips[halves != half], thresholds, cache)
        predicted.update(T.select(candidates, prob, clips[halves == half], t, setup.max_items, setup.dedupe_overlap))
    return _field_f1(setup, clips, predicted, cache)


def cross_validate_field(setup: FieldSetup, fold: np.ndarray, inner: np.ndarray, group: np.ndarray, *,
                         seed: int, model_params: dict, smoothing: float, thresholds: list[float],
                         cache: SimilarityCache, model_candidates: list[ModelCandidate] | None = None,
                         recipes: np.ndarray | None = None,
                         held_out: Sequence[int] | None = None) -> tuple[list[list[str] | None], dict]:
    """Out-of-fold predictions of one field, and per-fold info.

    With several ``model_candidates`` each held-out fold chooses one on its own inner-validation
    recipes (nested selection): each candidate's threshold is chosen on one half of those recipes
    and scored on the other, both ways (cookproc.learn.selection's cross-fitting); ``recipes``
    (per clip) makes the halves. Without, the one candidate is ``model_params`` with the classifier.
    ``held_out``: score only these folds (their clips' predictions; the others' stay None), as the
    deployed extractor does with new clips (cookproc.supervised.deploy).
    """
    models = model_candidates or [ModelCandidate(dict(model_params))]
    if len(models) > 1 and recipes is None:
        raise ValueError("choosing among model candidates needs the clips' recipes")
    n = len(setup.gold)
    has_gold = np.array([bool(g) for g in setup.gold])
    out: list[list[str] | None] = [None] * n
    info = {}
    folds = sorted(np.unique(fold).tolist()) if held_out is None else sorted(held_out)
    progress = Progress(f"{setup.name} cross-validation", len(folds), unit="folds", log=log)
    for f in folds:
        start = time.perf_counter()
        train, val, test = split_indices(fold, inner, f)
        train_lab = train[has_gold[train]]  # annotated clips: where the gold decides every label
        val_lab = val[has_gold[val]]
        try:
            halves = validation_halves(np.asarray(recipes)[val_lab]) if len(models) > 1 else None
        except ValueError as error:
            raise ValueError(f"{setup.name} fold {f}: {error}") from None
        base = with_prior(setup, train_lab, n)
        with_clf = with_classifier(base, fold, train_lab, np.concatenate([val, test])) if base.classifier else None
        fitted, table = [], []
        for model_candidate in models:
            use_classifier = with_clf is not None and model_candidate.classifier is not False
            setup_f = with_clf if use_classifier else replace(base, classifier=None)
            if "text_src" in setup.rate_columns:
                # How often an item is gold when the sentence says it vs when only a prior or a
                # neighbour proposes it ("add" is gold for 'add the salt' far more than for 'salt').
                cands = setup_f.candidates.copy()
                cands["text_src"] = cands["text"] + np.where(cands["src_sentence"] > 0, "|said", "|unsaid")
                setup_f = replace(setup_f, candidates=cands)
            clip_of = setup_f.candidates["clip"].to_numpy()
            rates = T.rate_features(setup_f.candidates, setup_f.labels, train_lab, group[clip_of], setup.rate_columns,
                                    smoothing)
            X = feature_matrix(setup_f, rates)
            rows_train = np.isin(clip_of, train_lab)
            model = T.fit_model(X[rows_train], setup_f.labels[rows_train], seed, **model_candidate.boosting)
            rows_val = np.isin(clip_of, val_lab)
            p_val = model.predict_proba(X[rows_val])[:, 1]
            value = (_crossfit_f1(setup, setup_f.candidates[rows_val], p_val, val_lab, halves, thresholds, cache)
                     if halves is not None else None)
            fitted.append((model_candidate, setup_f, X, rows_train, rows_val, model, p_val))
            if value is not None:
                table.append({**model_candidate.settings(), "value": round(value, 6)})
        chosen = max(range(len(fitted)), key=lambda k: (table[k]["value"], -k)) if table else 0
        model_candidate, setup_f, X, rows_train, rows_val, model, p_val = fitted[chosen]
        best_t, best_f1 = _best_threshold(setup, setup_f.candidates[rows_val], p_val, val_lab, thresholds, cache)
        clip_of = setup_f.candidates["clip"].to_numpy()
        rows_test = np.isin(clip_of, test)
        p_test = model.predict_proba(X[rows_test])[:, 1]
        predicted = T.select(setup_f.candidates[rows_test], p_test, test, best_t, setup.max_items, setup.dedupe_overlap)
        for i in test:
            if out[i] is not None:
                raise RuntimeError(f"fold {f}: clip {i} predicted twice")
            out[i] = predicted.get(int(i), [])
        info[f] = {"threshold": best_t, "val_f1": round(best_f1, 4), "train_candidates": int(rows_train.sum()),
                   **({"selected": model_candidate.settings(), "candidates": table} if table else {}),
                   "seconds": round(time.perf_counter() - start, 1)}
        log.info("%s fold %d: %s", setup.name, f, {k: v for k, v in info[f].items() if k != "candidates"})
        progress.step()
    missing = [i for i, v in enumerate(out) if v is None and fold[i] in folds]
    if missing:
        raise RuntimeError(f"{len(missing)} clips never predicted")
    return out, info
