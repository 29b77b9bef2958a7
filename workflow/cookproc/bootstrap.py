"""Paired bootstrap confidence intervals over videos for every Table 4 and Table 5 cell.

Clips of one video are not independent (same cook, same recipe, same transcript style), so the
resampling unit is the video: each resample draws the benchmark's videos with replacement and
recomputes every cell from per-video sums (a Table 5 cell is a mean over counted clips, so it is
Σ_videos sum_v / Σ_videos n_v with each video weighted by how often it was drawn). The same
resamples are used for every system (a *paired* bootstrap), so differences between two systems
get intervals too. Percentile intervals; fixed seed; no dependence on anything but the inputs.
"""
from __future__ import annotations

from itertools import combinations
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa


def resample_counts(n_videos: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples × n_videos) how often each video is drawn in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_videos, size=(resamples, n_videos))
    counts = np.zeros((resamples, n_videos), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(resamples), n_videos), draws.ravel()), 1)
    return counts


def _f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    total = precision + recall
    return np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(numerator, denominator, out=np.zeros_like(numerator, dtype=float), where=denominator > 0)


def per_video_sums(video_index: np.ndarray, values: np.ndarray, n_videos: int) -> np.ndarray:
    return np.bincount(video_index, weights=values, minlength=n_videos)


def macro_prf_resamples(video_index: np.ndarray, precision_c: np.ndarray, recall_c: np.ndarray,
                        counts: np.ndarray) -> dict[str, np.ndarray]:
    """Resampled macro P/R/F1 of one Table 5 cell from its counted clips' scores."""
    n_videos = counts.shape[1]
    clips = per_video_sums(video_index, np.ones_like(precision_c), n_videos)
    denominator = counts @ clips
    precision = _ratio(counts @ per_video_sums(video_index, precision_c, n_videos), denominator)
    recall = _ratio(counts @ per_video_sums(video_index, recall_c, n_videos), denominator)
    return {"precision": precision, "recall": recall, "f1": _f1(precision, recall)}


def keyclip_resamples(video_index: np.ndarray, gold: np.ndarray, pred: np.ndarray,
                      counts: np.ndarray) -> dict[str, np.ndarray]:
    """Resampled accuracy/P/R/F1 of one key-clip system."""
    n_videos = counts.shape[1]
    gold, pred = gold.astype(bool), pred.astype(bool)
    tp = counts @ per_video_sums(video_index, (gold & pred).astype(float), n_videos)
    fp = counts @ per_video_sums(video_index, (~gold & pred).astype(float), n_videos)
    fn = counts @ per_video_sums(video_index, (gold & ~pred).astype(float), n_videos)
    correct = counts @ per_video_sums(video_index, (gold == pred).astype(float), n_videos)
    total = counts @ per_video_sums(video_index, np.ones(len(gold)), n_videos)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return {"accuracy": _ratio(correct, total), "precision": precision, "recall": recall,
            "f1": _f1(precision, recall)}


def interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


CI = pa.schema([
    pa.field("system", pa.string(), nullable=False),
    pa.field("keyclips", pa.string(), nullable=False),
    pa.field("counting", pa.string(), nullable=False),
    pa.field("field", pa.string(), nullable=False),
    pa.field("mode", pa.string(), nullable=False),
    pa.field("metric", pa.string(), nullable=False),
    pa.field("value", pa.float64(), nullable=False),
    pa.field("ci_low", pa.float64(), nullable=False),
    pa.field("ci_high", pa.float64(), nullable=False),
])

SIGNIFICANCE = pa.schema([
    pa.field("table", pa.string(), nullable=False),
    pa.field("keyclips", pa.string(), nullable=False),
    pa.field("counting", pa.string(), nullable=False),
    pa.field("field", pa.string(), nullable=False),
    pa.field("mode", pa.string(), nullable=False),
    pa.field("metric", pa.string(), nullable=False),
    pa.field("system_a", pa.string(), nullable=False),
    pa.field("system_b", pa.string(), nullable=False),
    pa.field("difference", pa.float64(), nullable=False),  # a − b, percent points
    pa.field("ci_low", pa.float64(), nullable=False),
    pa.field("ci_high", pa.float64(), nullable=False),
    pa.field("p_value", pa.float64(), nullable=False),
    pa.field("significant", pa.bool_(), nullable=False),
])


def _compare(samples: Mapping[str, np.ndarray], observed: Mapping[str, float], confidence: float,
             base: dict) -> list[dict]:
    """Pairwise differences (a − b) of one metric, in the given system order."""
    rows = []
    for a, b in combinations(list(samples), 2):
        diff = samples[a] - samples[b]
        low, high = interval(diff, confidence)
        # Two-sided bootstrap p-value: how often the resampled difference falls on either side of 0.
        p_value = min(1.0, 2 * min(float(np.mean(diff <= 0)), float(np.mean(diff >= 0))))
        rows.append({**base, "system_a": a, "system_b": b, "difference": observed[a] - observed[b],
                     "ci_low": low, "ci_high": high, "p_value": p_value,
                     "significant": bool(low > 0 or high < 0)})
    return rows


def table4_intervals(clips: pa.Table, flags: Mapping[str, Sequence[bool]], *, resamples: int, seed: int,
                     confidence: float) -> tuple[pa.Table, list[dict]]:
    """Intervals (percent) of every Table 4 cell, and pairwise F1 comparisons."""
    videos = sorted(set(clips.column("video_id").to_pylist()))
    position = {v: i for i, v in enumerate(videos)}
    video_index = np.array([position[v] for v in clips.column("video_id").to_pylist()])
    gold = np.array(clips.column("is_key").to_pylist(), dtype=bool)
    counts = resample_counts(len(videos), resamples, seed)
    base = {"keyclips": "-", "counting": "-", "field": "key clips", "mode": "-"}
    rows, f1_samples, f1_observed = [], {}, {}
    for system, pred in flags.items():
        pred = np.array(pred, dtype=bool)
        samples = keyclip_resamples(video_index, gold, pred, counts)
        observed = keyclip_resamples(video_index, gold, pred, np.ones((1, len(videos)), dtype=np.int64))
        for metric, values in samples.items():
            low, high = interval(100 * values, confidence)
            rows.append({"system": system, **base, "metric": metric, "value": 100 * float(observed[metric][0]),
                         "ci_low": low, "ci_high": high})
        f1_samples[system], f1_observed[system] = 100 * samples["f1"], 100 * float(observed["f1"][0])
    comparisons = _compare(f1_samples, f1_observed, confidence, {"table": "table4", **base, "metric": "f1"})
    return pa.Table.from_pylist(rows, schema=CI), comparisons


def table5_intervals(clips: pa.Table, clip_scores: pa.Table, *, resamples: int, seed: int,
                     confidence: float) -> tuple[pa.Table, list[dict]]:
    """Intervals (percent) of every Table 5 cell from its per-clip scores, and pairwise F1
    comparisons of the systems within each (key clips, counting, field, mode) cell."""
    videos = sorted(set(clips.column("video_id").to_pylist()))
    position = {v: i for i, v in enumerate(videos)}
    counts = resample_counts(len(videos), resamples, seed)
    everyone = np.ones((1, len(videos)), dtype=np.int64)
    columns = {name: clip_scores.column(name).to_numpy(zero_copy_only=False) for name in clip_scores.column_names}
    cell_keys = list(zip(columns["system"], columns["keyclips"], columns["counting"], columns["field"], columns["mode"]))
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(cell_keys):
        groups.setdefault(key, []).append(i)
    rows = []
    by_cell: dict[tuple, tuple[dict, dict]] = {}
    for (system, keyclips, counting, field, mode), members in groups.items():
        members = np.array(members)
        video_index = np.array([position[v] for v in columns["video_id"][members]])
        precision_c, recall_c = columns["precision"][members], columns["recall"][members]
        samples = macro_prf_resamples(video_index, precision_c, recall_c, counts)
        observed = macro_prf_resamples(video_index, precision_c, recall_c, everyone)
        for metric, values in samples.items():
            low, high = interval(100 * values, confidence)
            rows.append({"system": system, "keyclips": keyclips, "counting": counting, "field": field,
                         "mode": mode, "metric": metric, "value": 100 * float(observed[metric][0]),
                         "ci_low": low, "ci_high": high})
        f1_samples, f1_observed = by_cell.setdefault((keyclips, counting, field, mode), ({}, {}))
        f1_samples[system], f1_observed[system] = 100 * samples["f1"], 100 * float(observed["f1"][0])
    comparisons = []
    for (keyclips, counting, field, mode), (f1_samples, f1_observed) in by_cell.items():
        comparisons += _compare(f1_samples, f1_observed, confidence,
                                {"table": "table5", "keyclips": keyclips, "counting": counting, "field": field,
                                 "mode": mode, "metric": "f1"})
    return pa.Table.from_pylist(rows, schema=CI), comparisons
