"""The people's table: every system's procedures for the people's test videos scored against their
human captions (:mod:`cookproc.scoring.people`), macro over videos, with percentile bootstrap
intervals over videos (the same resamples for every system: the same videos, seed and count).

A system's procedures (``results/people/procedures/<system>.parquet``, :data:`PROCEDURES`) hold every
clip of every test video; its steps are its key clips in order. A step's words are the step model's
(``step_verbs``, ``step_nouns``) when the system has one, else the clip's own verbs and arguments
through the same lemmatisation as the captions' (:func:`cookproc.data.step_words.verb_lemma`,
:func:`~cookproc.data.step_words.argument_nouns`). The constant prior is not a procedure: the k
most frequent caption verbs, nouns and (verb, noun) pairs of the training videos, the same for every
video, each k chosen on the training videos (the best mean F1 of its kind).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.scoring.people import KINDS, VIDEO_COLUMNS, document_frequency, macro, video_scores

STRING_LIST = pa.list_(pa.string())
#: One row per clip of every people's test video, as a system extracted it.
PROCEDURES = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=False),
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
                          pa.field("n_steps", pa.int32(), nullable=False)]
                         + [pa.field(c, pa.float64(), nullable=True) for c in VIDEO_COLUMNS])
#: The table's columns: per kind P, R, F1 and F1's interval; tau and its interval (macro means, percent).
TABLE_COLUMNS = (["system", "n_videos", "mean_steps"]
                 + [f"{k}_{m}" for k in KINDS for m in ("precision", "recall", "f1", "f1_low", "f1_high")]
                 + ["order_tau", "order_tau_low", "order_tau_high", "order_videos", "resamples"])


def normalised_system(name: str) -> bool:
    """Whether a people's system has a step model (``steps-<variant>``), whose steps' words it is scored by."""
    return name.startswith("steps-")


@dataclass(frozen=True)
class ConstantWords:
    """The constant prior's one "step": its verbs, nouns and pairs, each list chosen on its own."""

    verbs: tuple[str, ...]
    nouns: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]


def system_steps(procedures: pd.DataFrame, normalised: bool) -> dict[str, list]:
    """{video id: its steps' words} of a system's procedures: its key clips in order; the step
    model's words when ``normalised``, else the clip's own, lemmatised."""
    from cookproc.data.step_words import StepWords, argument_nouns, verb_lemma

    out: dict[str, list] = {}
    for video, clips in procedures.sort_values(["video_id", "clip_idx"]).groupby("video_id", sort=True):
        steps = []
        for clip in clips[clips["is_key"]].itertuples():
            if normalised:
                steps.append(StepWords(tuple(clip.step_verbs), tuple(clip.step_nouns)))
            else:
                verbs = tuple(dict.fromkeys(v for v in (verb_lemma(x) for x in clip.verbs) if v))
                steps.append(StepWords(verbs, argument_nouns(clip.args)))
        out[video] = steps
    return out


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


def bootstrap_intervals(scores: pd.DataFrame, *, resamples: int, seed: int, confidence: float) -> dict[str, tuple]:
    """Percentile interval of each macro mean over ``resamples`` draws of the videos (rows, in
    video order) with replacement."""
    from cookproc.evaluation.bootstrap import interval, resample_counts

    counts = resample_counts(len(scores), resamples, seed).astype(float)
    out = {}
    for column in VIDEO_COLUMNS:
        values = scores[column].to_numpy(dtype=float)
        defined = ~np.isnan(values)
        weighted = counts[:, defined] @ values[defined]
        n = counts[:, defined].sum(axis=1)
        means = np.divide(weighted, n, out=np.full_like(weighted, np.nan), where=n > 0)
        scale = 1 if column == "order_tau" else 100
        kept = means[~np.isnan(means)]
        out[column] = tuple(scale * x for x in interval(kept, confidence)) if len(kept) else (np.nan, np.nan)
    return out


def table_row(system: str, scores: pd.DataFrame, *, resamples: int, seed: int, confidence: float) -> dict:
    """A system's row of the people's table (:data:`TABLE_COLUMNS`) from its per-video scores."""
    scores = scores.sort_values("video_id").reset_index(drop=True)
    means, ci = macro(scores), bootstrap_intervals(scores, resamples=resamples, seed=seed, confidence=confidence)
    row = {"system": system, "n_videos": len(scores), "mean_steps": float(scores["n_steps"].mean()),
           "order_videos": means["order_videos"], "resamples": resamples}
    for kind in KINDS:
        for metric in ("precision", "recall", "f1"):
            row[f"{kind}_{metric}"] = means[f"{kind}_{metric}"]
        row[f"{kind}_f1_low"], row[f"{kind}_f1_high"] = ci[f"{kind}_f1"]
    row["order_tau"] = means["order_tau"]
    row["order_tau_low"], row["order_tau_high"] = ci["order_tau"]
    return row


def markdown(table: pd.DataFrame) -> str:
    """results/people.md: F1 [95% interval] of each kind, verbs' P and R, tau, steps per video."""
    from cookproc.core.formatting import format_number, markdown_table

    def cell(value, digits=1):
        return format_number(None if value != value else value, digits)  # NaN: undefined

    def with_interval(row, key, digits=1):
        return f"{cell(row[key], digits)} [{cell(row[key + '_low'], digits)}, {cell(row[key + '_high'], digits)}]"

    header = ["system", "verbs P / R", "verbs F1", "IDF-weighted verbs F1", "nouns F1", "pairs F1", "order tau",
              "steps per video"]
    rows = [[f"`{r['system']}`", f"{cell(r['verbs_precision'])} / {cell(r['verbs_recall'])}",
             with_interval(r, "verbs_f1"), with_interval(r, "idf_verbs_f1"), with_interval(r, "nouns_f1"),
             with_interval(r, "pairs_f1"), with_interval(r, "order_tau", 2), cell(r["mean_steps"])]
            for r in table.to_dict("records")]
    n = int(table["n_videos"].iloc[0]) if len(table) else 0
    return (f"Procedures against people: the {n} videos of the people's test set, macro means over videos "
            "(percent; tau as is) with 95% bootstrap intervals over videos.\n\n" + markdown_table(header, rows) + "\n")
