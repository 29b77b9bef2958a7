"""Cross-validated key-clip systems: every clip is scored once, by the model that did not see its recipe.

The driver of every learned selector (the neural net in cookproc.keyclips.neural, the TF-IDF
baseline, the supervised classifier); it imports no torch, so the CPU systems never depend on the net.

For each fold f: fit on the other folds' training recipes, early-stop and choose the decision
threshold on their inner-validation recipes, score fold f. The output is one row per clip with the
out-of-fold probability, the fold's threshold decision and the fold id (the KEYCLIPS schema).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.learn.folds import split_indices
from cookproc.learn.selection import choose
from cookproc.learn.thresholds import best_threshold
from cookproc.core.logs import Progress

log = logging.getLogger(__name__)

#: fit(train_idx, val_idx, test_idx) -> (validation scores, test scores, info dict)
FitPredict = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, dict]]


@dataclass
class CVResult:
    score: np.ndarray  # out-of-fold probability per clip
    is_key: np.ndarray  # decision with the clip's fold threshold
    fold: np.ndarray
    thresholds: dict[int, float]
    info: dict[int, dict] = field(default_factory=dict)


@dataclass(frozen=True)
class Candidate:
    """One candidate configuration's scores for one held-out fold (see :func:`nested_cross_validate`)."""

    settings: dict
    val: np.ndarray  # inner-validation scores
    test: np.ndarray  # held-out fold's scores
    info: dict = field(default_factory=dict)


#: fit(train_idx, val_idx, test_idx) -> every candidate's scores, fitted on train_idx only
FitCandidates = Callable[[np.ndarray, np.ndarray, np.ndarray], list[Candidate]]


def cross_validate(fold: np.ndarray, inner: np.ndarray, labels: np.ndarray, fit_predict: FitPredict,
                   threshold_metric: str = "f1") -> CVResult:
    """Run ``fit_predict`` for every held-out fold; thresholds from inner-validation scores only."""

    def one_candidate(train: np.ndarray, val: np.ndarray, test: np.ndarray) -> list[Candidate]:
        val_scores, test_scores, info = fit_predict(train, val, test)
        return [Candidate({}, val_scores, test_scores, info)]

    return nested_cross_validate(fold, inner, labels, one_candidate, [threshold_metric])


def nested_cross_validate(fold: np.ndarray, inner: np.ndarray, labels: np.ndarray, fit: FitCandidates,
                          threshold_metrics: Sequence[str], recipes: Sequence[str] | None = None,
                          objective: str = "f1_accuracy") -> CVResult:
    """Cross-validation where each held-out fold chooses among candidates on its inner validation.

    For held-out fold f, ``fit`` scores every candidate from the other folds' training recipes; the
    (candidate, threshold rule) with the best cross-fitted ``objective`` on their inner-validation
    recipes (cookproc.learn.selection) is chosen, its threshold is chosen on all of those clips,
    and fold f is scored with it. With one candidate and one rule nothing is compared (``recipes``
    may then be None). Each fold's info records its choice and every candidate's value.
    """
    n = len(labels)
    score = np.full(n, np.nan)
    is_key = np.zeros(n, dtype=bool)
    thresholds, info = {}, {}
    folds = sorted(np.unique(fold).tolist())
    progress = Progress("cross-validation", len(folds), unit="folds", log=log)
    for f in folds:
        train, val, test = split_indices(fold, inner, f)
        if len(val) == 0 or len(train) == 0:
            raise ValueError(f"fold {f}: {len(train)} training and {len(val)} inner-validation clips; every "
                             "fold needs at least two recipes (fewer folds, or more recipes)")
        start = time.perf_counter()
        candidates = fit(train, val, test)
        selection = {}
        if len(candidates) * len(threshold_metrics) > 1:
            if recipes is None:
                raise ValueError("choosing among candidates needs the clips' recipes")
            try:
                choice = choose(labels[val], np.asarray(recipes)[val], [(c.settings, c.val) for c in candidates],
                                threshold_metrics, objective)
            except ValueError as error:
                raise ValueError(f"fold {f}: {error}") from None
            chosen, rule = candidates[choice.index], choice.threshold_metric
            selection = {"selected": {**chosen.settings, "threshold_metric": rule},
                         "selection_value": choice.value, "candidates": choice.table}
        else:
            chosen, rule = candidates[0], threshold_metrics[0]
        t = best_threshold(labels[val], chosen.val, rule)
        if not np.isnan(score[test]).all():
            raise RuntimeError(f"fold {f}: clips scored twice")
        score[test] = chosen.test
        is_key[test] = chosen.test >= t
        thresholds[f] = t
        info[f] = {**chosen.info, "n_train": len(train), "n_val": len(val), "n_test": len(test),
                   "threshold": t, **selection, "seconds": round(time.perf_counter() - start, 1)}
        log.info("fold %d: %s", f, {k: v for k, v in info[f].items() if k != "candidates"})
        progress.step()
    if np.isnan(score).any():
        raise RuntimeError(f"{int(np.isnan(score).sum())} clips were never scored")
    return CVResult(score, is_key, fold.astype(np.int64), thresholds, info)


def held_out_fold(fold: np.ndarray, test: np.ndarray, available) -> int:
    """The one fold that ``test`` clips belong to, checked against the folds that have inputs."""
    held_out = np.unique(fold[test]).tolist()
    if len(held_out) != 1 or held_out[0] not in available:
        raise ValueError(f"test clips of folds {held_out}; inputs exist for folds {sorted(available)}")
    return held_out[0]


def blend_scores(scores: np.ndarray, head: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - weight) * scores + weight * head``: a model's clip scores with a finetuned head's probability."""
    return (1 - weight) * scores + weight * head


def _check_weight(weight: float) -> None:
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"head weight must be in [0, 1], got {weight}")


def candidates_with_heads(fits: Sequence[tuple[dict, FitPredict]], fold: np.ndarray,
                          heads: dict[int, np.ndarray] | None, weights: Sequence[float]) -> FitCandidates:
    """Candidates for :func:`nested_cross_validate`: each model of ``fits`` (settings, fit) trained once
    per fold, its scores blended with the held-out fold's head at every weight.

    ``heads[f]``: every clip's probability from a model that never saw fold f's recipes (a finetuned
    encoder's head). Blended with fixed weights, not learned: a model trained on the heads' scores
    of training clips would learn to trust them more than they deserve on unseen recipes.

    Without ``heads`` every fit is one candidate as it is (``weights`` unused).
    """
    for weight in weights:
        _check_weight(weight)

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray) -> list[Candidate]:
        out = []
        for settings, fit_predict in fits:
            val_scores, test_scores, info = fit_predict(train, val, test)
            if heads is None:
                out.append(Candidate(dict(settings), val_scores, test_scores, info))
                continue
            head = heads[held_out_fold(fold, test, heads)]
            for weight in weights:
                out.append(Candidate({**settings, "head_weight": weight}, blend_scores(val_scores, head[val], weight),
                                     blend_scores(test_scores, head[test], weight), {**info, "head_weight": weight}))
        return out

    return fit


def keyclips_table(system: str, clips: pd.DataFrame, result: CVResult) -> pa.Table:
    """A KEYCLIPS table (cookproc.core.schemas) for a cross-validated system."""
    return pa.table(
        {
            "system": pa.array([system] * len(clips), pa.string()),
            "video_id": pa.array(clips["video_id"].astype(str).tolist(), pa.string()),
            "clip_idx": pa.array(clips["clip_idx"].to_numpy().astype(np.int32)),
            "is_key": pa.array(result.is_key.astype(bool)),
            "score": pa.array(result.score.astype(np.float64)),
            "fold": pa.array(result.fold.astype(np.int32)),
        }
    )
