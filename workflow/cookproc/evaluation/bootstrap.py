"""Paired cluster-bootstrap confidence intervals for every Table 4 and Table 5 cell (the
significance of a declared family of comparisons, from the same resamples:
:mod:`cookproc.evaluation.significance`).

The claim is generalisation to unseen recipes, and clips of one recipe are correlated across its
videos (same dish, same steps, same words), so by default the resampling unit is the recipe: each
resample draws the benchmark's recipes with replacement and takes every video of each drawn recipe
(``unit="recipe"``, a cluster bootstrap). ``unit="video"`` draws videos instead (clips of one video
always stay together). Either way a video gets a weight per resample (how often it, or its recipe,
was drawn) and every cell is recomputed from per-video sums (a Table 5 cell is a mean over counted
clips, so it is Σ_videos w_v·sum_v / Σ_videos w_v·n_v). The same resamples serve every system (a
*paired* bootstrap), so differences between two systems get intervals and p-values too.
Percentile intervals; fixed seed; no dependence on anything but the inputs.

A learned system trained with several seeds enters as the mean of its per-seed metrics in every
resample (``runs`` of :func:`table4_intervals`); each interval and comparison row names the run or
pooling it used (``run``, ``run_a``, ``run_b``).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa


def resample_counts(n_units: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples × n_units) how often each unit is drawn in each resample (n_units draws each)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_units, size=(resamples, n_units))
    counts = np.zeros((resamples, n_units), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(resamples), n_units), draws.ravel()), 1)
    return counts


#: Resampling units: ``recipe`` (cluster bootstrap, the default in config) or ``video``.
UNITS = ("recipe", "video")


def video_weights(cluster_of_video: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples × n_videos) weight of each video in each resample: how often its cluster was drawn.

    ``cluster_of_video[v]`` is the cluster (0..k-1, every one used) of video v; clusters are drawn
    with replacement, k per resample, and a drawn cluster brings all its videos. With one cluster
    per video (``np.arange(n_videos)``) this is :func:`resample_counts` itself."""
    cluster_of_video = np.asarray(cluster_of_video, dtype=np.int64)
    n_clusters = int(cluster_of_video.max()) + 1 if len(cluster_of_video) else 0
    if not np.array_equal(np.unique(cluster_of_video), np.arange(n_clusters)):
        raise ValueError(f"cluster ids must be 0..{n_clusters - 1}, each used at least once")
    return resample_counts(n_clusters, resamples, seed)[:, cluster_of_video]


def videos_and_clusters(clips: pa.Table, unit: str) -> tuple[list[str], np.ndarray]:
    """The benchmark's videos (sorted) and the resampling cluster of each: its recipe (recipes in
    sorted order) for ``unit="recipe"``, itself for ``unit="video"``."""
    if unit not in UNITS:
        raise ValueError(f"bootstrap unit must be one of {UNITS}, got {unit!r}")
    video_ids = clips.column("video_id").to_pylist()
    videos = sorted(set(video_ids))
    if unit == "video":
        return videos, np.arange(len(videos))
    recipe_of: dict[str, str] = {}
    for video, recipe in zip(video_ids, clips.column("recipe").to_pylist()):
        if recipe_of.setdefault(video, recipe) != recipe:
            raise ValueError(f"clips table: video {video} belongs to two recipes, {recipe_of[video]!r} and {recipe!r}")
    recipes = sorted(set(recipe_of.values()))
    position = {r: i for i, r in enumerate(recipes)}
    return videos, np.array([position[recipe_of[v]] for v in videos], dtype=np.int64)


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
    # Which run the cell was computed from: one seed, the mean over seeds, or a system without seeds.
    pa.field("run", pa.string(), nullable=False),
])

#: The cell of Table 4 (key clips have one F1 per system).
TABLE4_CELL = ("table4", "-", "-", "key clips", "-")


def _mean_over_runs(per_run: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {metric: np.mean([r[metric] for r in per_run], axis=0) for metric in per_run[0]}


def table4_intervals(clips: pa.Table, flags: Mapping[str, Sequence[bool]], *, unit: str, resamples: int, seed: int,
                     confidence: float, runs: Mapping[str, Sequence[Sequence[bool]]] | None = None,
                     run_labels: Mapping[str, str] | None = None) -> tuple[pa.Table, dict[tuple, tuple[dict, dict, dict]]]:
    """Intervals (percent) of every Table 4 cell, and each system's resampled and observed F1 (for
    :func:`significance_table`, keyed by :data:`TABLE4_CELL`). A system in ``runs`` (its seeds'
    key-clip flags) is the mean of its per-seed metrics, in every resample and in the value."""
    runs, run_labels = runs or {}, run_labels or {}
    videos, clusters = videos_and_clusters(clips, unit)
    position = {v: i for i, v in enumerate(videos)}
    video_index = np.array([position[v] for v in clips.column("video_id").to_pylist()])
    gold = np.array(clips.column("is_key").to_pylist(), dtype=bool)
    counts = video_weights(clusters, resamples, seed)
    everyone = np.ones((1, len(videos)), dtype=np.int64)
    base = {"keyclips": "-", "counting": "-", "field": "key clips", "mode": "-"}
    rows, f1_samples, f1_observed, f1_runs = [], {}, {}, {}
    for system, pred in flags.items():
        predictions = [np.array(p, dtype=bool) for p in runs.get(system, [pred])]
        samples = _mean_over_runs([keyclip_resamples(video_index, gold, p, counts) for p in predictions])
        observed = _mean_over_runs([keyclip_resamples(video_index, gold, p, everyone) for p in predictions])
        for metric, values in samples.items():
            low, high = interval(100 * values, confidence)
            rows.append({"system": system, **base, "metric": metric, "value": 100 * float(observed[metric][0]),
                         "ci_low": low, "ci_high": high, "run": run_labels.get(system, "-")})
        f1_samples[system], f1_observed[system] = 100 * samples["f1"], 100 * float(observed["f1"][0])
        f1_runs[system] = run_labels.get(system, "-")
    return pa.Table.from_pylist(rows, schema=CI), {TABLE4_CELL: (f1_samples, f1_observed, f1_runs)}


def table5_intervals(clips: pa.Table, clip_scores: pa.Table, *, unit: str, resamples: int, seed: int,
                     confidence: float, run_labels: Mapping[tuple[str, str], str] | None = None
                     ) -> tuple[pa.Table, dict[tuple, tuple[dict, dict, dict]]]:
    """Intervals (percent) of every Table 5 cell from its per-clip scores, and each system's
    resampled and observed F1 per (table5, key clips, counting, field, mode) cell (for
    :func:`significance_table`). ``run_labels[(system, keyclips)]`` names the run behind a block."""
    run_labels = run_labels or {}
    videos, clusters = videos_and_clusters(clips, unit)
    position = {v: i for i, v in enumerate(videos)}
    counts = video_weights(clusters, resamples, seed)
    everyone = np.ones((1, len(videos)), dtype=np.int64)
    columns = {name: clip_scores.column(name).to_numpy(zero_copy_only=False) for name in clip_scores.column_names}
    cell_keys = list(zip(columns["system"], columns["keyclips"], columns["counting"], columns["field"], columns["mode"]))
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(cell_keys):
        groups.setdefault(key, []).append(i)
    rows = []
    by_cell: dict[tuple, tuple[dict, dict, dict]] = {}
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
                         "ci_low": low, "ci_high": high, "run": run_labels.get((system, keyclips), "-")})
        f1_samples, f1_observed, f1_runs = by_cell.setdefault(("table5", keyclips, counting, field, mode), ({}, {}, {}))
        f1_samples[system], f1_observed[system] = 100 * samples["f1"], 100 * float(observed["f1"][0])
        f1_runs[system] = run_labels.get((system, keyclips), "-")
    return pa.Table.from_pylist(rows, schema=CI), by_cell


def oracle_cell_intervals(clips, verbs: Sequence[Sequence[str]], args: Sequence[Sequence[str]], *, bootstrap: dict,
                          system: str = "supervised-text") -> list[dict]:
    """Table 5's oracle-key-clip cells of one cross-validated tuple run (verbs exact, arguments
    partial; percent) with their bootstrap intervals (``clips``: a data frame of the benchmark's
    clips with their gold items; ``bootstrap``: the config's tables.bootstrap). A deployed tuple
    extractor's card states them."""
    from cookproc.core.schemas import CLIP_SCORES
    from cookproc.scoring.metrics import clip_scores, counted_clips
    from cookproc.scoring.similarity import SimilarityCache

    cache = SimilarityCache()
    rows = []
    for field, gold_column, predicted, mode in (("verbs", "gold_verbs", verbs, "exact"),
                                                ("arguments", "gold_args", args, "partial")):
        gold = [frozenset(g) for g in clips[gold_column]]
        scores = clip_scores(gold, [frozenset(p) for p in predicted], counted_clips(gold, None), mode, cache)
        rows += [{"system": system, "keyclips": "oracle", "counting": "oracle", "field": field, "mode": mode,
                  "video_id": str(clips["video_id"].iloc[i]), "clip_idx": int(clips["clip_idx"].iloc[i]),
                  "precision": p, "recall": r} for i, p, r in zip(scores.positions, scores.precision, scores.recall)]
    intervals, _ = table5_intervals(pa.Table.from_pandas(clips[["video_id", "recipe"]], preserve_index=False),
                                    pa.Table.from_pylist(rows, schema=CLIP_SCORES), unit=bootstrap["unit"],
                                    resamples=bootstrap["resamples"], seed=bootstrap["seed"],
                                    confidence=bootstrap["confidence"])
    return intervals.to_pylist()
