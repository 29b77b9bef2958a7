"""Decision thresholds of the key-clip selectors, chosen on inner-validation scores (no torch).

Every cross-validated system (neural net, TF-IDF, supervised classifier) turns its scores into key
clips with the threshold :func:`best_threshold` picks on the validation clips of the other folds;
the ``calibrated_`` rules first fit a Platt scaling (:func:`platt_scaling`) of those scores.
"""
from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)


#: What a decision threshold can maximise on validation clips. F1 is flat near its maximum while
#: accuracy still climbs with the threshold, so ``f1_accuracy`` (their mean) finds a threshold with
#: nearly the best F1 and a better accuracy; Table 4 reports both measures. The ``calibrated_``
#: forms maximise the expected measure under Platt-calibrated validation probabilities instead of
#: the measure on the validation labels themselves (see :func:`best_threshold`).
BASE_METRICS = ("f1", "accuracy", "f1_accuracy")
THRESHOLD_METRICS = BASE_METRICS + tuple(f"calibrated_{m}" for m in BASE_METRICS)


def _logit(scores: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(scores, dtype=np.float64), 1e-7, 1 - 1e-7)
    return np.log(p) - np.log1p(-p)


def platt_scaling(labels: np.ndarray, scores: np.ndarray, iterations: int = 100) -> tuple[float, float]:
    """(a, b) of P(key | score) = sigmoid(a * logit(score) + b), by Newton's method on the log-likelihood.

    A tiny ridge keeps it finite on separable data; deterministic (no random state, no solver choice).
    """
    y = np.asarray(labels, dtype=np.float64)
    x = np.stack([_logit(scores), np.ones(len(y))], axis=1)
    w = np.zeros(2)
    ridge = 1e-6 * np.eye(2)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ w)))
        step = np.linalg.solve(x.T @ (x * (p * (1 - p))[:, None]) + ridge, x.T @ (p - y) + ridge @ w)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return float(w[0]), float(w[1])


def best_threshold(labels: np.ndarray, scores: np.ndarray, metric: str = "f1") -> float:
    """The threshold t (predict key when score >= t) that maximises ``metric`` on these clips.

    Candidates are midpoints between consecutive distinct scores; ties go to the higher threshold
    (fewer predicted key clips). A ``calibrated_`` metric first fits a Platt scaling of the scores
    to the labels and then maximises the measure's expectation when each clip is key with its
    calibrated probability: on ~2,000 validation clips that curve is smooth, where the measure on
    the labels jumps with every clip (its argmax wanders by a few hundredths between folds). If the
    scores do not rise with the labels (calibration slope <= 0) the labels are used as they are.
    """
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    if metric not in THRESHOLD_METRICS:
        raise ValueError(f"threshold metric must be one of {THRESHOLD_METRICS}, got {metric!r}")
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], labels[order].astype(np.float64)
    base = metric.removeprefix("calibrated_")
    if metric != base:
        a, b = platt_scaling(labels, scores)
        if a > 0:
            y = 1 / (1 + np.exp(-(a * _logit(s) + b)))  # expected labels
        else:
            log.warning("validation scores do not rise with the labels (Platt slope %.3g): threshold on the labels", a)
    n, pos = len(y), float(y.sum())
    cut = np.flatnonzero(np.r_[s[1:] != s[:-1], True])  # cut only between different scores
    tp = np.cumsum(y)[cut]  # predicting the top k+1 clips as key
    k = cut + 1.0
    f1 = 2 * tp / np.maximum(k + pos, 1)
    accuracy = (n - k - pos + 2 * tp) / max(n, 1)
    value = {"f1": f1, "accuracy": accuracy, "f1_accuracy": (f1 + accuracy) / 2}[base]
    best = int(np.argmax(value))  # first maximum = highest threshold
    k = cut[best]
    return float(s[k] if k + 1 == len(s) else (s[k] + s[k + 1]) / 2)
