"""The people's table: every system's steps for the people's test videos
(:mod:`cookproc.evaluation.people_steps`) scored against their human captions
(:mod:`cookproc.scoring.people`), macro over videos, with percentile bootstrap intervals over videos
(the same resamples for every system: the same videos, seed and count), and the rows compared as
paired bootstrap differences over those resamples.

A system's procedures (``results/people/procedures/<system>.parquet``, :data:`PROCEDURES`) hold every
clip of every test video. The constant prior is not a procedure: the k most frequent caption verbs,
nouns and (verb, noun) pairs of the training videos, the same for every video, each k chosen on the
training videos (the best mean F1 of its kind).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.scoring.captioning import METRICS as TEXT_METRICS
from cookproc.scoring.people import KINDS, SET_KINDS, VIDEO_COLUMNS, document_frequency, macro, video_scores

STRING_LIST = pa.list_(pa.string())
#: One row per clip of every people's test video, as a system extracted it.
PROCEDURES = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=False),
    pa.field("sentence", pa.string(), nullable=False),  # the clip's text, as the transcript says it
    pa.field("is_key", pa.bool_(), nullable=False),
    pa.field("verbs", STRING_LIST, nullable=False),  # the clip's own words (verbatim tuples)
    pa.field("args", STRING_LIST, nullable=False),
    pa.field("step_verbs", STRING_LIST, nullable=False),  # a step model's (empty without one)
    pa.field("step_nouns", STRING_LIST, nullable=False),
    pa.field("step_text", pa.string(), nullable=True),
])
#: Per system and test video: the scores of :mod:`cookproc.scoring.people` (fractions; NaN: undefined).
VIDEO_SCORES = pa.schema([pa.field("system", pa.string(), nullable=False),
                          pa.field("video_id", pa.string(), nullable=False),
                          pa.field("n_steps", pa.int32(), nullable=False),
                          pa.field("n_captions", pa.int32(), nullable=False)]
                         + [pa.field(c, pa.float64(), nullable=True) for c in VIDEO_COLUMNS])
#: Step texts scored as captions: of the matched steps (each against its caption) and of the paragraph.
TEXT_COLUMNS = [f"{unit}_{metric}" for unit in ("matched", "paragraph") for metric in TEXT_METRICS]
#: The table's columns: per kind P, R, F1 and F1's interval; tau and its interval (macro means,
#: percent); steps and captions per video; the text metrics (percent).
TABLE_COLUMNS = (["system", "n_videos", "mean_steps", "mean_captions"]
                 + [f"{k}_{m}" for k in KINDS for m in ("precision", "recall", "f1", "f1_low", "f1_high")]
                 + ["order_tau", "order_tau_low", "order_tau_high", "order_videos", "matched_steps"] + TEXT_COLUMNS
                 + ["resamples"])
#: Paired comparisons: a system's score minus another's over the same resamples.
COMPARISONS = ["system_a", "system_b", "metric", "n_videos", "value_a", "value_b", "difference", "ci_low",
               "ci_high", "resamples"]
#: The metrics compared (macro means; tau over the videos both systems define).
COMPARED = ["steps_f1", "strict_steps_f1", "verbs_f1", "idf_verbs_f1", "nouns_f1", "pairs_f1", "order_tau"]


def normalised_system(name: str) -> bool:
    """Whether a people's system has a step model (``steps-<variant>``), whose steps' words it is scored by."""
    return name.startswith("steps-")


@dataclass(frozen=True)
class ConstantWords:
    """The constant prior's one "step": its verbs, nouns and pairs, each list chosen on its own."""

    verbs: tuple[str, ...]
    nouns: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]


def most_frequent(captions: Mapping[str, Sequence], attribute: str) -> list:
    """The items of the training videos' captions by how many videos use them (then by name)."""
    counts = document_frequency((i for s in steps for i in getattr(s, attribute)) for steps in captions.values())
    return sorted(counts, key=lambda i: (-counts[i], i))


def constant_prior(train: Mapping[str, Sequence], idf: Mapping[str, float], unseen: float,
                   max_k: int) -> tuple[ConstantWords, dict[str, int]]:
    """The constant prior (module doc) and its k of each kind, chosen on the training videos."""
    ranked = {kind: most_frequent(train, kind) for kind in ("verbs", "nouns", "pairs")}
    chosen = {}
    for kind in ("verbs", "nouns", "pairs"):
        def mean_f1(k):
            words = ConstantWords(**{x: tuple(ranked[x][:k]) if x == kind else () for x in ranked})
            return macro(video_scores({v: [words] for v in train}, train, idf, unseen))[f"{kind}_f1"]

        chosen[kind] = max(range(1, max_k + 1), key=lambda k: (mean_f1(k), -k))
    return ConstantWords(*(tuple(ranked[kind][:chosen[kind]]) for kind in ("verbs", "nouns", "pairs"))), chosen


def _scale(column: str) -> float:
    return 1.0 if column == "order_tau" else 100.0


def _resampled_means(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The mean of the defined values in each resample (NaN where a resample draws none)."""
    defined = ~np.isnan(values)
    weighted = counts[:, defined] @ values[defined]
    n = counts[:, defined].sum(axis=1)
    return np.divide(weighted, n, out=np.full_like(weighted, np.nan), where=n > 0)


def bootstrap_intervals(scores: pd.DataFrame, *, resamples: int, seed: int, confidence: float) -> dict[str, tuple]:
    """Percentile interval of each macro mean over ``resamples`` draws of the videos (rows, in
    video order) with replacement."""
    from cookproc.evaluation.bootstrap import interval, resample_counts

    counts = resample_counts(len(scores), resamples, seed).astype(float)
    out = {}
    for column in VIDEO_COLUMNS:
        means = _resampled_means(scores[column].to_numpy(dtype=float), counts)
        kept = means[~np.isnan(means)]
        out[column] = tuple(_scale(column) * x for x in interval(kept, confidence)) if len(kept) else (np.nan, np.nan)
    return out


def table_row(system: str, scores: pd.DataFrame, *, resamples: int, seed: int, confidence: float,
              text: Mapping | None = None) -> dict:
    """A system's row of the people's table (:data:`TABLE_COLUMNS`) from its per-video scores and
    its step texts' scores (:func:`text_scores`; none for the constant prior)."""
    scores = scores.sort_values("video_id").reset_index(drop=True)
    means, ci = macro(scores), bootstrap_intervals(scores, resamples=resamples, seed=seed, confidence=confidence)
    row = {"system": system, "n_videos": len(scores), "mean_steps": float(scores["n_steps"].mean()),
           "mean_captions": float(scores["n_captions"].mean()), "order_videos": means["order_videos"],
           "resamples": resamples}
    for kind in KINDS:
        for metric in ("precision", "recall", "f1"):
            row[f"{kind}_{metric}"] = means[f"{kind}_{metric}"]
        row[f"{kind}_f1_low"], row[f"{kind}_f1_high"] = ci[f"{kind}_f1"]
    row["order_tau"] = means["order_tau"]
    row["order_tau_low"], row["order_tau_high"] = ci["order_tau"]
    text = text or {}
    row["matched_steps"] = text.get("matched_steps", 0)
    row.update({column: text.get(column, math.nan) for column in TEXT_COLUMNS})
    return row


def paired_differences(scores: Mapping[str, pd.DataFrame], pairs: Sequence[tuple[str, str]], *, resamples: int,
                       seed: int, confidence: float) -> pd.DataFrame:
    """Each pair (A, B) of systems compared on each :data:`COMPARED` metric: A's macro mean minus B's
    over the videos both define (for the F1s every video with captions of the kind; for tau those
    where both define it), with the percentile interval of the difference over the same resamples of
    the test videos as the table's intervals (:data:`COMPARISONS` columns). Every system's scores
    hold the same videos."""
    from cookproc.evaluation.bootstrap import interval, resample_counts

    ordered = {name: frame.sort_values("video_id").reset_index(drop=True) for name, frame in scores.items()}
    videos = {name: tuple(frame["video_id"]) for name, frame in ordered.items()}
    if len(set(videos.values())) > 1:
        raise ValueError("the systems' scores hold different videos: they cannot be compared pair by pair")
    n_videos = len(next(iter(videos.values()))) if videos else 0
    counts = resample_counts(n_videos, resamples, seed).astype(float)
    rows = []
    for a, b in pairs:
        for metric in COMPARED:
            x, y = (ordered[s][metric].to_numpy(dtype=float) for s in (a, b))
            both = ~np.isnan(x) & ~np.isnan(y)
            if not both.any():
                continue
            scale = _scale(metric)
            value_a, value_b = scale * x[both].mean(), scale * y[both].mean()
            difference = np.where(both, x - y, np.nan)
            samples = _resampled_means(difference, counts)
            low, high = interval(scale * samples[~np.isnan(samples)], confidence)
            rows.append({"system_a": a, "system_b": b, "metric": metric, "n_videos": int(both.sum()),
                         "value_a": value_a, "value_b": value_b, "difference": value_a - value_b, "ci_low": low,
                         "ci_high": high, "resamples": resamples})
    return pd.DataFrame(rows, columns=COMPARISONS)


HEADINGS = {"steps_f1": "step F1", "strict_steps_f1": "strict step F1", "verbs_f1": "verbs F1",
            "idf_verbs_f1": "IDF-weighted verbs F1", "nouns_f1": "nouns F1", "pairs_f1": "pairs F1",
            "order_tau": "order tau"}


def markdown(table: pd.DataFrame, comparisons: pd.DataFrame | None = None) -> str:
    """results/people.md: the set scores (F1 [95% interval] of each kind, verbs' P and R, tau), the
    step scores (steps per video, step P / R / F1 and strict F1), the step texts' captioning scores,
    and the paired differences."""
    from cookproc.core.formatting import format_number, markdown_table
    from cookproc.scoring.captioning import HEADERS, PACKAGE

    def cell(value, digits=1):
        return format_number(None if value is None or value != value else value, digits)  # NaN: undefined

    def with_interval(row, key, digits=1):
        return f"{cell(row[key], digits)} [{cell(row[key + '_low'], digits)}, {cell(row[key + '_high'], digits)}]"

    records = table.to_dict("records")
    n = int(table["n_videos"].iloc[0]) if len(table) else 0
    captions = cell(table["mean_captions"].iloc[0]) if len(table) else "-"
    sets = [[f"`{r['system']}`", f"{cell(r['verbs_precision'])} / {cell(r['verbs_recall'])}",
             *(with_interval(r, f"{k}_f1") for k in SET_KINDS), with_interval(r, "order_tau", 2),
             cell(r["order_videos"], 0)] for r in records]
    steps = [[f"`{r['system']}`", cell(r["mean_steps"]), f"{cell(r['steps_precision'])} / {cell(r['steps_recall'])}",
              with_interval(r, "steps_f1"), with_interval(r, "strict_steps_f1")] for r in records]
    texts = [[f"`{r['system']}`", cell(r["matched_steps"], 0), *(cell(r[c]) for c in TEXT_COLUMNS)]
             for r in records if r["system"] != "constant-prior"]
    out = [f"Procedures against people: the {n} videos of the people's test set, macro means over videos "
           "(percent; tau as is) with 95% bootstrap intervals over videos.", "",
           "## Sets of words per video", "",
           markdown_table(["system", "verbs P / R", "verbs F1", "IDF-weighted verbs F1", "nouns F1", "pairs F1",
                           "order tau", "videos with tau"], sets), "",
           f"## Steps, aligned one to one and in order with the captions ({captions} captions per video)", "",
           markdown_table(["system", "steps per video", "step P / R", "step F1", "strict step F1"], steps), "",
           f"## Step texts as captions ({PACKAGE}; percent)", "",
           markdown_table(["system", "matched steps", *(f"matched {HEADERS[m]}" for m in TEXT_METRICS),
                           *(f"paragraph {HEADERS[m]}" for m in TEXT_METRICS)], texts), ""]
    if comparisons is not None and len(comparisons):
        rows = []
        for (a, b), group in comparisons.groupby(["system_a", "system_b"], sort=False):
            by_metric = {r["metric"]: r for r in group.to_dict("records")}
            row = [f"`{a}` − `{b}`"]
            for metric in COMPARED:
                r = by_metric.get(metric)
                digits = 2 if metric == "order_tau" else 1
                row.append("–" if r is None else f"{cell(r['difference'], digits)} [{cell(r['ci_low'], digits)}, "
                           f"{cell(r['ci_high'], digits)}]" + (f" ({r['n_videos']} videos)" if metric == "order_tau"
                                                              else ""))
            rows.append(row)
        out += ["## Paired differences (A − B, 95% interval over the same resamples)", "",
                markdown_table(["A − B", *(HEADINGS[m] for m in COMPARED)], rows), ""]
    return "\n".join(out)


def idf_document(train: Mapping[str, Sequence]) -> dict:
    """The verbs' IDF weights of the training videos' captions (:func:`cookproc.scoring.people.idf_weights`)
    and the weight of a verb none of them uses, as results/people/idf_weights.json holds them."""
    from cookproc.scoring.people import idf_weights, unseen_weight

    return {"n_videos": len(train), "unseen": unseen_weight(len(train)), "weights": idf_weights(train)}


def read_idf(path) -> tuple[dict[str, float], float]:
    """The weights and the unseen weight of an :func:`idf_document` file."""
    import json
    from pathlib import Path

    from cookproc.core.errors import InputError

    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in document["weights"].items()}, float(document["unseen"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(path, f"not an IDF weights file of the people's table ({exc})") from None
