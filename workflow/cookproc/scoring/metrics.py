"""The paper's scoring protocol (docs/protocol.md §3), to the letter, and fast.

Key clips: binary accuracy / precision / recall / F1 over all clips (positive class = key).

Tuples, per field (verbs, arguments) and matching mode, macro-averaged over the *counted* clips:
for each counted clip P_c = TP_c/|pred set| (0 if empty), R_c = TP_c/|gold set| (0 if empty);
P = mean P_c, R = mean R_c, F1 = 2PR/(P+R). Exact: TP = |gold ∩ pred|. Fuzzy / partial fuzzy:
TP = (maximum-weight one-to-one assignment of an integer similarity 0..100)/100.

The similarities are fuzzywuzzy 0.18's on its difflib backend, compiled
(:mod:`cookproc.scoring.similarity`) and cached per pair; the assignment is solved by SciPy's C
implementation of the Hungarian problem. Any exact solver gives the same optimal total, which is
all that is scored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from cookproc.scoring.similarity import SIMILARITIES, SimilarityCache

MODES = ("exact", "fuzzy", "partial")
FIELDS = ("verbs", "arguments")
COUNTINGS = ("oracle", "predicted", "predicted-masked")


def true_positives(gold: frozenset[str], pred: frozenset[str], mode: str,
                   cache: SimilarityCache | None = None) -> float:
    """TP of one clip: exact intersection size, or the optimal assignment's total similarity / 100."""
    if mode == "exact":
        return float(len(gold & pred))
    if not gold or not pred:
        return 0.0
    # Sorted so the profit matrix (and so any tie among optimal assignments) is reproducible.
    profit = (cache or SimilarityCache()).matrix(mode, sorted(gold), sorted(pred))
    if len(profit) == 1:  # one gold item: the best single match is the optimal assignment
        return max(profit[0]) / 100
    if len(profit[0]) == 1:
        return max(row[0] for row in profit) / 100
    matrix = np.array(profit, dtype=np.int64)
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return int(matrix[rows, cols].sum()) / 100


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    n_clips: int

    def as_percent(self) -> "PRF":
        return PRF(self.precision * 100, self.recall * 100, self.f1 * 100, self.n_clips)


def f1_of(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


@dataclass(frozen=True)
class ClipScores:
    """Per-clip precision and recall of the counted clips (positions in the benchmark's clip order)."""

    positions: list[int]
    precision: list[float]
    recall: list[float]

    def aggregate(self) -> PRF:
        total = len(self.positions)
        if total == 0:
            return PRF(0.0, 0.0, 0.0, 0)
        # Summed in clip order, like upstream's running sums, so the means are the same floats.
        precision, recall = sum(self.precision) / total, sum(self.recall) / total
        return PRF(precision, recall, f1_of(precision, recall), total)


def clip_scores(gold_sets: Sequence[frozenset[str]], pred_sets: Sequence[frozenset[str]],
                counted: Iterable[bool], mode: str, cache: SimilarityCache | None = None) -> ClipScores:
    """P_c and R_c of every counted clip."""
    if mode not in MODES:
        raise ValueError(f"unknown matching mode {mode!r}; expected one of {MODES}")
    if len(gold_sets) != len(pred_sets):
        raise ValueError(f"{len(gold_sets)} gold clips but {len(pred_sets)} predicted clips")
    cache = cache or SimilarityCache()
    out = ClipScores([], [], [])
    for position, (gold, pred, count) in enumerate(zip(gold_sets, pred_sets, counted, strict=True)):
        if not count:
            continue
        tp = true_positives(gold, pred, mode, cache)
        out.positions.append(position)
        out.precision.append(tp / len(pred) if pred else 0.0)
        out.recall.append(tp / len(gold) if gold else 0.0)
    return out


def score_clips(gold_sets: Sequence[frozenset[str]], pred_sets: Sequence[frozenset[str]],
                counted: Iterable[bool], mode: str, cache: SimilarityCache | None = None) -> PRF:
    """Macro-averaged P/R/F1 over the counted clips (fractions, not percent)."""
    return clip_scores(gold_sets, pred_sets, counted, mode, cache).aggregate()


def counted_clips(gold_sets: Sequence[frozenset[str]], predicted_key: Sequence[bool] | None) -> np.ndarray:
    """Oracle (``predicted_key`` None): clips with gold items. Predicted: gold items OR predicted key."""
    has_gold = np.fromiter((bool(g) for g in gold_sets), dtype=bool, count=len(gold_sets))
    if predicted_key is None:
        return has_gold
    return has_gold | np.asarray(predicted_key, dtype=bool)


def mask_predictions(pred_sets: Sequence[frozenset[str]], predicted_key: Sequence[bool]) -> list[frozenset[str]]:
    """The stricter variant: a clip predicted non-key predicts nothing."""
    return [p if k else frozenset() for p, k in zip(pred_sets, predicted_key, strict=True)]


@dataclass(frozen=True)
class KeyClipScore:
    accuracy: float
    precision: float
    recall: float
    f1: float
    n_clips: int


def score_keyclips(gold: Sequence[bool], pred: Sequence[bool]) -> KeyClipScore:
    """Binary accuracy/precision/recall/F1 (as scikit-learn computes them; 0 where undefined)."""
    gold = np.asarray(gold, dtype=bool)
    pred = np.asarray(pred, dtype=bool)
    if gold.shape != pred.shape:
        raise ValueError(f"{gold.size} gold flags but {pred.size} predictions")
    tp = int(np.sum(gold & pred))
    fp = int(np.sum(~gold & pred))
    fn = int(np.sum(gold & ~pred))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    accuracy = float(np.mean(gold == pred)) if gold.size else 0.0
    return KeyClipScore(accuracy, precision, recall, f1_of(precision, recall), int(gold.size))


def score_table5_cells(gold: dict[str, Sequence[frozenset[str]]], pred: dict[str, Sequence[frozenset[str]]],
                       predicted_key: Sequence[bool] | None, *, masked: bool = False,
                       cache: SimilarityCache | None = None) -> list[dict]:
    """The 2 fields × 3 modes of one Table 5 block, as rows of fractions (with their per-clip
    scores under ``"clips"``).

    ``gold`` and ``pred`` map field → per-clip sets (same clip order). ``predicted_key`` None gives
    the oracle block; otherwise the predicted-key-clips block, with predictions emptied on clips
    predicted non-key when ``masked``.
    """
    cache = cache or SimilarityCache()
    rows = []
    for field in FIELDS:
        pred_sets = pred[field]
        if masked:
            if predicted_key is None:
                raise ValueError("the masked variant needs predicted key clips")
            pred_sets = mask_predictions(pred_sets, predicted_key)
        counted = counted_clips(gold[field], predicted_key)
        for mode in SIMILARITIES:
            cache.prefill(mode, ((g, p) for gs, ps, c in zip(gold[field], pred_sets, counted) if c
                                 for g in gs for p in ps))
        for mode in MODES:
            per_clip = clip_scores(gold[field], pred_sets, counted, mode, cache)
            score = per_clip.aggregate()
            rows.append({"field": field, "mode": mode, "n_clips": score.n_clips,
                         "precision": score.precision, "recall": score.recall, "f1": score.f1,
                         "clips": per_clip})
    return rows
