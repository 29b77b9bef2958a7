"""The README's and docs' result tables, rendered from ``results/numbers.json``
(:mod:`cookproc.evaluation.numbers`) and checked against it; the figures in their prose too
(``<!-- n:KIND ... -->VALUE<!-- /n -->``, :mod:`cookproc.evaluation.render_inline`).

The README and docs hold blocks between ``<!-- numbers:KIND attr=value ... -->`` and
``<!-- /numbers -->``. A block is a table whose every number is a lookup of
:mod:`cookproc.evaluation.lookups` (the value kinds a sentence can state too), with the
attributes of its row and column, written by :func:`cookproc.core.formatting.markdown_table`.
:func:`render_text` rewrites each block's body from the file (a stamp line naming the run, then
the table); :func:`check_text` renders and compares, and names the block and its first differing
number; :func:`lint_text` checks the blocks without a numbers file.
``python -m cookproc.evaluation.numbers check README.md docs/*.md`` (or ``render``) runs them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from cookproc.core.formatting import NONE, format_number, markdown_table
from cookproc.evaluation.lookups import (CARD_MODES, THRESHOLD_FREE, BlockError, digits_attr, interval_cell,
                                         interval_row, is_keyclip_selector, list_attr, lookup, model_crossval, optional,
                                         parse_attrs, rows_of, seed_runs, table_cell)
from cookproc.evaluation.render_people import people_comparisons_table, people_table
from cookproc.evaluation.render_inline import check_values, lint_values, render_values, substitute, values
from cookproc.evaluation.threshold_free import THRESHOLD_FREE_HEADERS

END = "<!-- /numbers -->"
BLOCK = re.compile(r"^<!-- numbers:(?P<kind>[a-z0-9-]+)(?P<attrs>[^>\n]*?)\s*-->[ \t]*\n(?P<body>.*?)^<!-- /numbers -->",
                   re.M | re.S)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
#: How every stamp line starts (lint requires one atop each block).
STAMP_START = "*Numbers from "
#: Column headers of the rendered tables (other columns are headed by their CSV name).
HEADERS = {"accuracy": "Acc", "precision": "P", "recall": "R", "f1": "F1", "threshold_objective": "threshold objective",
           **dict(zip(THRESHOLD_FREE, THRESHOLD_FREE_HEADERS))}


def stamp(run: Mapping) -> str:
    """The line above every rendered table: the run its numbers come from."""
    commit = (run.get("commit") or "unknown commit")[:7] + ("+changes" if run.get("dirty") else "")
    return f"{STAMP_START}run {commit}, {run.get('date')} (`results/numbers.json`).*"


def _table2(numbers, attrs):
    """Dataset statistics (results/table2.csv): a row per field, counts with thousands separators."""
    from cookproc.evaluation.stats import TABLE2  # the columns rule dataset_stats writes, in its order

    columns, digits = list_attr(attrs, "columns", ",".join(TABLE2.names[1:])), digits_attr(attrs, 1)

    def cell(field, column):
        value, default = lookup(numbers, "table2", field=field, column=column)
        return format_number(value, default if isinstance(value, int) else digits, thousands=True)

    return markdown_table(["field", *columns], [[field, *(cell(field, c) for c in columns)]
                                                for field in list_attr(attrs, "fields")])


def _table4(numbers, attrs):
    """Rows: systems; columns: ``metrics`` (Acc/P/R/F1 by default; also ``seeds``,
    ``threshold_objective``, ``auc_roc``, ``average_precision`` (pooled out of fold) and their
    ``*_fold_mean``: any column of results/table4.csv).
    A percentage gets `` ± sd`` where the row is a mean over seeds; a threshold-free score (a
    fraction) 3 decimals; a label is shown as it is."""
    metrics, digits = list_attr(attrs, "metrics", "accuracy,precision,recall,f1"), digits_attr(attrs, 1)

    def cell(system, metric):
        if metric in THRESHOLD_FREE:
            return table_cell(numbers, "table4", system=system, metric=metric)
        sd = optional(numbers, "table4", system=system, metric=f"{metric}_sd")
        return table_cell(numbers, "table4", digits, system=system, metric=metric) + (
            "" if sd is None else f" ± {format_number(sd, digits)}")

    return markdown_table(["system", *(HEADERS.get(m, m) for m in metrics)],
                          [[f"`{s}`", *(cell(s, m) for m in metrics)] for s in list_attr(attrs, "systems")])


def _table5(numbers, attrs):
    """Rows: ``system`` or ``system@keyclips``; cells: ``field:mode``; a cell joins its countings
    with " / " (for predicted key clips: the paper's counting, then masked), and with ``values=prf``
    its P, R and F1 with spaces."""
    keyclips = attrs.get("keyclips", "oracle")
    cells = [c.split(":") for c in list_attr(attrs, "cells", "verbs:exact,arguments:partial")]
    values_, digits = attrs.get("values", "f1"), digits_attr(attrs, 1)
    metrics = ("precision", "recall", "f1") if values_ == "prf" else (values_,)
    out = []
    for item in list_attr(attrs, "rows"):
        system, _, source = item.partition("@")
        source = source or keyclips
        countings = ["oracle"] if source == "oracle" else list_attr(attrs, "countings", "predicted,predicted-masked")
        out.append([f"`{system}`" + (f" ({source} key clips)" if "@" in item else ""),
                    *(" / ".join(" ".join(table_cell(numbers, "table5", digits, row=f"{system}@{source}",
                                                cell=f"{field}:{mode}", counting=c, value=m) for m in metrics)
                                 for c in countings) for field, mode in cells)])
    return markdown_table(["system", *(f"{f} {m}" for f, m in cells)], out)


def _seeds(numbers, attrs):
    """Mean ± sd over seeds of the neural selectors (results/keyclips/seed_summary.csv); one seed:
    its scores, no spread."""
    metrics, digits = list_attr(attrs, "metrics", "accuracy,f1"), digits_attr(attrs, 2)
    rows = [[f"`{s}`", str(len(seed_runs(numbers, s))),
             *(" ± ".join(table_cell(numbers, "seeds", digits, system=s, metric=m, stat=stat) for stat in ("mean", "sd"))
               for m in metrics)] for s in list_attr(attrs, "systems")]
    return markdown_table(["system", "seeds", *(HEADERS.get(m, m) + " (mean ± sd)" for m in metrics)], rows)


def _seed_runs(numbers, attrs):
    """Each seed's run of the systems scored over their seeds (results/keyclips/seed_summary.csv), a
    row per seed: the runs behind the mean ± sd of their Table 4 rows and of a ``seeds`` block."""
    metrics, digits = list_attr(attrs, "metrics", "accuracy,precision,recall,f1"), digits_attr(attrs, 2)
    rows = [[f"`{s}`", str(run["run"]).removeprefix("seed").strip(),
             *(table_cell(numbers, "seeds", digits, system=s, run=run["run"], metric=m) for m in metrics)]
            for s in list_attr(attrs, "systems") for run in _runs_of(numbers, s)]
    return markdown_table(["system", "seed", *(HEADERS.get(m, m) for m in metrics)], rows)


def _runs_of(numbers, system):
    runs = seed_runs(numbers, system)
    if not runs:
        raise BlockError(f"seeds: no run of {system!r} in the numbers file")
    return runs


def _intervals(numbers, attrs):
    """Bootstrap intervals: rows ``system`` (Table 4) or ``system@keyclips/counting/field/mode`` (Table 5),
    each with the run it was computed from (a seed, or the mean over seeds)."""
    metric, digits = attrs.get("metric", "f1"), digits_attr(attrs, 1)
    out = []
    for item in list_attr(attrs, "rows"):
        system, _, cell = item.partition("@")
        if cell:
            keyclips, counting, field, mode = cell.split("/")
            label = f"`{system}`, {keyclips} key clips ({counting}), {field} {mode}"
        else:
            label = f"`{system}`, key clips"
        out.append([label, str(interval_row(numbers, item, metric).get("run") or NONE),
                    table_cell(numbers, "intervals", digits, row=item, bound="value", metric=metric),
                    interval_cell(numbers, "intervals", digits, row=item, metric=metric)])
    return markdown_table(["cell", "run (seed or pooling)", HEADERS.get(metric, metric), "95% interval"], out)


def _models(numbers, attrs):
    """Each deployed model's card scores: the cross-validated run of its configuration and seed."""
    digits = digits_attr(attrs, 1)
    out = []
    for name in list_attr(attrs, "models"):
        cv = model_crossval(numbers, name)
        if is_keyclip_selector(cv):  # Acc / F1 of its run, F1 interval
            scores = (f"Acc {table_cell(numbers, 'models', digits, model=name, metric='accuracy')} / "
                      f"F1 {table_cell(numbers, 'models', digits, model=name)} "
                      f"{interval_cell(numbers, 'models', digits, model=name)}")
            what = f"`{cv['system']}` of Table 4, {cv['runs'][0]['run']}"
        else:  # oracle verbs exact / arguments partial F1 with intervals
            scores = " / ".join(f"{field} {mode} F1 {table_cell(numbers, 'models', digits, model=name, field=field)} "
                                f"{interval_cell(numbers, 'models', digits, model=name, field=field)}"
                                for field, mode in CARD_MODES.items())
            what = f"`{cv['system']}` of Table 5, oracle key clips"
        out.append([f"`results/models/{name}`", what, scores])
    return markdown_table(["model", "cross-validated as", "scores (card)"], out)


def _run_times(numbers, attrs):
    return markdown_table(["benchmark file", "seconds", "max RSS (MB)"], [
        [f"`{job}`", table_cell(numbers, "run-times", job=job), table_cell(numbers, "run-times", job=job, value="max_rss_mb")]
        for job in list_attr(attrs, "jobs")])


def _significance(numbers, attrs):
    """The declared family of comparisons (results/significance.csv), in its order: each row's cell,
    the two systems with the run each is scored on (seed or pooling), the F1 difference and its
    interval, the raw and Holm-adjusted bootstrap p-values, and whether it is significant after Holm.
    A listing of the file's rows: no sentence states one of them alone."""
    tables, digits = list_attr(attrs, "tables"), digits_attr(attrs, 2)
    rows = [r for r in rows_of(numbers, "significance") if r["table"] in tables]
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

    def number(value, decimals=digits):
        return format_number(value, decimals)

    out = [[cell(r), system(r["system_a"], r["run_a"]), system(r["system_b"], r["run_b"]),
            f"{number(r['difference'])} [{number(r['ci_low'])}, {number(r['ci_high'])}]",
            number(r["p_value"], pdigits), number(r["p_holm"], pdigits), "yes" if r["significant"] else "no"]
           for r in rows]
    metric = HEADERS.get(rows[0]["metric"], rows[0]["metric"])
    return markdown_table(["cell", "A", "B", f"{metric} A − B [95% interval]", "p", "p (Holm)", "significant"], out)


@dataclass(frozen=True)
class BlockKind:
    table: Callable[[Mapping, Mapping[str, str]], str] | None  # None: the stamp line alone
    attrs: tuple[str, ...]  # the required one first, then the optional ones


#: A ``stamp`` block is the stamp line alone, for the figures in a document's prose.
KINDS = {"table2": BlockKind(_table2, ("fields", "columns", "digits")),
         "table4": BlockKind(_table4, ("systems", "metrics", "digits")),
         "table5": BlockKind(_table5, ("rows", "keyclips", "countings", "cells", "values", "digits")),
         "seeds": BlockKind(_seeds, ("systems", "metrics", "digits")),
         "seed-runs": BlockKind(_seed_runs, ("systems", "metrics", "digits")),
         "intervals": BlockKind(_intervals, ("rows", "metric", "digits")),
         "models": BlockKind(_models, ("models", "digits")), "run-times": BlockKind(_run_times, ("jobs",)),
         "significance": BlockKind(_significance, ("tables", "digits")),
         "people": BlockKind(people_table, ("systems", "view", "digits")),
         "people-comparisons": BlockKind(people_comparisons_table, ("pairs", "metrics", "digits")),
         "stamp": BlockKind(None, ())}


def block_attrs(kind: str, attrs: str) -> dict[str, str]:
    """A block's attributes, checked against its kind (unknown kinds and attributes are errors)."""
    if kind not in KINDS:
        raise BlockError(f"unknown block kind {kind!r}; known: {sorted(KINDS)}")
    parsed, known = parse_attrs(attrs), KINDS[kind].attrs
    unknown = sorted(set(parsed) - set(known))
    if unknown:
        raise BlockError(f"unknown attributes {unknown} of a {kind} block; known: {list(known)}")
    if known and known[0] not in parsed:
        raise BlockError(f"a {kind} block needs {known[0]}=...")
    return parsed


def render_block(kind: str, attrs: str, numbers: Mapping) -> str:
    """A block's body: the stamp line, a blank line, the table (each line ending in a newline)."""
    attributes = block_attrs(kind, attrs)  # checks the kind too
    table = KINDS[kind].table
    return stamp(numbers["run"]) + ("" if table is None else "\n\n" + table(numbers, attributes)) + "\n"


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
    problems += lint_values(text, name)
    if values(text) and not any(b["kind"] == "stamp" for b in found):
        problems.append(f"{name}: {len(values(text))} values but no <!-- numbers:stamp --> block saying which run "
                        "they come from")
    return problems


def blocks(text: str) -> list[re.Match]:
    return list(BLOCK.finditer(text))


def _where(name: str, text: str, match: re.Match) -> str:
    return f"{name}, block numbers:{match['kind']} (line {text.count(chr(10), 0, match.start()) + 1})"


def render_text(text: str, numbers: Mapping, name: str = "<text>") -> str:
    """``text`` with every block's body rendered from ``numbers``."""
    rendered = substitute(text, blocks(text), "body", lambda m: render_block(m["kind"], m["attrs"], numbers),
                          lambda m: _where(name, text, m))
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
    return problems + check_values(text, numbers, name)


def _drop_stamp(body: str) -> str:
    return "\n".join(body.splitlines()[1:])
