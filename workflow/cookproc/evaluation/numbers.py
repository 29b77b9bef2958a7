"""One generated file of every figure the README and docs state about results, and the command
that renders the docs' result tables from it or checks them.

``results/numbers.json`` (rule ``numbers``, :func:`collect`) holds the rows of the workflow's
result CSVs as they are (Table 2's dataset statistics, Tables 4 and 5 in every counting, their
bootstrap intervals, the significance table, the neural selectors' seeds), the cross-validated scores each deployed model's
card states (``model.json``'s ``crossval``), the run times of Snakemake's ``benchmark:`` files, and
the run it comes from (commit, a digest of the config, date). Rows are read as CSV, column by
column, so a new column of a table is in the file without a change here.

The README's and docs' ``<!-- numbers:KIND ... -->`` blocks are rendered and checked by
:mod:`cookproc.evaluation.render`; ``python -m cookproc.evaluation.numbers check README.md docs/*.md``
(or ``render``) runs it on files.

Determinism: the file is JSON with sorted keys, the rows in the CSVs' order and the values as the
CSVs hold them, so the same results give the same bytes except ``run`` (commit, date: when and
from what the file was made) and ``run_times`` (measurements, which differ from run to run).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from cookproc.core.errors import InputError
from cookproc.evaluation.render import BlockError, check_text, lint_text, render_text

FORMAT = "cookproc.evaluation.numbers"
FORMAT_VERSION = 1
#: The result CSVs a numbers file can hold, by the key they get in it.
TABLES = ("table2", "table4", "table5", "table4_ci", "table5_ci", "significance", "seeds", "people",
          "people_comparisons", "alignment", "steps_benchmark")
DEFAULT_FILE = "results/numbers.json"


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cookproc.evaluation.numbers",
        description="Render the README's and docs' result tables from results/numbers.json, or check them.")
    parser.add_argument("action", choices=["render", "check", "lint"],
                        help="render: rewrite every numbers block and value; check: exit 1 naming each block or "
                             "value that differs; lint: exit 1 naming each malformed one (no numbers file needed)")
    parser.add_argument("files", nargs="+",
                        help="Markdown files with <!-- numbers:KIND ... --> blocks and <!-- n:KIND ... --> values")
    parser.add_argument("--numbers", default=DEFAULT_FILE, help=f"the numbers file (default {DEFAULT_FILE})")
    args = parser.parse_args(argv)
    if args.action == "lint":
        try:
            problems = [p for file in args.files for p in lint_text(Path(file).read_text(encoding="utf-8"), file)]
        except OSError as exc:
            print(f"numbers: error: {exc}", file=sys.stderr)
            return 2
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"{len(args.files)} file(s) linted: " + (f"{len(problems)} problem(s)" if problems else "well formed"))
        return 1 if problems else 0
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
              + (f"{len(problems)} block(s) or value(s) differ" if problems else "every block and value matches"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
