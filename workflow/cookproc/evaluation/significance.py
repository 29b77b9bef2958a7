"""The significance of a declared family of system comparisons, from the paired bootstrap's
resamples (:mod:`cookproc.evaluation.bootstrap`).

Significance is tested only for a short family of comparisons declared in the configuration
(``tables.significance``, :func:`declared_family`): each of our systems against the paper's best
system of the same cell, and declared pairs (ours vs upstream's). Table 5's predicted-key blocks
enter only under the masked counting: under the paper's counting every system's F1 is its oracle
F1 times one constant of the key-clip source (:func:`cookproc.evaluation.tables.predicted_counting_constants`),
so a comparison there says nothing the oracle block does not. The p-values
(:func:`bootstrap_p_value`) are Holm-adjusted over that family only, and the number of resamples
must let the smallest attainable p-value pass Holm's first step (:func:`check_resamples`).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from cookproc.evaluation.bootstrap import TABLE4_CELL, interval

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
#: Table 5 fields and modes a declared cell may name (``verbs/exact``, ...).
CELL_FIELDS, CELL_MODES = ("verbs", "arguments"), ("exact", "fuzzy", "partial")


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (same order as given): the i-th smallest
    becomes max_{j<=i} min(1, (m-j+1)·p_(j)). Tied p-values get the same adjusted value."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (len(p) - np.arange(len(p))) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


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
