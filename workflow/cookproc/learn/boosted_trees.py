"""Gradient-boosted trees saved as plain arrays, and applied without scikit-learn's pickles.

A deployed model folder holds no pickles (:mod:`cookproc.core.model_folders`), so a fitted
``HistGradientBoostingClassifier`` (binary, numeric features) is kept as the arrays of its trees:
per node the feature, threshold, where missing values go, the children and the leaf value, all
trees' nodes concatenated with an offset per tree, and the baseline log-odds. :func:`predict_proba`
walks them: a value at or below the node's threshold goes left, a missing one (NaN) goes where
training sent it, and the leaves' values are summed tree by tree (the order scikit-learn sums in)
onto the baseline; the probability is the logistic of that sum.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

#: Keys of the arrays that hold one fitted classifier (prefixed when several share a file).
ARRAY_KEYS = ("feature", "threshold", "missing_left", "left", "right", "leaf", "value", "tree_start", "baseline")


def fit_classifier(X: np.ndarray, y: np.ndarray, *, max_iter: int, learning_rate: float, max_leaf_nodes: int,
                   seed: int):
    """A binary classifier with every random choice fixed (no early stopping: its validation split
    would be drawn at random)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=max_iter, learning_rate=learning_rate,
                                          max_leaf_nodes=max_leaf_nodes, early_stopping=False,
                                          random_state=seed).fit(X, y)


def tree_arrays(model) -> dict[str, np.ndarray]:
    """The fitted classifier's trees as arrays (:data:`ARRAY_KEYS`)."""
    if getattr(model, "n_trees_per_iteration_", 1) != 1:
        raise ValueError("only binary classifiers are kept as arrays")
    nodes = [predictors[0].nodes for predictors in model._predictors]
    if any(n["is_categorical"].any() for n in nodes):
        raise ValueError("categorical splits are not kept as arrays")
    starts = np.cumsum([0] + [len(n) for n in nodes[:-1]]).astype(np.int64)
    every = np.concatenate(nodes) if nodes else np.zeros(0, dtype=model._predictors[0][0].nodes.dtype)
    return {"feature": every["feature_idx"].astype(np.int64), "threshold": every["num_threshold"].astype(np.float64),
            "missing_left": every["missing_go_to_left"].astype(bool), "left": every["left"].astype(np.int64),
            "right": every["right"].astype(np.int64), "leaf": every["is_leaf"].astype(bool),
            "value": every["value"].astype(np.float64), "tree_start": starts,
            "baseline": np.asarray(model._baseline_prediction, dtype=np.float64).reshape(1)}


def predict_proba(trees: dict[str, np.ndarray], X: np.ndarray) -> np.ndarray:
    """P(class 1) of each row of ``X`` under the trees of :func:`tree_arrays`."""
    X = np.asarray(X, dtype=np.float64)
    raw = np.full(len(X), trees["baseline"][0])
    rows = np.arange(len(X))
    for start in trees["tree_start"]:
        node = np.full(len(X), start, dtype=np.int64)
        active = ~trees["leaf"][node]
        while active.any():
            at = node[active]
            x = X[rows[active], trees["feature"][at]]
            go_left = np.where(np.isnan(x), trees["missing_left"][at], x <= trees["threshold"][at])
            node[active] = start + np.where(go_left, trees["left"][at], trees["right"][at])
            active = ~trees["leaf"][node]
        raw += trees["value"][node]
    return expit(raw)
