"""Result figures inside the docs' prose, rendered from ``results/numbers.json`` and checked against it.

A figure in a sentence is written ``<!-- n:KIND attr=value ... -->VALUE<!-- /n -->`` on one line;
the kinds read the same rows as :mod:`cookproc.evaluation.render`'s blocks:

- ``table2 field=verbs|arguments column=``: a Table 2 cell (dataset statistics; a count has no
  decimals, a float 1 unless ``digits=``; a percentage's "%" stays outside the marker);
- ``table4 system= [metric=f1]``: a Table 4 cell (AUC-ROC and AP to 3 decimals);
- ``table5 row=SYSTEM[@KEYCLIPS] cell=FIELD:MODE [counting=] [value=f1]``: a Table 5 cell (counting
  ``oracle`` for oracle key clips, else ``predicted`` unless given);
- ``seeds system= [metric=f1] [stat=mean|sd]``: a neural selector's mean or sd over seeds (one
  seed: its score, and no sd, shown "–");
- ``intervals row= bound=low|high|value [metric=f1]``: a bootstrap interval (rows as in the block);
- ``models model= [metric=f1] [field=verbs|arguments] [mode=] [bound=value|low|high]``: a deployed
  model's card score (``field`` for the tuple extractor);
- ``run-times job= [value=s|max_rss_mb] [unit=s|min|h|MB|GB|GiB]``: a benchmark file's time or memory;
- ``predicted-counting keyclips= [field=verbs]``: the paper's predicted-key counting constant,
  n_gold / n_counted (:func:`cookproc.evaluation.tables.predicted_counting_constants`).

Every kind takes ``digits=`` and ``thousands=,`` (4,004 rather than 4004). A value carries no stamp: a document with values holds a
``<!-- numbers:stamp -->`` block (the run they come from), which :func:`lint_values` requires.
A marker quoted in backticks is an example, not a value.
"""
from __future__ import annotations

import re
from typing import Mapping

from cookproc.evaluation.render import blocks, substitute
from cookproc.evaluation.render_cells import THRESHOLD_FREE, BlockError, _attrs, _find, _fmt, _rows

INLINE = re.compile(r"(?<!`)(?P<marker><!-- n:(?P<kind>[a-z0-9-]+)(?P<attrs>[^>\n]*?)\s*-->)"
                    r"(?P<value>[^<\n]*)<!-- /n -->")
OPENED = re.compile(r"(?<!`)<!-- n:")
#: Units of a run time (seconds) and of max RSS (Snakemake's MB): GB as the docs write it, 10,463 MB = 10.5 GB.
SCALE = {"s": 1, "min": 60, "h": 3600, "MB": 1, "GB": 1000, "GiB": 1024}


def _table2(numbers, a):
    value = _find(_rows(numbers, "table2"), "table2", field=a["field"])[a["column"]]
    return value, (0 if isinstance(value, int) else 1)


def _table4(numbers, a):
    metric = a.get("metric", "f1")
    return _find(_rows(numbers, "table4"), "table4", system=a["system"])[metric], 3 if metric in THRESHOLD_FREE else 1


def _table5(numbers, a):
    system, _, keyclips = a["row"].partition("@")
    keyclips = keyclips or "oracle"
    field, mode = _split(a["cell"], ":", "cell", 2)
    counting = a.get("counting", "oracle" if keyclips == "oracle" else "predicted")
    row = _find(_rows(numbers, "table5"), "table5", system=system, keyclips=keyclips, counting=counting, field=field,
                mode=mode)
    return row[a.get("value", "f1")], 1


def _seeds(numbers, a):
    rows, stat = _rows(numbers, "seeds"), a.get("stat", "mean")
    if stat not in ("mean", "sd"):
        raise BlockError(f"stat={stat}: mean or sd")
    metric = a.get("metric", "f1")
    seeds = [r for r in rows if r["system"] == a["system"] and str(r["run"]).startswith("seed")]
    if len(seeds) == 1:  # one seed: its score, no spread (as the seeds block shows it)
        return (seeds[0][metric] if stat == "mean" else None), 2
    return _find(rows, "seeds", system=a["system"], run={"mean": "mean", "sd": "std"}[stat])[metric], 2


def _intervals(numbers, a):
    system, _, cell = a["row"].partition("@")
    metric, bound = a.get("metric", "f1"), a["bound"]
    if cell:
        keyclips, counting, field, mode = _split(cell, "/", "row", 4)
        row = _find(_rows(numbers, "table5_ci"), "table5_ci", system=system, keyclips=keyclips, counting=counting,
                    field=field, mode=mode, metric=metric)
    else:
        row = _find(_rows(numbers, "table4_ci"), "table4_ci", system=system, metric=metric)
    return row[{"low": "ci_low", "high": "ci_high", "value": "value"}[_bound(bound)]], 1


def _models(numbers, a):
    name, metric, bound = a["model"], a.get("metric", "f1"), _bound(a.get("bound", "value"))
    if name not in numbers.get("models", {}):
        raise BlockError(f"the numbers file holds no model {name!r}")
    cv = numbers["models"][name]["crossval"]
    if "runs" in cv:  # a key-clip selector: its run's score, the interval of its metric
        if "field" in a:
            raise BlockError(f"model {name!r} is a key-clip selector: no field=")
        if bound == "value":
            return cv["runs"][0][metric], 1
        return cv["intervals"]["metrics"][metric][bound == "high"], 1
    field = a.get("field")
    if field is None:
        raise BlockError(f"model {name!r} is a tuple extractor: needs field=verbs|arguments")
    mode = a.get("mode", {"verbs": "exact", "arguments": "partial"}.get(field))
    cell = _find(cv["cells"], f"model {name}", field=field, mode=mode, metric=metric)
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
        constants = predicted_counting_constants(pa.Table.from_pylist(_rows(numbers, "table5"))).to_pylist()
    except (ValueError, KeyError, pa.ArrowException) as exc:
        raise BlockError(f"table5: cannot measure the predicted-counting constant: {exc}") from None
    return _find(constants, "predicted counting", keyclips=a["keyclips"], field=a.get("field", "verbs"))["constant"], 2


def _split(text: str, sep: str, key: str, n: int) -> list[str]:
    parts = text.split(sep)
    if len(parts) != n:
        raise BlockError(f"{key}={text}: expected {n} parts separated by {sep!r}")
    return parts


def _bound(bound: str) -> str:
    if bound not in ("low", "high", "value"):
        raise BlockError(f"bound={bound}: low, high or value")
    return bound


KINDS = {"table2": _table2, "table4": _table4, "table5": _table5, "seeds": _seeds, "intervals": _intervals, "models": _models,
         "run-times": _run_times, "predicted-counting": _predicted_counting}
#: Each kind's attributes: the required ones first (``REQUIRED`` of them), then the optional ones.
ATTRS = {"table2": ("field", "column"), "table4": ("system", "metric"), "table5": ("row", "cell", "counting", "value"),
         "seeds": ("system", "metric", "stat"), "intervals": ("row", "bound", "metric"),
         "models": ("model", "metric", "field", "mode", "bound"), "run-times": ("job", "value", "unit"),
         "predicted-counting": ("keyclips", "field")}
REQUIRED = {"table2": 2, "table5": 2, "intervals": 2}


def value_attrs(kind: str, attrs: str) -> dict[str, str]:
    """A value's attributes, checked against its kind (unknown kinds and attributes are errors)."""
    if kind not in KINDS:
        raise BlockError(f"unknown value kind {kind!r}; known: {sorted(KINDS)}")
    parsed = _attrs(attrs)
    known = (*ATTRS[kind], "digits", "thousands")
    unknown = sorted(set(parsed) - set(known))
    if unknown:
        raise BlockError(f"unknown attributes {unknown} of a {kind} value; known: {list(known)}")
    for key in ATTRS[kind][:REQUIRED.get(kind, 1)]:
        if key not in parsed:
            raise BlockError(f"a {kind} value needs {key}=...")
    if parsed.get("thousands", ",") != ",":
        raise BlockError(f"thousands={parsed['thousands']}: the separator is ',' (thousands=,)")
    return parsed


def render_value(kind: str, attrs: str, numbers: Mapping) -> str:
    parsed = value_attrs(kind, attrs)
    try:
        value, digits = KINDS[kind](numbers, parsed)
    except KeyError as exc:
        raise BlockError(f"no column {exc} in the numbers file's row") from None
    return _fmt(value, int(parsed.get("digits", digits)), thousands="thousands" in parsed)


def values(text: str) -> list[re.Match]:
    return list(INLINE.finditer(text))


def _where(name: str, text: str, match: re.Match) -> str:
    return f"{name}, line {text.count(chr(10), 0, match.start()) + 1}, value {match['marker']}"


def render_values(text: str, numbers: Mapping, name: str = "<text>") -> str:
    """``text`` with every value rendered from ``numbers``."""
    return substitute(text, values(text), "value", lambda m: render_value(m["kind"], m["attrs"], numbers),
                      lambda m: _where(name, text, m))


def check_values(text: str, numbers: Mapping, name: str = "<text>") -> list[str]:
    """One message per value that differs from its rendering (or cannot be rendered)."""
    problems = []
    for match in values(text):
        try:
            expected = render_value(match["kind"], match["attrs"], numbers)
        except BlockError as exc:
            problems.append(f"{_where(name, text, match)}: {exc}")
            continue
        if match["value"] != expected:
            problems.append(f"{_where(name, text, match)}: is {match['value']!r}, the numbers file gives {expected!r}")
    return problems


def lint_values(text: str, name: str = "<text>") -> list[str]:
    """Problems of a document's values that need no numbers file: each marker closed on its line,
    a known kind and attributes, a value between the markers, and a stamp block in the document."""
    problems, found = [], values(text)
    closed = {m.start() for m in found}
    for opened in OPENED.finditer(text):
        if opened.start() not in closed:
            line = text.count("\n", 0, opened.start()) + 1
            problems.append(f"{name}, line {line}: a value marker {text[opened.start():].splitlines()[0][:60]!r} "
                            "is not closed by '<!-- /n -->' on its line")
    for match in found:
        try:
            value_attrs(match["kind"], match["attrs"])
        except BlockError as exc:
            problems.append(f"{_where(name, text, match)}: {exc}")
        if not match["value"].strip():
            problems.append(f"{_where(name, text, match)}: no value between the markers")
    if found and not any(b["kind"] == "stamp" for b in blocks(text)):
        problems.append(f"{name}: {len(found)} values but no <!-- numbers:stamp --> block saying which run "
                        "they come from")
    return problems
