"""The value kinds of ``results/numbers.json`` (:mod:`cookproc.evaluation.numbers`), each one lookup.

Every figure the docs state is one of these: a value in a sentence
(``<!-- n:KIND attr=value ... -->``, :mod:`cookproc.evaluation.render_inline`) names its kind and
attributes, and every number in a rendered table (``<!-- numbers:KIND ... -->`` blocks,
:mod:`cookproc.evaluation.render`) is the same lookup with the attributes of its row and column.
A lookup gives the value and its default number of decimals; how a number is written is
:func:`cookproc.core.formatting.format_number`'s.

- ``table2 field=verbs|arguments column=``: a Table 2 cell (dataset statistics; a count has no
  decimals, a float 1);
- ``table4 system= [metric=f1]``: a Table 4 cell (any column: ``f1_sd``, ``seeds``...; AUC-ROC and
  AP, pooled out of fold or their ``*_fold_mean``, to 3 decimals);
- ``table5 row=SYSTEM[@KEYCLIPS] cell=FIELD:MODE [counting=] [value=f1]``: a Table 5 cell (counting
  ``oracle`` for oracle key clips, else ``predicted`` unless given);
- ``seeds system= [metric=f1] [stat=mean|sd] [run=seedN]``: a neural selector's mean or sd over
  seeds (one seed: its score, and no sd), or with ``run`` one seed's run (results/keyclips/seed_summary.csv);
- ``intervals row= bound=low|high|value [metric=f1]``: a bootstrap interval (``row``: a Table 4
  system, or ``SYSTEM@KEYCLIPS/COUNTING/FIELD/MODE`` of Table 5);
- ``models model= [metric=f1] [field=verbs|arguments] [mode=] [bound=value|low|high]``: a deployed
  model's card score (``field`` for the tuple extractor);
- ``run-times job= [value=s|max_rss_mb] [unit=s|min|h|MB|GB|GiB]``: a benchmark file's time or memory;
- ``predicted-counting keyclips= [field=verbs]``: the paper's predicted-key counting constant,
  n_gold / n_counted (:func:`cookproc.evaluation.tables.predicted_counting_constants`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from cookproc.evaluation.threshold_free import TABLE4_FOLD_MEANS, TABLE4_POOLED

#: Table 4's threshold-free columns: fractions over the out-of-fold scores (pooled, and the mean over
#: folds of each fold's own), not percentages.
THRESHOLD_FREE = TABLE4_POOLED + TABLE4_FOLD_MEANS
#: The mode of each field that a tuple extractor's card states.
CARD_MODES = {"verbs": "exact", "arguments": "partial"}
#: Units of a run time (seconds) and of max RSS (Snakemake's MB): GB as the docs write it, 10,463 MB = 10.5 GB.
SCALE = {"s": 1, "min": 60, "h": 3600, "MB": 1, "GB": 1000, "GiB": 1024}


class BlockError(ValueError):
    """A block or value asks for something the numbers file does not hold, or is malformed."""


class MissingColumn(BlockError):
    """The row exists but has no such column."""


# --- rows of the numbers file ----------------------------------------------------------------

def rows_of(numbers: Mapping, key: str) -> list[dict]:
    if key not in numbers:
        raise BlockError(f"the numbers file holds no {key} (not built in this run)")
    return numbers[key]


def find(rows: Sequence[dict], what: str, **keys) -> dict:
    """The one row with ``keys``."""
    found = [r for r in rows if all(r.get(k) == v for k, v in keys.items())]
    if len(found) != 1:
        raise BlockError(f"{what}: {len(found)} rows with {keys}, expected one")
    return found[0]


def column(row: Mapping, name: str, what: str) -> Any:
    if name not in row:
        of = f" of {row['system']!r}" if "system" in row else ""
        raise MissingColumn(f"{what}: no column {name!r} in the numbers file's row{of}")
    return row[name]


def seed_runs(numbers: Mapping, system: str) -> list[dict]:
    """The per-seed rows of a neural selector (results/keyclips/seed_summary.csv)."""
    return [r for r in rows_of(numbers, "seeds") if r["system"] == system and str(r["run"]).startswith("seed")]


def interval_row(numbers: Mapping, row: str, metric: str) -> dict:
    """A bootstrap interval's row: ``row`` is a Table 4 system or ``SYSTEM@KEYCLIPS/COUNTING/FIELD/MODE``."""
    system, _, cell = row.partition("@")
    if cell:
        keyclips, counting, field, mode = split(cell, "/", "row", 4)
        return find(rows_of(numbers, "table5_ci"), "table5_ci", system=system, keyclips=keyclips, counting=counting,
                    field=field, mode=mode, metric=metric)
    return find(rows_of(numbers, "table4_ci"), "table4_ci", system=system, metric=metric)


def model_crossval(numbers: Mapping, name: str) -> dict:
    """What a deployed model's card states (model.json's ``crossval``)."""
    if name not in numbers.get("models", {}):
        raise BlockError(f"the numbers file holds no model {name!r}")
    return numbers["models"][name]["crossval"]


def is_keyclip_selector(crossval: Mapping) -> bool:
    return "runs" in crossval  # a tuple extractor's card holds "cells"


def split(text: str, sep: str, key: str, n: int) -> list[str]:
    parts = text.split(sep)
    if len(parts) != n:
        raise BlockError(f"{key}={text}: expected {n} parts separated by {sep!r}")
    return parts


def _bound(bound: str) -> str:
    if bound not in ("low", "high", "value"):
        raise BlockError(f"bound={bound}: low, high or value")
    return bound


# --- the value kinds -------------------------------------------------------------------------

def _table2(numbers, a):
    value = column(find(rows_of(numbers, "table2"), "table2", field=a["field"]), a["column"], "table2")
    return value, (0 if isinstance(value, int) else 1)


def _table4(numbers, a):
    metric = a.get("metric", "f1")
    row = find(rows_of(numbers, "table4"), "table4", system=a["system"])
    return column(row, metric, "table4"), 3 if metric in THRESHOLD_FREE else 1


def _table5(numbers, a):
    system, _, keyclips = a["row"].partition("@")
    keyclips = keyclips or "oracle"
    field, mode = split(a["cell"], ":", "cell", 2)
    counting = a.get("counting", "oracle" if keyclips == "oracle" else "predicted")
    row = find(rows_of(numbers, "table5"), "table5", system=system, keyclips=keyclips, counting=counting, field=field,
               mode=mode)
    return column(row, a.get("value", "f1"), "table5"), 1


def _seeds(numbers, a):
    stat, metric = a.get("stat", "mean"), a.get("metric", "f1")
    if stat not in ("mean", "sd"):
        raise BlockError(f"stat={stat}: mean or sd")
    if "run" in a:  # one seed's run
        if "stat" in a:
            raise BlockError("seeds: run= or stat=, not both")
        return column(find(seed_runs(numbers, a["system"]), "seeds", run=a["run"]), metric, "seeds"), 2
    seeds = seed_runs(numbers, a["system"])
    if len(seeds) == 1:  # one seed: its score, no spread
        return (column(seeds[0], metric, "seeds") if stat == "mean" else None), 2
    row = find(rows_of(numbers, "seeds"), "seeds", system=a["system"], run={"mean": "mean", "sd": "std"}[stat])
    return column(row, metric, "seeds"), 2


def _intervals(numbers, a):
    row = interval_row(numbers, a["row"], a.get("metric", "f1"))
    return row[{"low": "ci_low", "high": "ci_high", "value": "value"}[_bound(a["bound"])]], 1


def _models(numbers, a):
    name, metric, bound = a["model"], a.get("metric", "f1"), _bound(a.get("bound", "value"))
    cv = model_crossval(numbers, name)
    if is_keyclip_selector(cv):  # its run's score, the interval of its metric
        if "field" in a:
            raise BlockError(f"model {name!r} is a key-clip selector: no field=")
        if bound == "value":
            return column(cv["runs"][0], metric, f"model {name}"), 1
        return cv["intervals"]["metrics"][metric][bound == "high"], 1
    field = a.get("field")
    if field is None:
        raise BlockError(f"model {name!r} is a tuple extractor: needs field=verbs|arguments")
    cell = find(cv["cells"], f"model {name}", field=field, mode=a.get("mode", CARD_MODES.get(field)), metric=metric)
    return cell[{"value": "value", "low": "ci_low", "high": "ci_high"}[bound]], 1


def _run_times(numbers, a):
    times, job = numbers.get("run_times", {}), a["job"]
    if job not in times:
        raise BlockError(f"no run time of {job} in the numbers file")
    value = a.get("value", "s")
    unit = a.get("unit", "s" if value == "s" else "MB")
    memory = unit in ("MB", "GB", "GiB")
    if value not in ("s", "max_rss_mb") or unit not in SCALE or memory != (value == "max_rss_mb"):
        raise BlockError(f"value={value} unit={unit}: s in s, min or h; max_rss_mb in MB, GB or GiB")
    seconds_or_mb = times[job][value]
    return (None if seconds_or_mb is None else seconds_or_mb / SCALE[unit]), 0


def _predicted_counting(numbers, a):
    import pyarrow as pa

    from cookproc.evaluation.tables import predicted_counting_constants

    try:
        constants = predicted_counting_constants(pa.Table.from_pylist(rows_of(numbers, "table5"))).to_pylist()
    except (ValueError, KeyError, pa.ArrowException) as exc:
        raise BlockError(f"table5: cannot measure the predicted-counting constant: {exc}") from None
    return find(constants, "predicted counting", keyclips=a["keyclips"], field=a.get("field", "verbs"))["constant"], 2


def _people(numbers, a):
    """A cell of the people's table (results/people.csv): ``metric`` any of its columns (F1 of
    verbs by default), ``bound`` low or high its interval's; tau with 2 decimals."""
    bound = _bound(a.get("bound", "value"))
    metric = a.get("metric", "verbs_f1") + ("" if bound == "value" else f"_{bound}")
    value = column(find(rows_of(numbers, "people"), "people", system=a["system"]), metric, "people")
    return value, (0 if metric in ("n_videos", "order_videos", "resamples", "matched_steps") else 2 if "tau" in metric
                   else 1)


def _people_comparison(numbers, a):
    """A paired difference of the people's table (results/people_comparisons.csv): systems ``a`` and
    ``b``, ``metric``, ``value`` difference (the default), ci_low, ci_high, value_a, value_b or n_videos."""
    row = find(rows_of(numbers, "people_comparisons"), "people comparison", system_a=a["a"], system_b=a["b"],
               metric=a["metric"])
    key = a.get("value", "difference")
    value = column(row, key, "people-comparison")
    return value, (0 if key == "n_videos" else 2 if a["metric"] == "order_tau" else 1)


def _one_row(table: str, kind: str):
    """A lookup of ``metric`` in a one-row table (integers as they are, the rest with 1 decimal)."""
    def lookup(numbers, a):
        value = column(rows_of(numbers, table)[0], a["metric"], kind)
        return value, (0 if isinstance(value, int) else 1)
    return lookup


#: The captions' alignment against the benchmark's key clips (results/captions/alignment_quality.csv).
_alignment = _one_row("alignment", "alignment")
#: The step model trained outside the benchmark, on its key clips (results/captions/steps_on_benchmark.csv).
_steps_benchmark = _one_row("steps_benchmark", "steps-benchmark")


@dataclass(frozen=True)
class Kind:
    lookup: Callable[[Mapping, Mapping[str, str]], tuple[Any, int]]
    attrs: tuple[str, ...]  # the required ones first, then the optional ones
    required: int = 1


KINDS = {"table2": Kind(_table2, ("field", "column"), 2), "table4": Kind(_table4, ("system", "metric")),
         "table5": Kind(_table5, ("row", "cell", "counting", "value"), 2),
         "seeds": Kind(_seeds, ("system", "metric", "stat", "run")),
         "intervals": Kind(_intervals, ("row", "bound", "metric"), 2),
         "models": Kind(_models, ("model", "metric", "field", "mode", "bound")),
         "run-times": Kind(_run_times, ("job", "value", "unit")),
         "predicted-counting": Kind(_predicted_counting, ("keyclips", "field")),
         "people": Kind(_people, ("system", "metric", "bound")),
         "people-comparison": Kind(_people_comparison, ("a", "b", "metric", "value"), 3),
         "alignment": Kind(_alignment, ("metric",)),
         "steps-benchmark": Kind(_steps_benchmark, ("metric",))}


def lookup(numbers: Mapping, kind: str, **attrs: str) -> tuple[Any, int]:
    """The value of ``kind`` with ``attrs`` and its default number of decimals."""
    try:
        return KINDS[kind].lookup(numbers, attrs)
    except KeyError as exc:  # a key the file's rows lack, deeper than a column
        raise BlockError(f"no column {exc} in the numbers file's row") from None


def optional(numbers: Mapping, kind: str, **attrs: str) -> Any:
    """The value of ``kind`` with ``attrs``, None where its row has no such column."""
    try:
        return lookup(numbers, kind, **attrs)[0]
    except MissingColumn:
        return None


# --- attributes ------------------------------------------------------------------------------

def parse_attrs(text: str) -> dict[str, str]:
    attrs = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if not sep:
            raise BlockError(f"attribute {token!r} is not key=value")
        attrs[key] = value
    return attrs


def list_attr(attrs: Mapping[str, str], key: str, default: str | None = None) -> list[str]:
    value = attrs.get(key, default)
    if value is None:
        raise BlockError(f"needs {key}=...")
    return [v for v in value.split(",") if v]


# --- the cells of the rendered tables (cookproc.evaluation.render) ------------------------------

def digits_attr(attrs: Mapping[str, str], default: int) -> int:
    return int(attrs.get("digits", default))


def table_cell(numbers: Mapping, kind: str, digits: int | None = None, **attrs: str) -> str:
    """One number of a table: a lookup, written with ``digits`` decimals (else the kind's own)."""
    from cookproc.core.formatting import format_number

    value, default = lookup(numbers, kind, **attrs)
    return format_number(value, default if digits is None else digits)


def interval_cell(numbers: Mapping, kind: str, digits: int, **attrs: str) -> str:
    """``[low, high]`` of a bootstrap interval (kinds intervals and models)."""
    return "[" + ", ".join(table_cell(numbers, kind, digits, bound=b, **attrs) for b in ("low", "high")) + "]"
