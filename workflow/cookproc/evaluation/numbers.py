"""One generated file of every figure the README and docs state about results, and the docs'
result tables rendered from it.

``results/numbers.json`` (rule ``numbers``, :func:`collect`) holds the rows of the workflow's
result CSVs as they are (Tables 4 and 5 in every counting, their bootstrap intervals, the
significance table, the neural selectors' seeds), the cross-validated scores each deployed model's
card states (``model.json``'s ``crossval``), the run times of Snakemake's ``benchmark:`` files, and
the run it comes from (commit, a digest of the config, date). Rows are read as CSV, column by
column, so a new column of a table is in the file without a change here.

The README and docs hold blocks between ``<!-- numbers:KIND attr=value ... -->`` and
``<!-- /numbers -->``. :func:`render_text` rewrites each block's body from the file (a stamp line
naming the run, then a Markdown table); :func:`check_text` renders and compares, and names the
block and its first differing number. ``python -m cookproc.evaluation.numbers check README.md docs/*.md``
(or ``render``) runs them.

Determinism: the file is JSON with sorted keys, the rows in the CSVs' order and the values as the
CSVs hold them, so the same results give the same bytes except ``run`` (commit, date: when and
from what the file was made) and ``run_times`` (measurements, which differ from run to run).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from cookproc.core.errors import InputError

FORMAT = "cookproc.evaluation.numbers"
FORMAT_VERSION = 1
#: The result CSVs a numbers file can hold, by the key they get in it.
TABLES = ("table4", "table5", "table4_ci", "table5_ci", "significance", "seeds")
DEFAULT_FILE = "results/numbers.json"
#: Column headers of the rendered tables (other columns are headed by their CSV name).
HEADERS = {"accuracy": "Acc", "precision": "P", "recall": "R", "f1": "F1"}
END = "<!-- /numbers -->"
BLOCK = re.compile(r"^<!-- numbers:(?P<kind>[a-z0-9-]+)(?P<attrs>[^>\n]*?)\s*-->[ \t]*\n(?P<body>.*?)^<!-- /numbers -->",
                   re.M | re.S)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


# --- the file --------------------------------------------------------------------------------

def _value(text: str):
    """A CSV cell as the value it spells: bool, int, float, None (empty) or the string itself."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_rows(path: str | Path) -> list[dict]:
    """Every row of a CSV file, each cell converted by :func:`_value` (all columns kept)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            raw = list(csv.DictReader(handle))
    except (OSError, csv.Error, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read the CSV: {exc}") from exc
    for line, row in enumerate(raw, start=2):
        if None in row:
            raise InputError(path, "more cells than columns", line=line)
        if None in row.values():
            raise InputError(path, "fewer cells than columns", line=line)
    return [{key: _value(cell) for key, cell in row.items()} for row in raw]


def read_benchmark(path: str | Path) -> dict:
    """Wall time (s) and max RSS (MB) of a Snakemake ``benchmark:`` file (its first run)."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows or "s" not in rows[0]:
        raise InputError(path, "not a Snakemake benchmark file (no 's' column)")
    return {"s": _value(rows[0]["s"]), "max_rss_mb": _value(rows[0].get("max_rss", ""))}


def model_numbers(folder: str | Path) -> dict:
    """What a deployed model's card states: ``model.json``'s ``crossval`` (the cross-validated run
    of the same configuration and seed, as the card shows it) and what it was trained on."""
    path = Path(folder) / "model.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the model's metadata: {exc}") from exc
    if "crossval" not in meta:
        raise InputError(path, "no 'crossval' (cross-validated scores of the card): build the model again")
    training = {k: v for k, v in meta.get("training", {}).items() if k != "candidates"}
    return {"format": meta.get("format"), "crossval": meta["crossval"], "training": training}


def config_digest(config: Mapping) -> str:
    """BLAKE2b of the validated config (JSON, sorted keys): two runs with the same digest had the same settings."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def git_state(repo: str | Path) -> dict:
    """The checkout's commit and whether tracked files differ from it (None where git is absent)."""
    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout

    try:
        return {"commit": git("rev-parse", "HEAD").strip(), "dirty": bool(git("status", "--porcelain", "-uno").strip())}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


def collect(tables: Mapping[str, str | Path], models: Mapping[str, str | Path], benchmarks: Iterable[str | Path],
            run: Mapping) -> dict:
    """The numbers file's content. ``tables``: CSV path by key (:data:`TABLES`); ``models``: model
    folder by name; ``benchmarks``: benchmark files (read where they exist); ``run``: commit, dirty,
    date, config digest, code fingerprint."""
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ValueError(f"unknown tables {unknown}; known: {list(TABLES)}")
    numbers = {"format": FORMAT, "format_version": FORMAT_VERSION, "run": dict(run),
               "models": {name: model_numbers(folder) for name, folder in sorted(models.items())},
               "run_times": {str(p): read_benchmark(p) for p in sorted(map(str, benchmarks)) if Path(p).exists()}}
    for key, path in tables.items():
        numbers[key] = read_rows(path)
    return numbers


def dumps(numbers: Mapping) -> str:
    return json.dumps(numbers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def read_numbers(path: str | Path) -> dict:
    path = Path(path)
    try:
        numbers = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read the numbers file: {exc}") from exc
    if numbers.get("format") != FORMAT or numbers.get("format_version") != FORMAT_VERSION:
        raise InputError(path, f"not a {FORMAT} file of version {FORMAT_VERSION}")
    return numbers


def today() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


# --- rendering -------------------------------------------------------------------------------

class BlockError(ValueError):
    """A block asks for something the numbers file does not hold."""


def _attrs(text: str) -> dict[str, str]:
    attrs = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if not sep:
            raise BlockError(f"attribute {token!r} is not key=value")
        attrs[key] = value
    return attrs


def _list(attrs: Mapping[str, str], key: str, default: str | None = None) -> list[str]:
    value = attrs.get(key, default)
    if value is None:
        raise BlockError(f"needs {key}=...")
    return [v for v in value.split(",") if v]


def _fmt(value, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:.{digits}f}"


def stamp(run: Mapping) -> str:
    """The line above every rendered table: the run its numbers come from."""
    commit = (run.get("commit") or "unknown commit")[:7] + ("+changes" if run.get("dirty") else "")
    return f"{STAMP_START}run {commit}, {run.get('date')} (`results/numbers.json`).*"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def _find(rows: Sequence[dict], what: str, **keys) -> dict:
    found = [r for r in rows if all(r.get(k) == v for k, v in keys.items())]
    if len(found) != 1:
        raise BlockError(f"{what}: {len(found)} rows with {keys}, expected one")
    return found[0]


def _rows(numbers: Mapping, key: str) -> list[dict]:
    if key not in numbers:
        raise BlockError(f"the numbers file holds no {key} (not built in this run)")
    return numbers[key]


def _table4(numbers, attrs):
    metrics, digits = _list(attrs, "metrics", "accuracy,precision,recall,f1"), int(attrs.get("digits", 1))
    rows = [[f"`{s}`", *(_fmt(_find(_rows(numbers, "table4"), "table4", system=s).get(m), digits) for m in metrics)]
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
    """Bootstrap intervals: rows ``system`` (Table 4) or ``system@keyclips/counting/field/mode`` (Table 5)."""
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
        out.append([label, _fmt(row["value"], digits), f"[{_fmt(row['ci_low'], digits)}, {_fmt(row['ci_high'], digits)}]"])
    return _table(["cell", HEADERS.get(metric, metric), "95% interval"], out)


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


KINDS = {"table4": _table4, "table5": _table5, "seeds": _seeds, "intervals": _intervals, "models": _models,
         "run-times": _run_times}
#: Each kind's attributes: the required one first, then the optional ones.
ATTRS = {"table4": ("systems", "metrics", "digits"),
         "table5": ("rows", "keyclips", "countings", "cells", "values", "digits"),
         "seeds": ("systems", "metrics", "digits"), "intervals": ("rows", "metric", "digits"),
         "models": ("models", "digits"), "run-times": ("jobs",)}
STAMP_START = "*Numbers from "


def block_attrs(kind: str, attrs: str) -> dict[str, str]:
    """A block's attributes, checked against its kind (unknown kinds and attributes are errors)."""
    if kind not in KINDS:
        raise BlockError(f"unknown block kind {kind!r}; known: {sorted(KINDS)}")
    parsed = _attrs(attrs)
    unknown = sorted(set(parsed) - set(ATTRS[kind]))
    if unknown:
        raise BlockError(f"unknown attributes {unknown} of a {kind} block; known: {list(ATTRS[kind])}")
    if ATTRS[kind][0] not in parsed:
        raise BlockError(f"a {kind} block needs {ATTRS[kind][0]}=...")
    return parsed


def render_block(kind: str, attrs: str, numbers: Mapping) -> str:
    """A block's body: the stamp line, a blank line, the table (each line ending in a newline)."""
    attributes = block_attrs(kind, attrs)  # checks the kind too
    table = KINDS[kind](numbers, attributes)
    return "\n".join([stamp(numbers["run"]), "", *table]) + "\n"


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
        if not any(line.startswith("|") for line in lines):
            problems.append(f"{where}: no table")
    return problems


def blocks(text: str) -> list[re.Match]:
    return list(BLOCK.finditer(text))


def _where(name: str, text: str, match: re.Match) -> str:
    return f"{name}, block numbers:{match['kind']} (line {text.count(chr(10), 0, match.start()) + 1})"


def render_text(text: str, numbers: Mapping, name: str = "<text>") -> str:
    """``text`` with every block's body rendered from ``numbers``."""
    out, end = [], 0
    for match in blocks(text):
        try:
            body = render_block(match["kind"], match["attrs"], numbers)
        except BlockError as exc:
            raise BlockError(f"{_where(name, text, match)}: {exc}") from None
        out += [text[end:match.start("body")], body]
        end = match.end("body")
    return "".join(out) + text[end:]


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
    return problems


def _drop_stamp(body: str) -> str:
    return "\n".join(body.splitlines()[1:])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cookproc.evaluation.numbers",
        description="Render the README's and docs' result tables from results/numbers.json, or check them.")
    parser.add_argument("action", choices=["render", "check"],
                        help="render: rewrite every numbers block; check: exit 1 naming each block that differs")
    parser.add_argument("files", nargs="+", help="Markdown files with <!-- numbers:KIND ... --> blocks")
    parser.add_argument("--numbers", default=DEFAULT_FILE, help=f"the numbers file (default {DEFAULT_FILE})")
    args = parser.parse_args(argv)
    try:
        numbers = read_numbers(args.numbers)
        problems, changed = [], []
        for file in args.files:
            text = Path(file).read_text(encoding="utf-8")
            if args.action == "check":
                problems += check_text(text, numbers, file)
            else:
                rendered = render_text(text, numbers, file)
                if rendered != text:
                    Path(file).write_text(rendered, encoding="utf-8")
                    changed.append(file)
    except (InputError, BlockError, OSError) as exc:
        print(f"numbers: error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.action == "render":
        print(f"rendered {len(changed)} file(s) from {args.numbers}: {', '.join(changed) or 'no change'}")
    else:
        print(f"{len(args.files)} file(s) checked against {args.numbers}: "
              + (f"{len(problems)} block(s) differ" if problems else "every block matches"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
