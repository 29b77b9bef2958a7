"""Paired cluster-bootstrap confidence intervals for every Table 4 and Table 5 cell, and the
significance of a declared family of system comparisons.

The claim is generalisation to unseen recipes, and clips of one recipe are correlated across its
videos (same dish, same steps, same words), so by default the resampling unit is the recipe: each
resample draws the benchmark's recipes with replacement and takes every video of each drawn recipe
(``unit="recipe"``, a cluster bootstrap). ``unit="video"`` draws videos instead (clips of one video
always stay together). Either way a video gets a weight per resample (how often it, or its recipe,
was drawn) and every cell is recomputed from per-video sums (a Table 5 cell is a mean over counted
clips, so it is Σ_videos w_v·sum_v / Σ_videos w_v·n_v). The same resamples serve every system (a
*paired* bootstrap), so differences between two systems get intervals and p-values too.
Percentile intervals; fixed seed; no dependence on anything but the inputs.

Significance is tested only for a short family of comparisons declared in the configuration
(``tables.significance``, :func:`declared_family`): each of our systems against the paper's best
system of the same cell, and declared pairs (ours vs upstream's). Table 5's predicted-key blocks
enter only under the masked counting: under the paper's counting every system's F1 is its oracle
F1 times one constant of the key-clip source (:func:`cookproc.evaluation.tables.predicted_counting_constants`),
so a comparison there says nothing the oracle block does not. The p-values
(:func:`bootstrap_p_value`) are Holm-adjusted over that family only, and the number of resamples
must let the smallest attainable p-value pass Holm's first step (:func:`check_resamples`).

A learned system trained with several seeds enters as the mean of its per-seed metrics in every
resample (``runs`` of :func:`table4_intervals`); each interval and comparison row names the run or
pooling it used (``run``, ``run_a``, ``run_b``).
"""
from __future__ import annotations

import math
from fractions import Fraction
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


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (same order as given): the i-th smallest
    becomes max_{j<=i} min(1, (m-j+1)·p_(j)). Tied p-values get the same adjusted value."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (len(p) - np.arange(len(p))) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


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

SIGNIFICANCE = pa.schema([
    pa.field("table", pa.string(), nullable=False),
    pa.field("keyclips", pa.string(), nullable=False),
    pa.field("counting", pa.string(), nullable=False),
    pa.field("field", pa.string(), nullable=False),
    pa.field("mode", pa.string(), nullable=False),
    pa.field("metric", pa.string(), nullable=False),
    # Why the pair is in the family: "vs paper's best" or "declared pair" (tables.significance).
    pa.field("comparison", pa.string(), nullable=False),
    pa.field("system_a", pa.string(), nullable=False),
    pa.field("run_a", pa.string(), nullable=False),
    pa.field("system_b", pa.string(), nullable=False),
    pa.field("run_b", pa.string(), nullable=False),
    pa.field("difference", pa.float64(), nullable=False),  # a − b, percent points
    pa.field("ci_low", pa.float64(), nullable=False),
    pa.field("ci_high", pa.float64(), nullable=False),
    # Two-sided paired-bootstrap p-value of the difference (bootstrap_p_value), unadjusted.
    pa.field("p_value", pa.float64(), nullable=False),
    # Holm-adjusted over the declared family (every row of this table, and nothing else).
    pa.field("p_holm", pa.float64(), nullable=False),
    # p_holm < 1 − confidence (the ci_low/ci_high interval itself is not adjusted).
    pa.field("significant", pa.bool_(), nullable=False),
    # Resamples B: the smallest attainable p_value is 2 / (B + 1).
    pa.field("resamples", pa.int64(), nullable=False),
])

#: ``comparison`` of a declared system against the best of the paper's systems in the same cell.
VS_PAPER_BEST = "vs paper's best"
#: ``comparison`` of a pair declared by name (ours vs upstream's).
DECLARED_PAIR = "declared pair"
#: The cell of Table 4 (key clips have one F1 per system).
TABLE4_CELL = ("table4", "-", "-", "key clips", "-")
#: Table 5 fields and modes a declared cell may name (``verbs/exact``, ...).
CELL_FIELDS, CELL_MODES = ("verbs", "arguments"), ("exact", "fuzzy", "partial")


def bootstrap_p_value(differences: np.ndarray) -> float:
    """Two-sided paired-bootstrap p-value of H0 "no difference" from the B resampled differences:

        p = min(1, 2 · (1 + k) / (B + 1)),   k = min(#{b: Δ*_b ≤ 0}, #{b: Δ*_b ≥ 0})

    k counts the resamples on the wrong side of 0 (the smaller tail; for a difference whose
    resamples mostly share the observed sign, the side opposite to it; a resample at exactly 0
    counts on both sides). The +1 counts the observed data as one of the B + 1 draws (Davison &
    Hinkley 1997, eq. 4.11), so p is never 0: its smallest value is 2 / (B + 1), reached when no
    resample is on the wrong side; doubling the one tail makes it two-sided, and p < α exactly when
    the equal-tailed percentile interval of level 1 − α (up to the +1) excludes 0."""
    differences = np.asarray(differences, dtype=float)
    if differences.ndim != 1 or differences.size == 0:
        raise ValueError(f"need a non-empty vector of resampled differences, got shape {differences.shape}")
    wrong_side = min(int(np.count_nonzero(differences <= 0)), int(np.count_nonzero(differences >= 0)))
    return min(1.0, 2.0 * (1 + wrong_side) / (differences.size + 1))


def smallest_p_value(resamples: int) -> float:
    """The smallest p-value :func:`bootstrap_p_value` can give with ``resamples`` resamples."""
    return min(1.0, 2.0 / (resamples + 1))


def _holm_can_reach(resamples: int, family_size: int, alpha: float) -> bool:
    """2 / (B + 1) < α / m, compared exactly (α = 1 − 0.95 is 0.05000000000000004 in floating point)."""
    exact_alpha = Fraction(alpha).limit_denominator(10**9)
    return Fraction(2, resamples + 1) < exact_alpha / family_size


def required_resamples(family_size: int, alpha: float) -> int:
    """The fewest resamples B for which the smallest attainable p-value, 2 / (B + 1), is below
    α / m (Holm's first threshold for a family of m): B + 1 > 2m / α."""
    if family_size < 1:
        return 1
    resamples = max(1, math.floor(2 * family_size / alpha) - 2)
    while not _holm_can_reach(resamples, family_size, alpha):
        resamples += 1
    return resamples


def check_resamples(resamples: int, family_size: int, alpha: float) -> None:
    """Refuse a number of resamples with which Holm's adjustment can never reach α for the family:
    the rule is 2 / (B + 1) < α / m (the smallest attainable p-value below Holm's first threshold)."""
    if family_size and not _holm_can_reach(resamples, family_size, alpha):
        raise ValueError(
            f"tables.bootstrap.resamples = {resamples} is too few for a family of {family_size} comparisons "
            f"(tables.significance) at alpha = {alpha:g}: the smallest attainable p-value 2/(B+1) = "
            f"{smallest_p_value(resamples):.4g} is not below alpha/m = {alpha / family_size:.4g}, so Holm's "
            f"adjustment could never call a difference significant. Use at least "
            f"{required_resamples(family_size, alpha)} resamples, or declare fewer comparisons.")


def declared_family(significance: Mapping, *, keyclip_systems: Sequence[str], tuple_systems: Sequence[str],
                    predicted_keyclips: Sequence[str], masked: bool) -> list[dict]:
    """The family of comparisons that ``tables.significance`` declares for the systems of this run,
    in a fixed order (Table 4, then Table 5 block by block, cell by cell). Each is a dict with the
    cell (table, keyclips, counting, field, mode), ``comparison``, ``system_a`` and ``references``:
    the systems ``system_a`` may be compared with (the paper's systems present in the table, of
    which the run picks the one with the highest observed F1 in the cell; or the declared pair's
    second system). Systems of the declaration that this run does not score are left out, so the
    family depends on the configuration only, never on the scores. Table 5 blocks: oracle key
    clips and, with ``masked``, each predicted key-clip source under the masked counting (never the
    paper's unmasked counting)."""
    paper = list(significance["paper_systems"])
    cells = []
    for cell in significance["cells"]:
        field, _, mode = cell.partition("/")
        if field not in CELL_FIELDS or mode not in CELL_MODES:
            raise ValueError(f"tables.significance.cells: {cell!r} is not <field>/<mode> with field in "
                             f"{CELL_FIELDS} and mode in {CELL_MODES}")
        cells.append((field, mode))
    blocks = [("oracle", "oracle")] + ([(source, "predicted-masked") for source in predicted_keyclips] if masked else [])
    table5_cells = [("table5", keyclips, counting, field, mode) for keyclips, counting in blocks for field, mode in cells]
    family = []

    def add(cell, comparison, system, references):
        if references:
            family.append({"table": cell[0], "keyclips": cell[1], "counting": cell[2], "field": cell[3],
                           "mode": cell[4], "comparison": comparison, "system_a": system,
                           "references": list(references)})

    for table_cells, systems, ours in (([TABLE4_CELL], keyclip_systems, significance["keyclip_systems"]),
                                       (table5_cells, tuple_systems, significance["tuple_systems"])):
        papers_here = [p for p in paper if p in systems]
        for cell in table_cells:
            for system in ours:
                if system in systems and system not in paper:
                    add(cell, VS_PAPER_BEST, system, papers_here)
            for a, b in significance["pairs"]:
                if a in systems and b in systems:
                    add(cell, DECLARED_PAIR, a, [b])
    return family


def significance_table(family: Sequence[Mapping], cells: Mapping[tuple, tuple[dict, dict, dict]], *,
                       confidence: float, resamples: int) -> pa.Table:
    """The declared family (:func:`declared_family`) resolved on the resampled F1 of each cell:
    ``cells[(table, keyclips, counting, field, mode)] = (samples, observed, runs)``, each a dict by
    system (resampled F1 and observed F1 in percent, the run label). Each row: the difference a − b, its percentile interval,
    :func:`bootstrap_p_value`, and Holm's adjustment over these rows only; a comparison with the
    paper's best takes the paper system with the highest observed F1 in the cell (declared order
    on ties)."""
    check_resamples(resamples, len(family), 1 - confidence)
    rows = []
    for item in family:
        cell = (item["table"], item["keyclips"], item["counting"], item["field"], item["mode"])
        if cell not in cells:
            raise ValueError(f"significance: no scores for the declared cell {cell}")
        samples, observed, runs = cells[cell]
        missing = [s for s in [item["system_a"], *item["references"]] if s not in samples]
        if missing:
            raise ValueError(f"significance: cell {cell} has no scores of {missing} (declared in tables.significance)")
        a = item["system_a"]
        b = max(item["references"], key=lambda s: (observed[s], -item["references"].index(s)))
        diff = samples[a] - samples[b]
        low, high = interval(diff, confidence)
        rows.append({**{k: item[k] for k in ("table", "keyclips", "counting", "field", "mode", "comparison")},
                     "metric": "f1", "system_a": a, "run_a": runs[a], "system_b": b, "run_b": runs[b],
                     "difference": observed[a] - observed[b], "ci_low": low, "ci_high": high,
                     "p_value": bootstrap_p_value(diff), "resamples": resamples})
    adjusted = holm([r["p_value"] for r in rows])
    for row, p in zip(rows, adjusted):
        row["p_holm"], row["significant"] = float(p), bool(p < 1 - confidence)
    return pa.Table.from_pylist(rows, schema=SIGNIFICANCE)


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
