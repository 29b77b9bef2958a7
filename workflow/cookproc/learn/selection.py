"""Nested selection: each outer fold chooses a learned selector's settings on its own training recipes.

A configuration compared on the out-of-fold scores that are then reported makes those scores
optimistic. Here every candidate (a net input, a head weight, a threshold rule) is fitted inside the
outer fold's training recipes, and the candidates are compared on that fold's inner-validation
recipes only; the test recipes never take part in the choice.

The inner-validation clips also choose the decision threshold, so a candidate scored with a
threshold fitted to the same clips would be rewarded for how well its rule fits noise. The score of
a candidate is therefore cross-fitted: the inner-validation recipes are split into two halves of
about equal size, each half's decisions use the threshold chosen on the other half, and the
objective is measured on all of them. Torch-free.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from cookproc.learn.folds import assign_folds
from cookproc.learn.thresholds import BASE_METRICS, best_threshold

#: What a candidate maximises on inner-validation clips (measured on the labels).
SELECTION_OBJECTIVES = BASE_METRICS


def decision_measure(labels: np.ndarray, predicted: np.ndarray, objective: str) -> float:
    """F1 of the key class, accuracy, or their mean, of boolean decisions."""
    if objective not in SELECTION_OBJECTIVES:
        raise ValueError(f"selection objective must be one of {SELECTION_OBJECTIVES}, got {objective!r}")
    labels, predicted = np.asarray(labels, dtype=bool), np.asarray(predicted, dtype=bool)
    tp = float((labels & predicted).sum())
    f1 = 2 * tp / max(float(labels.sum() + predicted.sum()), 1.0)
    accuracy = float((labels == predicted).mean()) if len(labels) else 0.0
    return {"f1": f1, "accuracy": accuracy, "f1_accuracy": (f1 + accuracy) / 2}[objective]


def validation_halves(recipes: Sequence[str]) -> np.ndarray:
    """Per clip, which half (0 or 1) of the inner-validation recipes it belongs to.

    Whole recipes, balanced by clip count (largest first into the smaller half, as the outer folds
    are), independent of the clips' order.
    """
    recipes = np.asarray(recipes, dtype=object)
    names, sizes = np.unique(recipes.astype(str), return_counts=True)
    if len(names) < 2:
        raise ValueError(f"nested selection cross-fits thresholds between two halves of the inner-validation "
                         f"recipes: it needs at least 2 inner-validation recipes, got {len(names)} (give the folds "
                         "more recipes, or set the candidate sets to null to fix every setting)")
    half_of = assign_folds(dict(zip(names.tolist(), sizes.tolist())), k=2, seed=0)
    return np.array([half_of[str(r)] for r in recipes], dtype=np.int64)


def crossfit_value(labels: np.ndarray, scores: np.ndarray, halves: np.ndarray, threshold_metric: str,
                   objective: str) -> float:
    """``objective`` of the decisions where each half is cut at the threshold chosen on the other half."""
    labels, scores = np.asarray(labels, dtype=bool), np.asarray(scores, dtype=np.float64)
    predicted = np.zeros(len(labels), dtype=bool)
    for half in (0, 1):
        own, other = halves == half, halves != half
        predicted[own] = scores[own] >= best_threshold(labels[other], scores[other], threshold_metric)
    return decision_measure(labels, predicted, objective)


def candidate_grid(space: Mapping[str, Sequence]) -> list[dict]:
    """Every combination of the candidate values, in the declared order of keys and values."""
    for key, values in space.items():
        if len(values) == 0:
            raise ValueError(f"candidate set {key!r} is empty")
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"candidate set {key!r} repeats a value: {list(values)}")
    keys = list(space)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(space[k] for k in keys))]


@dataclass(frozen=True)
class Choice:
    """The candidate a fold chose, and every candidate's cross-fitted inner-validation value."""

    index: int  # into the scored candidates
    threshold_metric: str
    value: float
    table: list[dict]  # one row per (candidate, threshold rule): settings, rule, value


def choose(labels: np.ndarray, recipes: Sequence[str], candidates: Sequence[tuple[dict, np.ndarray]],
           threshold_metrics: Sequence[str], objective: str) -> Choice:
    """The best (candidate, threshold rule) by cross-fitted ``objective`` on inner-validation clips.

    ``candidates``: (settings, inner-validation scores) pairs. Ties go to the first in declared order
    (candidates outer, threshold rules inner), so the choice never depends on float noise in sorting.
    """
    if not candidates or not threshold_metrics:
        raise ValueError("nothing to choose from: no candidates or no threshold rules")
    halves = validation_halves(recipes)
    best, table = None, []
    for i, (settings, scores) in enumerate(candidates):
        for rule in threshold_metrics:
            value = crossfit_value(labels, scores, halves, rule, objective)
            table.append({**settings, "threshold_metric": rule, "value": round(value, 6)})
            if best is None or value > best[2]:
                best = (i, rule, value)
    return Choice(best[0], best[1], round(best[2], 6), table)
