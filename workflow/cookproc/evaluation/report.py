"""Material for the HTML report: tables as HTML pages, per-recipe scores, procedure and corpus
pages (the error analysis pages: :mod:`cookproc.evaluation.error_analysis`).

* Per-recipe scores: Table 4's key-clip F1 and Table 5's oracle tuple F1 computed on each recipe's
  clips alone (with :mod:`cookproc.evaluation.metrics`, exactly as the tables), as a tidy table and heatmaps.

Everything is ordered deterministically (count, then text), so pages are byte-identical run to run.
"""
from __future__ import annotations

import csv
import html
from collections import Counter, defaultdict
from typing import Mapping, Sequence

import pyarrow as pa

from cookproc.evaluation.metrics import FIELDS, SimilarityCache, score_clips, score_keyclips
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


# ----------------------------------------------------------------------------- procedures
def _tuples_text(tuples: Sequence[Mapping]) -> str:
    return "; ".join(t["verb"] + (f" ({', '.join(t['args'])})" if t["args"] else "") for t in tuples)


def procedure_html(document: Mapping) -> str:
    """The body of a user procedure's page: its key steps in order, with times, tuples, the key
    probability (or the extractor's score) and the sentence (a procedure document, checked)."""
    from cookproc.app.documents import validate_document

    validate_document(document)
    clips = document["clips"]
    steps = [c for c in clips if c["is_key"]]
    intro = (f"<p>From <code>{html.escape(document['source'])}</code>: {len(steps)} key steps of "
             f"{document['n_clips']} clips ({html.escape(document['segmentation'])} segmentation). Key clips by "
             f"<code>{html.escape(document['key_clips_by'])}</code>, tuples by "
             f"<code>{html.escape(document['extractor'])}</code>.</p>\n")
    body = []
    for step, clip in enumerate(steps, 1):
        when = (f"line {clip['source_lines'][0]}" if clip["start_s"] is None
                else f"{clip['start']}–{'end' if clip['end_s'] is None else clip['end']}")
        confidence = clip["key_probability"] if clip["key_probability"] is not None else clip["key_score"]
        body.append([step, when, _tuples_text(clip["tuples"]) or "(no tuple)",
                     "" if confidence is None else f"{confidence:.2f}",
                     f'<span class="sentence">{html.escape(clip["sentence"])}</span>'])
    header = ["step", "time", "verbs (arguments)", "key probability", "sentence"]
    if not steps:
        return intro + "<p>No key clips were found.</p>\n"
    return intro + html_table(header, body, raw_columns=(4,))


def _percentiles_of_counts(counts: Counter, qs: Sequence[float]) -> list[float]:
    """numpy's (linear) percentiles of the values that ``counts`` ({value: how often}) describes,
    without materialising them: the corpus's steps-per-video are a histogram, not a list per video."""
    values = sorted(counts)
    n = sum(counts.values())

    def at(rank: int) -> float:  # the rank-th (0-based) value of the sorted values
        seen = 0
        for value in values:
            seen += counts[value]
            if rank < seen:
                return float(value)
        raise IndexError(rank)

    out = []
    for q in qs:
        position = q / 100 * (n - 1)
        low = int(position)
        high = min(low + 1, n - 1)
        out.append(at(low) + (at(high) - at(low)) * (position - low))
    return out


class CorpusSummary:
    """A corpus's summary page, built shard by shard: :meth:`add` each shard's clips (a CORPUS_CLIPS
    table, or its :attr:`COLUMNS`), then :meth:`html`. It keeps counts only (a histogram of steps
    per video, verb and argument counts), so its memory does not grow with the number of videos;
    a video's clips must all come in one :meth:`add` (a corpus shard holds whole videos)."""

    COLUMNS = ("video_id", "is_key", "verbs", "args", "extractor")

    def __init__(self) -> None:
        self.steps_per_video: Counter = Counter()  # {steps: videos}
        self.verbs: Counter = Counter()
        self.args: Counter = Counter()
        self.extractors: set[str] = set()
        self.n_clips = self.n_key = 0

    def add(self, clips: pa.Table) -> None:
        videos = clips.column("video_id").to_pylist()
        is_key = clips.column("is_key").to_pylist()
        steps = Counter(v for v, k in zip(videos, is_key) if k)
        self.steps_per_video.update(steps.get(v, 0) for v in set(videos))
        for key, v, a in zip(is_key, clips.column("verbs").to_pylist(), clips.column("args").to_pylist()):
            if key:
                self.verbs.update(v)
                self.args.update(a)
        self.extractors.update(clips.column("extractor").to_pylist())
        self.n_clips += len(videos)
        self.n_key += sum(is_key)

    def html(self, *, top: int = 20) -> str:
        """The page's body: how many videos, clips and key clips, the distribution of steps per
        video, and the most frequent verbs and arguments of key clips. Ties are ordered by text,
        so the page is byte-identical run to run."""
        n_videos = sum(self.steps_per_video.values())
        out = [f"<p>{n_videos:,} videos, {self.n_clips:,} clips, {self.n_key:,} key clips; extracted with "
               + ", ".join(f"<code>{html.escape(e)}</code>" for e in sorted(self.extractors)) + ".</p>\n"]
        if n_videos:
            mean = sum(steps * videos for steps, videos in self.steps_per_video.items()) / n_videos
            q = _percentiles_of_counts(self.steps_per_video, [0, 25, 50, 75, 100])
            out.append("<h2>Steps per video</h2>\n")
            out.append(html_table(["mean", "min", "25%", "median", "75%", "max", "videos without a step"],
                                  [[f"{mean:.1f}", *(f"{x:g}" for x in q), self.steps_per_video.get(0, 0)]]))

        def ranked(counter: Counter) -> list[list]:
            return [[i, item, count] for i, (item, count) in
                    enumerate(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top], 1)]

        out.append(f"<h2>Most frequent verbs of key steps (top {top})</h2>\n")
        out.append(html_table(["rank", "verb", "key clips"], ranked(self.verbs)))
        out.append(f"<h2>Most frequent arguments of key steps (top {top})</h2>\n")
        out.append(html_table(["rank", "argument", "key clips"], ranked(self.args)))
        return "".join(out)


def summarise_corpus(dataset) -> CorpusSummary:
    """The :class:`CorpusSummary` of a corpus dataset folder, read one shard at a time."""
    from cookproc.app.corpus import iter_shards

    summary = CorpusSummary()
    for _, clips in iter_shards(dataset, columns=CorpusSummary.COLUMNS):
        summary.add(clips)
        del clips  # before the next shard is read
    return summary


def corpus_summary_html(clips: pa.Table, *, top: int = 20) -> str:
    """The body of a corpus's summary page for one table of clips (:class:`CorpusSummary`)."""
    summary = CorpusSummary()
    summary.add(clips)
    return summary.html(top=top)
