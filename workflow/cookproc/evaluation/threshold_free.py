"""Threshold-free scores of a key-clip system (Table 4): AUC-ROC and average precision of its
per-clip scores against the gold key clips, pooled over every clip (out of fold for a
cross-validated system: one ranking across the folds' models) and as the mean over folds of each
fold's own (scores compared only with scores of the same model)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

#: Table 4's threshold-free columns (fractions, not percentages): AUC-ROC and average precision
#: pooled over every clip's score (out of fold: one ranking across folds whose scores can be scaled
#: differently), and the mean over folds of each fold's own.
TABLE4_POOLED = ("auc_roc", "average_precision")
TABLE4_FOLD_MEANS = ("auc_roc_fold_mean", "average_precision_fold_mean")
#: The headers of the threshold-free columns, pooled and per fold.
THRESHOLD_FREE_HEADERS = ("AUC-ROC (pooled out-of-fold)", "AP (pooled out-of-fold)", "AUC-ROC (mean per fold)",
                          "AP (mean per fold)")
#: What table4.md says under the table about those columns.
TABLE4_NOTE = ("AUC-ROC and AP (average precision) are threshold-free. *Pooled out-of-fold*: one ranking of every "
               "clip's score, each scored by the fold model that never saw its recipe; the folds' models can scale "
               "their scores differently (each fold chooses its own settings, head weight and threshold), which can "
               "pull the pooled value below the folds' own. *Mean per fold*: each fold's AUC-ROC and AP over the "
               "clips it scored, averaged over the folds (a fold whose clips are all key or all non-key left out). "
               "A mean over seeds for a row over several seeds.\n")


def mean_over_runs(values: Sequence[tuple[float, float] | None]) -> tuple[float | None, float | None]:
    """The mean over a system's runs of (AUC-ROC, AP); None where a run has none."""
    if not values or any(v is None for v in values):
        return None, None
    return float(np.mean([v[0] for v in values])), float(np.mean([v[1] for v in values]))


def threshold_free_scores(gold: Sequence[bool], scores: Sequence[float | None]) -> tuple[float, float] | None:
    """AUC-ROC and average precision (scikit-learn) of per-clip scores against the gold key clips;
    None when some clip has no score (a system with binary decisions only) or the gold labels have
    one class only (both undefined)."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    gold = np.asarray(gold, dtype=bool)
    if not len(scores) or any(s is None for s in scores) or gold.all() or not gold.any():
        return None
    scores = np.asarray(scores, dtype=float)
    return float(roc_auc_score(gold, scores)), float(average_precision_score(gold, scores))


def fold_mean_scores(gold: Sequence[bool], scores: Sequence[float | None],
                     folds: Sequence[int | None]) -> tuple[float, float] | None:
    """The mean over cross-validation folds of each fold's own AUC-ROC and average precision (the
    clips it scored): scores compared only with scores of the same model. None without a score and a
    fold on every clip; a fold whose clips are all key or all non-key (both undefined) is left out."""
    if not len(scores) or any(s is None for s in scores) or any(f is None for f in folds):
        return None
    per_fold = [threshold_free_scores([gold[i] for i in members], [scores[i] for i in members])
                for fold in sorted(set(folds)) for members in [[i for i, f in enumerate(folds) if f == fold]]]
    defined = [p for p in per_fold if p is not None]
    return mean_over_runs(defined) if defined else None
