"""Material for the HTML report: tables as HTML pages and per-recipe scores (the error analysis
pages: :mod:`cookproc.evaluation.error_analysis`; the pages of procedures and corpora, which read the
app's documents: :mod:`cookproc.app.report_pages`).

* Per-recipe scores: Table 4's key-clip F1 and Table 5's oracle tuple F1 computed on each recipe's
  clips alone (with :mod:`cookproc.scoring.metrics`, exactly as the tables), as a tidy table and heatmaps.

Everything is ordered deterministically (count, then text), so pages are byte-identical run to run.
"""
from __future__ import annotations

import csv
import html
from collections import defaultdict
from typing import Mapping, Sequence

import pyarrow as pa

from cookproc.scoring.metrics import FIELDS, score_clips, score_keyclips
from cookproc.scoring.similarity import SimilarityCache
from cookproc.evaluation.tables import gold_sets, keyclip_flags, prediction_sets

#: Per-recipe scores, tidy: one row per recipe x system x field (``keyclips`` for Table 4's F1).
PER_RECIPE = pa.schema(
    [
        pa.field("recipe", pa.string(), nullable=False),
        pa.field("system", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),   # keyclips, verbs or arguments
        pa.field("mode", pa.string(), nullable=False),    # "-" for key clips
        pa.field("n_clips", pa.int64(), nullable=False),
        pa.field("precision", pa.float64(), nullable=False),
        pa.field("recall", pa.float64(), nullable=False),
        pa.field("f1", pa.float64(), nullable=False),
    ]
)

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sentence { font-style: italic; color: #444; }
.overflow { overflow-x: auto; }
"""


# ----------------------------------------------------------------------------- HTML
def page(title: str, body: str) -> str:
    """A self-contained HTML page (the report shows it in a frame)."""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n<h1>{html.escape(title)}</h1>\n{body}</body>\n</html>\n")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def html_table(header: Sequence[str], body: Sequence[Sequence], *, raw_columns: Sequence[int] = ()) -> str:
    """An HTML table; numbers right-aligned; ``raw_columns`` hold HTML already escaped."""
    out = ['<div class="overflow"><table>', "<thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
           + "</tr></thead>", "<tbody>"]
    for row in body:
        cells = []
        for i, value in enumerate(row):
            text = str(value)
            if i in raw_columns:
                cells.append(f"<td>{text}</td>")
            elif _is_number(text):
                cells.append(f'<td class="num">{html.escape(text)}</td>')
            else:
                cells.append(f"<td>{html.escape(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out) + "\n"


def csv_page(path, title: str, note: str = "", *, digits: int | None = 1) -> str:
    """A CSV file (header + rows) as an HTML page; long floats rounded to ``digits``."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise ValueError(f"{path}: empty CSV, expected a header line")

    def fmt(cell: str) -> str:
        if digits is not None and "." in cell and _is_number(cell):
            return f"{float(cell):.{digits}f}"
        return cell

    body = [[fmt(c) for c in row] for row in rows[1:]]
    intro = f"<p>{html.escape(note)}</p>\n" if note else ""
    return page(title, intro + html_table(rows[0], body))


# ----------------------------------------------------------------------------- per-recipe scores
def _recipes(clips: pa.Table) -> dict[str, list[int]]:
    """Recipe -> row indices of its clips (recipes sorted by name)."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, recipe in enumerate(clips.column("recipe").to_pylist()):
        out[recipe].append(i)
    return {r: out[r] for r in sorted(out)}


def per_recipe_scores(clips: pa.Table, keyclip_systems: Mapping[str, pa.Table], tuple_systems: Mapping[str, pa.Table],
                      *, mode: str = "fuzzy", cache: SimilarityCache | None = None) -> pa.Table:
    """Key-clip P/R/F1 and oracle tuple P/R/F1 (percent) per recipe and system."""
    cache = cache or SimilarityCache()
    recipes = _recipes(clips)
    gold_key = clips.column("is_key").to_pylist()
    gold = gold_sets(clips)
    rows = []
    for system, table in keyclip_systems.items():
        flags = keyclip_flags(clips, table, what=f"key-clip system {system}")
        for recipe, idx in recipes.items():
            s = score_keyclips([gold_key[i] for i in idx], [flags[i] for i in idx])
            rows.append({"recipe": recipe, "system": system, "field": "keyclips", "mode": "-", "n_clips": s.n_clips,
                         "precision": 100 * s.precision, "recall": 100 * s.recall, "f1": 100 * s.f1})
    for system, table in tuple_systems.items():
        pred = prediction_sets(clips, table, what=f"tuple system {system}")
        for field in FIELDS:
            for recipe, idx in recipes.items():
                g = [gold[field][i] for i in idx]
                s = score_clips(g, [pred[field][i] for i in idx], [bool(x) for x in g], mode, cache)
                rows.append({"recipe": recipe, "system": system, "field": field, "mode": mode, "n_clips": s.n_clips,
                             "precision": 100 * s.precision, "recall": 100 * s.recall, "f1": 100 * s.f1})
    return pa.Table.from_pylist(rows, schema=PER_RECIPE)


def plot_per_recipe(table: pa.Table, fields: Sequence[str], title: str, path) -> None:
    """A heatmap of F1 (percent): one row per recipe, one column per system (x field)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [r for r in table.to_pylist() if r["field"] in fields]
    recipes = sorted({r["recipe"] for r in rows})
    columns = list(dict.fromkeys((r["system"], r["field"]) for r in rows))  # first-seen order
    values = np.full((len(recipes), len(columns)), np.nan)
    for r in rows:
        if r["n_clips"]:
            values[recipes.index(r["recipe"]), columns.index((r["system"], r["field"]))] = r["f1"]
    labels = [s if len(fields) == 1 else f"{s}\n{f}" for s, f in columns]
    fig, ax = plt.subplots(figsize=(2.0 + 1.3 * len(columns), 1.6 + 0.24 * len(recipes)), dpi=110)
    image = ax.imshow(values, aspect="auto", cmap="viridis", vmin=0, vmax=100)
    ax.set_xticks(range(len(columns)), labels, fontsize=8, rotation=30, ha="right")
    ax.set_yticks(range(len(recipes)), recipes, fontsize=7)
    for (y, x), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(x, y, f"{v:.0f}", ha="center", va="center", fontsize=6, color="white" if v < 60 else "black")
    fig.colorbar(image, ax=ax, label="F1 (%)", fraction=0.046)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})  # no version stamp: byte-identical
    plt.close(fig)
