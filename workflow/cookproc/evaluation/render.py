"""The README's and docs' result tables, rendered from ``results/numbers.json``
(:mod:`cookproc.evaluation.numbers`) and checked against it; the figures in their prose too
(``<!-- n:KIND ... -->VALUE<!-- /n -->``, :mod:`cookproc.evaluation.render_inline`).

The README and docs hold blocks between ``<!-- numbers:KIND attr=value ... -->`` and
``<!-- /numbers -->``. :func:`render_text` rewrites each block's body from the file (a stamp line
naming the run, then a Markdown table); :func:`check_text` renders and compares, and names the
block and its first differing number; :func:`lint_text` checks the blocks without a numbers file.
``python -m cookproc.evaluation.numbers check README.md docs/*.md`` (or ``render``) runs them.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

from cookproc.evaluation.render_cells import (HEADERS, STAMP_START, THRESHOLD_FREE, BlockError, _attrs, _find, _fmt,
                                              _list, _rows, _table, stamp)

END = "<!-- /numbers -->"
BLOCK = re.compile(r"^<!-- numbers:(?P<kind>[a-z0-9-]+)(?P<attrs>[^>\n]*?)\s*-->[ \t]*\n(?P<body>.*?)^<!-- /numbers -->",
                   re.M | re.S)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _table2(numbers, attrs):
    """Dataset statistics (results/table2.csv): a row per field, counts with thousands separators."""
    from cookproc.evaluation.stats import TABLE2  # the columns rule dataset_stats writes, in its order

    columns = _list(attrs, "columns", ",".join(TABLE2.names[1:]))
    digits = int(attrs.get("digits", 1))
    rows = []
    for field in _list(attrs, "fields"):
        row = _find(_rows(numbers, "table2"), "table2", field=field)
        missing = [c for c in columns if c not in row]
        if missing:
            raise BlockError(f"table2: no column {missing[0]!r} in the numbers file's row")
        rows.append([field, *(_fmt(row[c], 0 if isinstance(row[c], int) else digits, thousands=True) for c in columns)])
    return _table(["field", *columns], rows)


def _table4_cell(row: Mapping, metric: str, digits: int) -> str:
    """A Table 4 cell: a percentage with `` ± sd`` where the row is a mean over seeds, a threshold-free
    score (AUC-ROC, AP: fractions) to 3 decimals, a label (``seeds``, ``threshold_objective``) as it is."""
    if metric not in row:
        raise BlockError(f"table4: no column {metric!r} in the numbers file's row of {row.get('system')!r}")
    value = row[metric]
    if metric in THRESHOLD_FREE:
        return _fmt(value, 3)
    sd = row.get(f"{metric}_sd")
    return _fmt(value, digits) + (f" ± {_fmt(sd, digits)}" if sd is not None else "")


def _table4(numbers, attrs):
    """Rows: systems; columns: ``metrics`` (Acc/P/R/F1 by default; also ``seeds``,
    ``threshold_objective``, ``auc_roc``, ``average_precision``: any column of results/table4.csv)."""
    metrics, digits = _list(attrs, "metrics", "accuracy,precision,recall,f1"), int(attrs.get("digits", 1))
    rows = [[f"`{s}`", *(_table4_cell(_find(_rows(numbers, "table4"), "table4", system=s), m, digits) for m in metrics)]
            for s in _list(attrs, "systems")]
    return _table(["system", *(HEADERS.get(m, m) for m in metrics)], rows)


def _table5_cell(numbers, system, keyclips, counting, field, mode, values, digits):
    row = _find(_rows(numbers, "table5"), "table5", system=system, keyclips=keyclips, counting=counting, field=field,
                mode=mode)
    metrics = ("precision", "recall", "f1") if values == "prf" else (values,)
    return " ".join(_fmt(row.get(m), digits) for m in metrics)


def _table5(numbers, attrs):
    """Rows: ``system`` or ``system@keyclips``; cells: ``field:mode``; a cell joins its countings
    with " / " (for predicted key clips: the paper's counting, then masked)."""
    keyclips = attrs.get("keyclips", "oracle")
    cells = [c.split(":") for c in _list(attrs, "cells", "verbs:exact,arguments:partial")]
    values, digits = attrs.get("values", "f1"), int(attrs.get("digits", 1))
    out = []
    for item in _list(attrs, "rows"):
        system, _, source = item.partition("@")
        source = source or keyclips
        countings = ["oracle"] if source == "oracle" else _list(attrs, "countings", "predicted,predicted-masked")
        out.append([f"`{system}`" + (f" ({source} key clips)" if "@" in item else ""),
                    *(" / ".join(_table5_cell(numbers, system, source, c, field, mode, values, digits)
                                 for c in countings) for field, mode in cells)])
    return _table(["system", *(f"{f} {m}" for f, m in cells)], out)


def _seeds(numbers, attrs):
    """Mean ± sd over seeds of the neural selectors (results/keyclips/seed_summary.csv)."""
    metrics, digits = _list(attrs, "metrics", "accuracy,f1"), int(attrs.get("digits", 2))
    rows = _rows(numbers, "seeds")
    out = []
    for system in _list(attrs, "systems"):
        n = sum(1 for r in rows if r["system"] == system and str(r["run"]).startswith("seed"))
        if n == 1:  # one seed: its scores, no spread
            mean, sd = _find(rows, "seeds", system=system), {m: None for m in metrics}
        else:
            mean, sd = (_find(rows, "seeds", system=system, run=r) for r in ("mean", "std"))
        out.append([f"`{system}`", str(n), *(f"{_fmt(mean[m], digits)} ± {_fmt(sd[m], digits)}" for m in metrics)])
    return _table(["system", "seeds", *(HEADERS.get(m, m) + " (mean ± sd)" for m in metrics)], out)


def _intervals(numbers, attrs):
    """Bootstrap intervals: rows ``system`` (Table 4) or ``system@keyclips/counting/field/mode`` (Table 5),
    each with the run it was computed from (a seed, or the mean over seeds)."""
    metric, digits = attrs.get("metric", "f1"), int(attrs.get("digits", 1))
    out = []
    for item in _list(attrs, "rows"):
        system, _, cell = item.partition("@")
        if cell:
            keyclips, counting, field, mode = cell.split("/")
            row = _find(_rows(numbers, "table5_ci"), "table5_ci", system=system, keyclips=keyclips, counting=counting,
                        field=field, mode=mode, metric=metric)
            label = f"`{system}`, {keyclips} key clips ({counting}), {field} {mode}"
        else:
            row = _find(_rows(numbers, "table4_ci"), "table4_ci", system=system, metric=metric)
            label = f"`{system}`, key clips"
        out.append([label, str(row.get("run") or "–"), _fmt(row["value"], digits),
                    f"[{_fmt(row['ci_low'], digits)}, {_fmt(row['ci_high'], digits)}]"])
    return _table(["cell", "run (seed or pooling)", HEADERS.get(metric, metric), "95% interval"], out)


def _models(numbers, attrs):
    """Each deployed model's card scores: the cross-validated run of its configuration and seed."""
    digits = int(attrs.get("digits", 1))
    out = []
    for name in _list(attrs, "models"):
        if name not in numbers.get("models", {}):
            raise BlockError(f"the numbers file holds no model {name!r}")
        cv = numbers["models"][name]["crossval"]
        if "runs" in cv:  # a key-clip selector: Acc / F1 of its run, F1 interval
            run = cv["runs"][0]
            low, high = cv["intervals"]["metrics"]["f1"]
            scores = f"Acc {_fmt(run['accuracy'], digits)} / F1 {_fmt(run['f1'], digits)} [{_fmt(low, digits)}, {_fmt(high, digits)}]"
            what = f"`{cv['system']}` of Table 4, {run['run']}"
        else:  # a tuple extractor: oracle verbs exact / arguments partial F1 with intervals
            f1 = {c["field"]: c for c in cv["cells"] if c["metric"] == "f1"}
            scores = " / ".join(f"{f} {f1[f]['mode']} F1 {_fmt(f1[f]['value'], digits)} "
                                f"[{_fmt(f1[f]['ci_low'], digits)}, {_fmt(f1[f]['ci_high'], digits)}]"
                                for f in ("verbs", "arguments"))
            what = f"`{cv['system']}` of Table 5, oracle key clips"
        out.append([f"`results/models/{name}`", what, scores])
    return _table(["model", "cross-validated as", "scores (card)"], out)


def _run_times(numbers, attrs):
    times = numbers.get("run_times", {})
    out = []
    for path in _list(attrs, "jobs"):
        if path not in times:
            raise BlockError(f"no run time of {path} in the numbers file")
        out.append([f"`{path}`", _fmt(times[path]["s"], 0), _fmt(times[path]["max_rss_mb"], 0)])
    return _table(["benchmark file", "seconds", "max RSS (MB)"], out)


def _significance(numbers, attrs):
    """The declared family of comparisons (results/significance.csv), in its order: each row's cell,
    the two systems with the run each is scored on (seed or pooling), the F1 difference and its
    interval, the raw and Holm-adjusted bootstrap p-values, and whether it is significant after Holm."""
    tables, digits = _list(attrs, "tables"), int(attrs.get("digits", 2))
    rows = [r for r in _rows(numbers, "significance") if r["table"] in tables]
    if not rows:
        raise BlockError(f"significance: no comparison in tables {tables}")
    from cookproc.evaluation.significance import smallest_p_value  # 2 / (B + 1), the bootstrap's own floor

    pdigits = math.ceil(-math.log10(smallest_p_value(int(rows[0]["resamples"]))))  # enough decimals to show it

    def cell(r):
        if r["table"] == "table4":
            return "Table 4, key clips"
        return f"Table 5, {r['keyclips']} key clips" + ("" if r["counting"] == r["keyclips"] else f" ({r['counting']})") \
            + f", {r['field']} {r['mode']}"

    def system(name, run):
        return f"`{name}`" + ("" if run in (None, "-") else f" ({run})")

    out = [[cell(r), system(r["system_a"], r["run_a"]), system(r["system_b"], r["run_b"]),
            f"{_fmt(r['difference'], digits)} [{_fmt(r['ci_low'], digits)}, {_fmt(r['ci_high'], digits)}]",
            _fmt(r["p_value"], pdigits), _fmt(r["p_holm"], pdigits), "yes" if r["significant"] else "no"]
           for r in rows]
    return _table(["cell", "A", "B", f"{HEADERS.get(rows[0]['metric'], rows[0]['metric'])} A − B [95% interval]",
                   "p", "p (Holm)", "significant"], out)


def _stamp_only(numbers, attrs):
    """A ``stamp`` block: the stamp line alone, for the figures in a document's prose
    (:mod:`cookproc.evaluation.render_inline`)."""
    return []


KINDS = {"table2": _table2, "table4": _table4, "table5": _table5, "seeds": _seeds, "intervals": _intervals,
         "models": _models, "run-times": _run_times, "significance": _significance, "stamp": _stamp_only}
#: Each kind's attributes: the required one first, then the optional ones.
ATTRS = {"table2": ("fields", "columns", "digits"), "table4": ("systems", "metrics", "digits"),
         "table5": ("rows", "keyclips", "countings", "cells", "values", "digits"),
         "seeds": ("systems", "metrics", "digits"), "intervals": ("rows", "metric", "digits"),
         "models": ("models", "digits"), "run-times": ("jobs",), "significance": ("tables", "digits"), "stamp": ()}


def block_attrs(kind: str, attrs: str) -> dict[str, str]:
    """A block's attributes, checked against its kind (unknown kinds and attributes are errors)."""
    if kind not in KINDS:
        raise BlockError(f"unknown block kind {kind!r}; known: {sorted(KINDS)}")
    parsed = _attrs(attrs)
    unknown = sorted(set(parsed) - set(ATTRS[kind]))
    if unknown:
        raise BlockError(f"unknown attributes {unknown} of a {kind} block; known: {list(ATTRS[kind])}")
    if ATTRS[kind] and ATTRS[kind][0] not in parsed:
        raise BlockError(f"a {kind} block needs {ATTRS[kind][0]}=...")
    return parsed


def render_block(kind: str, attrs: str, numbers: Mapping) -> str:
    """A block's body: the stamp line, a blank line, the table (each line ending in a newline)."""
    attributes = block_attrs(kind, attrs)  # checks the kind too
    table = KINDS[kind](numbers, attributes)
    return "\n".join([stamp(numbers["run"]), *([""] + table if table else [])]) + "\n"


def lint_text(text: str, name: str = "<text>") -> list[str]:
    """Problems of a document's blocks that need no numbers file: a known kind and attributes, a
    stamp as the first line (saying which run its numbers come from), a table below it."""
    problems = []
    opened = len(re.findall(r"^<!-- numbers:", text, re.M))  # a marker starts its line (prose may quote one)
    found = blocks(text)
    if opened != len(found):
        problems.append(f"{name}: {opened} blocks opened, {len(found)} closed by {END!r}")
    for match in found:
        where = _where(name, text, match)
        try:
            block_attrs(match["kind"], match["attrs"])
        except BlockError as exc:
            problems.append(f"{where}: {exc}")
        lines = match["body"].splitlines()
        if not lines or not lines[0].startswith(STAMP_START):
            problems.append(f"{where}: the first line must be a stamp starting {STAMP_START!r}")
        if match["kind"] != "stamp" and not any(line.startswith("|") for line in lines):
            problems.append(f"{where}: no table")
    from cookproc.evaluation.render_inline import lint_values  # builds on this module's lookups

    return problems + lint_values(text, name)


def blocks(text: str) -> list[re.Match]:
    return list(BLOCK.finditer(text))


def _where(name: str, text: str, match: re.Match) -> str:
    return f"{name}, block numbers:{match['kind']} (line {text.count(chr(10), 0, match.start()) + 1})"


def substitute(text: str, matches: list[re.Match], group: str, render, where) -> str:
    """``text`` with the ``group`` of each match replaced by ``render(match)``; a BlockError is
    raised again prefixed by ``where(match)`` (blocks and inline values alike)."""
    out, end = [], 0
    for match in matches:
        try:
            rendered = render(match)
        except BlockError as exc:
            raise BlockError(f"{where(match)}: {exc}") from None
        out += [text[end:match.start(group)], rendered]
        end = match.end(group)
    return "".join(out) + text[end:]


def render_text(text: str, numbers: Mapping, name: str = "<text>") -> str:
    """``text`` with every block's body rendered from ``numbers``."""
    rendered = substitute(text, blocks(text), "body", lambda m: render_block(m["kind"], m["attrs"], numbers),
                          lambda m: _where(name, text, m))
    from cookproc.evaluation.render_inline import render_values  # builds on this module's lookups

    return render_values(rendered, numbers, name)


def first_difference(found: str, expected: str) -> str | None:
    """Where a block differs from its rendering: the first differing number, else the first differing line."""
    got, want = NUMBER.findall(found), NUMBER.findall(expected)
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"number {i + 1} is {a}, the numbers file gives {b}"
    if len(got) != len(want):
        return f"{len(got)} numbers, the numbers file gives {len(want)}"
    for a, b in zip(found.splitlines() + [""], expected.splitlines() + [""]):
        if a != b:
            return f"line {a!r} differs from the rendering {b!r}"
    return None


def check_text(text: str, numbers: Mapping, name: str = "<text>") -> list[str]:
    """One message per block whose body differs from its rendering (stamp first, then numbers);
    empty when every block matches."""
    problems = []
    for match in blocks(text):
        where = _where(name, text, match)
        try:
            expected = render_block(match["kind"], match["attrs"], numbers)
        except BlockError as exc:
            problems.append(f"{where}: {exc}")
            continue
        found = match["body"]
        first = found.splitlines()[0] if found.strip() else ""
        if first != expected.splitlines()[0]:
            problems.append(f"{where}: stamp {first!r} is not the numbers file's run {expected.splitlines()[0]!r}"
                            + ("" if not first_difference(found, expected) else
                               f"; first difference: {first_difference(_drop_stamp(found), _drop_stamp(expected))}"))
            continue
        difference = first_difference(_drop_stamp(found), _drop_stamp(expected))
        if difference:
            problems.append(f"{where}: {difference}")
    from cookproc.evaluation.render_inline import check_values  # builds on this module's lookups

    return problems + check_values(text, numbers, name)


def _drop_stamp(body: str) -> str:
    return "\n".join(body.splitlines()[1:])
