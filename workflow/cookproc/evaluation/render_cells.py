"""What the result blocks (:mod:`cookproc.evaluation.render`) and the inline values
(:mod:`cookproc.evaluation.render_inline`) share: finding a row of ``results/numbers.json``,
writing a number as the docs write it, the stamp line naming the run, and the error for a lookup
the file cannot answer."""

from __future__ import annotations

from typing import Mapping, Sequence

#: Column headers of the rendered tables (other columns are headed by their CSV name).
HEADERS = {"accuracy": "Acc", "precision": "P", "recall": "R", "f1": "F1", "threshold_objective": "threshold objective",
           "auc_roc": "AUC-ROC", "average_precision": "AP"}
#: Table 4's threshold-free columns: fractions over the out-of-fold scores, not percentages.
THRESHOLD_FREE = ("auc_roc", "average_precision")
#: How every stamp line starts (lint requires one atop each block).
STAMP_START = "*Numbers from "


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


def _fmt(value, digits: int, thousands: bool = False) -> str:
    """A cell as the docs write it: ``digits`` decimals, "–" for none; ``thousands``: 4,004."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:{',' if thousands else ''}.{digits}f}"


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
