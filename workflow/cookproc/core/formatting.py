"""How the library writes numbers and tables for people: one number formatter and one Markdown-table
writer, used by the result tables (results/table4.md, table5.md), the docs' rendered blocks and
values (cookproc.evaluation.render) and the deployed models' cards (cookproc.learn.deployed_model),
so that the same number reads the same everywhere.
"""
from __future__ import annotations

import numbers
from typing import Sequence

#: What a missing value reads as.
NONE = "–"


def format_number(value, digits: int, thousands: bool = False) -> str:
    """``value`` with ``digits`` decimals (``thousands``: 4,004.0 rather than 4004.0); "–" for None;
    anything that is not a number (a label, a bool) as it is."""
    if value is None:
        return NONE
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    return f"{value:{',' if thousands else ''}.{digits}f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table of ready-made cells: the header, the rule, a line per row (no final newline)."""
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *("| " + " | ".join(row) + " |" for row in rows)])
