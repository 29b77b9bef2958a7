"""The people's tables of the README and docs (blocks ``people`` and ``people-comparisons`` of
:mod:`cookproc.evaluation.render`), rendered from ``results/numbers.json``'s ``people`` and
``people_comparisons`` rows (:mod:`cookproc.evaluation.lookups`)."""
from __future__ import annotations

from cookproc.core.formatting import markdown_table
from cookproc.evaluation.lookups import BlockError, digits_attr, interval_cell, list_attr, rows_of, table_cell


def people_table(numbers, attrs):
    """The people's table (results/people.csv): rows ``systems``; ``view`` sets (the default: verbs'
    P / R, F1 [95% interval] of verbs, IDF-weighted verbs, nouns and pairs, and tau [interval]),
    steps (steps per video, step P / R, step F1 and strict step F1 [interval]) or texts (the step texts'
    captioning scores, of the matched steps and of the paragraphs)."""
    from cookproc.scoring.captioning import HEADERS as TEXT_HEADERS, METRICS as TEXT_METRICS

    systems, view = list_attr(attrs, "systems"), attrs.get("view", "sets")
    places = digits_attr(attrs, 1)

    def value(system, key, digits=places):
        return table_cell(numbers, "people", digits, system=system, metric=key)

    def with_interval(system, key, digits=places):
        return value(system, key, digits) + " " + interval_cell(numbers, "people", digits, system=system, metric=key)

    def pair(system, kind):
        return " / ".join(value(system, f"{kind}_{m}") for m in ("precision", "recall"))

    if view == "sets":
        kinds = ("verbs", "idf_verbs", "nouns", "pairs")
        rows = [[f"`{s}`", pair(s, "verbs"), *(with_interval(s, f"{k}_f1") for k in kinds),
                 with_interval(s, "order_tau", 2)] for s in systems]
        return markdown_table(["system", "verbs P / R", "verbs F1", "IDF-weighted verbs F1", "nouns F1", "pairs F1",
                               "order tau"], rows)
    if view == "steps":
        rows = [[f"`{s}`", value(s, "mean_steps"), pair(s, "steps"), with_interval(s, "steps_f1"),
                 with_interval(s, "strict_steps_f1")]
                for s in systems]
        return markdown_table(["system", "steps per video", "step P / R", "step F1", "strict step F1"], rows)
    if view == "texts":
        columns = [f"{unit}_{m}" for unit in ("matched", "paragraph") for m in TEXT_METRICS]
        rows = [[f"`{s}`", value(s, "matched_steps", 0), *(value(s, c) for c in columns)] for s in systems]
        return markdown_table(["system", "matched steps", *(f"matched {TEXT_HEADERS[m]}" for m in TEXT_METRICS),
                               *(f"paragraph {TEXT_HEADERS[m]}" for m in TEXT_METRICS)], rows)
    raise BlockError(f"people: view {view!r}, not one of sets, steps, texts")


def people_comparisons_table(numbers, attrs):
    """Paired differences of the people's table (results/people_comparisons.csv): rows
    ``pairs`` (``A-vs-B``), columns ``metrics``: A − B [95% interval]; tau's with its videos, or "–"
    where a row has no tau on any video (the constant prior: results/people_comparisons.csv has no such row)."""
    from cookproc.evaluation.people import HEADINGS

    metrics, places = list_attr(attrs, "metrics", "steps_f1,strict_steps_f1,verbs_f1,nouns_f1,order_tau"), \
        digits_attr(attrs, 1)
    rows = []
    for item in list_attr(attrs, "pairs"):
        a, _, b = item.partition("-vs-")
        row = [f"`{a}` − `{b}`"]
        for metric in metrics:
            digits = 2 if metric == "order_tau" else places

            def number(value):
                return table_cell(numbers, "people-comparison", digits, a=a, b=b, metric=metric, value=value)

            if metric == "order_tau" and not any(
                    (r["system_a"], r["system_b"], r["metric"]) == (a, b, metric)
                    for r in rows_of(numbers, "people_comparisons")):
                row.append("–")  # a row with no tau on any video (the constant prior): no comparison
                continue
            text = f"{number('difference')} [{number('ci_low')}, {number('ci_high')}]"
            if metric == "order_tau":
                text += f" ({table_cell(numbers, 'people-comparison', 0, a=a, b=b, metric=metric, value='n_videos')} videos)"
            row.append(text)
        rows.append(row)
    return markdown_table(["A − B", *(HEADINGS.get(m, m) for m in metrics)], rows)
