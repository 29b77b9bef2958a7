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
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.keyclips.folds import split_indices
from cookproc.keyclips.thresholds import best_threshold
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


def cross_validate(fold: np.ndarray, inner: np.ndarray, labels: np.ndarray, fit_predict: FitPredict,
                   threshold_metric: str = "f1") -> CVResult:
    """Run ``fit_predict`` for every held-out fold; thresholds from inner-validation scores only."""
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
        val_scores, test_scores, fold_info = fit_predict(train, val, test)
        t = best_threshold(labels[val], val_scores, threshold_metric)
        if not np.isnan(score[test]).all():
            raise RuntimeError(f"fold {f}: clips scored twice")
        score[test] = test_scores
        is_key[test] = test_scores >= t
        thresholds[f] = t
        info[f] = {**fold_info, "n_train": len(train), "n_val": len(val), "n_test": len(test),
                   "threshold": t, "seconds": round(time.perf_counter() - start, 1)}
        log.info("fold %d: %s", f, info[f])
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


def per_fold_fit_predict(fold: np.ndarray, fits: dict[int, FitPredict]) -> FitPredict:
    """A :data:`FitPredict` that hands each held-out fold to its own ``fits[f]`` (inputs built per fold)."""

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        return fits[held_out_fold(fold, test, fits)](train, val, test)

    return fit


def blend_with_heads(fit_predict: FitPredict, fold: np.ndarray, heads: dict[int, np.ndarray],
                     weight: float) -> FitPredict:
    """``(1 - weight) * fit_predict + weight * heads[f]`` on validation and test clips of held-out fold f.

    ``heads[f]``: every clip's probability from a model that never saw fold f's recipes (a tuned
    encoder's head). Blended with fixed weights, not learned: a model trained on the heads' scores
    of training clips would learn to trust them more than they deserve on unseen recipes.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"head weight must be in [0, 1], got {weight}")

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        val_scores, test_scores, info = fit_predict(train, val, test)
        head = heads[held_out_fold(fold, test, heads)]
        return ((1 - weight) * val_scores + weight * head[val], (1 - weight) * test_scores + weight * head[test],
                {**info, "head_weight": weight})

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
