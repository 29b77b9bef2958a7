"""Scoring procedures against people, per video: YouCook2's human step captions of the people's test videos.

For each test video, a system's procedure (its steps, each a span of the transcript) and the
video's captions are reduced to the words of a step as people write them
(:mod:`cookproc.data.step_words`: one lemmatisation for both sides), and compared as sets:

- ``verbs``: the union of the steps' verb lemmas against the captions' (P / R / F1);
- ``idf_verbs``: the same sets, each verb weighted by its inverse document frequency over the
  *training* videos' captions, ``ln((1 + N) / (1 + df))`` (N training videos, df of them whose
  captions use the verb), so that "add", in most videos' captions, counts little and a verb no
  training caption has counts most;
- ``nouns``: head-noun lemmas of the steps' arguments against the captions' head nouns;
- ``pairs``: (verb, noun) pairs taken within one step (one caption) on both sides;
- ``order``: Kendall's tau-b between the order in which the matched verbs (in both sets) first
  appear in the steps and in the captions; undefined (left out of the mean) for a video with fewer
  than two matched verbs or with every matched verb first appearing in one step on a side.

And step by step (:func:`step_alignment`): the steps and the captions, each in order, aligned one to
one and monotonically (no crossing) so that the most pairs match, by dynamic programming:

- ``steps``: a step matches a caption when they share a verb lemma; P = matched steps / steps,
  R = matched captions / captions;
- ``strict_steps``: the same with a match that shares a verb and a head noun (a verb-noun pair:
  both sides pair each of a step's verbs with each of its nouns).

Per video, P = matched / predicted (0 for no prediction), R = matched / in the captions, F1 their
harmonic mean (0 when both are 0); each score is the macro mean over the test videos (a video
whose captions have no word of a kind is left out of that kind's mean), in percent (tau as is).
The table, with intervals (a percentile bootstrap over videos), is :mod:`cookproc.evaluation.people`'s.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable, Mapping, Protocol, Sequence, TypeVar

import numpy as np
import pandas as pd

T = TypeVar("T")


class StepWords(Protocol):
    """A step's (or a caption's) words: :class:`cookproc.data.step_words.StepWords`."""

    verbs: Sequence[str]
    nouns: Sequence[str]

    @property
    def pairs(self) -> Sequence[tuple[str, str]]: ...

#: The set kinds, then the step kinds (module doc).
SET_KINDS = ("verbs", "idf_verbs", "nouns", "pairs")
STEP_KINDS = ("steps", "strict_steps")
KINDS = SET_KINDS + STEP_KINDS
#: Columns of the per-video score table, in order.
VIDEO_COLUMNS = [f"{k}_{m}" for k in KINDS for m in ("precision", "recall", "f1")] + ["order_tau"]


def document_frequency(item_sets: Iterable[Iterable[T]]) -> dict[T, int]:
    """In how many of the sets each item is, sorted by item."""
    counts: dict = {}
    for items in item_sets:
        for item in set(items):
            counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))


def idf_weights(captions_by_video: Mapping[str, Sequence[StepWords]]) -> dict[str, float]:
    """``ln((1 + N) / (1 + df))`` of each verb of the given (training) videos' captions."""
    df = document_frequency((v for s in steps for v in s.verbs) for steps in captions_by_video.values())
    n = len(captions_by_video)
    return {verb: math.log((1 + n) / (1 + count)) for verb, count in df.items()}


def unseen_weight(n_training_videos: int) -> float:
    """The IDF weight of a verb no training caption uses."""
    return math.log(1 + n_training_videos)


def _prf(predicted: set, reference: set, weight=None) -> tuple[float, float, float] | None:
    if not reference:
        return None
    w = weight or (lambda item: 1.0)
    # math.fsum: exact, so the order a set iterates in (PYTHONHASHSEED) never moves the last bit.
    matched = math.fsum(w(i) for i in predicted & reference)
    total_predicted, total_reference = math.fsum(w(i) for i in predicted), math.fsum(w(i) for i in reference)
    precision = matched / total_predicted if total_predicted else 0.0
    recall = matched / total_reference if total_reference else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def first_positions(steps: Sequence[StepWords]) -> dict[str, int]:
    """Each verb's index of the first step that has it."""
    first: dict[str, int] = {}
    for i, step in enumerate(steps):
        for verb in step.verbs:
            first.setdefault(verb, i)
    return first


def order_tau(steps: Sequence[StepWords], captions: Sequence[StepWords]) -> float:
    """Kendall's tau-b of the matched verbs' first positions (NaN where undefined: module doc)."""
    from scipy.stats import kendalltau

    ours, theirs = first_positions(steps), first_positions(captions)
    matched = sorted(set(ours) & set(theirs))
    if len(matched) < 2:
        return math.nan
    a, b = [ours[v] for v in matched], [theirs[v] for v in matched]
    if len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(kendalltau(a, b).statistic)


def shares_verb(step: StepWords, caption: StepWords) -> bool:
    return not set(step.verbs).isdisjoint(caption.verbs)


def shares_pair(step: StepWords, caption: StepWords) -> bool:
    return not set(step.pairs).isdisjoint(caption.pairs)


def step_alignment(steps: Sequence[StepWords], captions: Sequence[StepWords],
                   match: Callable[[StepWords, StepWords], bool] = shares_verb) -> list[tuple[int, int]]:
    """The (step, caption) index pairs of a one-to-one, monotone alignment with the most matching
    pairs (a longest common subsequence under ``match``); among equally many, the one that pairs
    each step with the latest caption it can, read from the end (deterministic)."""
    n, m = len(steps), len(captions)
    matches = [[match(s, c) for c in captions] for s in steps]
    best = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            best[i, j] = max(best[i - 1, j], best[i, j - 1], best[i - 1, j - 1] + matches[i - 1][j - 1])
    pairs, i, j = [], n, m
    while i and j:
        if matches[i - 1][j - 1] and best[i, j] == best[i - 1, j - 1] + 1:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif best[i - 1, j] >= best[i, j - 1]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _step_prf(n_matched: int, n_steps: int, n_captions: int) -> tuple[float, float, float] | None:
    if not n_captions:
        return None
    precision = n_matched / n_steps if n_steps else 0.0
    recall = n_matched / n_captions
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def score_video(steps: Sequence[StepWords], captions: Sequence[StepWords], idf: Mapping[str, float],
                unseen: float) -> dict[str, float]:
    """The per-video scores (fractions; NaN where a kind is undefined) of one system's steps."""
    sets = {
        "verbs": ({v for s in steps for v in s.verbs}, {v for c in captions for v in c.verbs}),
        "nouns": ({n for s in steps for n in s.nouns}, {n for c in captions for n in c.nouns}),
        "pairs": ({p for s in steps for p in s.pairs}, {p for c in captions for p in c.pairs}),
    }
    sets["idf_verbs"] = sets["verbs"]
    out: dict[str, float] = {}
    for kind in SET_KINDS:
        weight = (lambda verb: idf.get(verb, unseen)) if kind == "idf_verbs" else None
        prf = _prf(*sets[kind], weight)
        for metric, value in zip(("precision", "recall", "f1"), prf or (math.nan,) * 3):
            out[f"{kind}_{metric}"] = value
    for kind, match in (("steps", shares_verb), ("strict_steps", shares_pair)):
        prf = _step_prf(len(step_alignment(steps, captions, match)), len(steps), len(captions))
        for metric, value in zip(("precision", "recall", "f1"), prf or (math.nan,) * 3):
            out[f"{kind}_{metric}"] = value
    out["order_tau"] = order_tau(steps, captions)
    return out


def video_scores(system: Mapping[str, Sequence[StepWords]], captions: Mapping[str, Sequence[StepWords]],
                 idf: Mapping[str, float], unseen: float) -> pd.DataFrame:
    """One row per test video (every video of ``captions``; a video the system has no procedure
    for scores as empty), sorted by video id."""
    rows = []
    for video in sorted(captions):
        rows.append({"video_id": video, "n_steps": len(system.get(video, ())), "n_captions": len(captions[video]),
                     **score_video(system.get(video, ()), captions[video], idf, unseen)})
    return pd.DataFrame(rows, columns=["video_id", "n_steps", "n_captions", *VIDEO_COLUMNS])


def _mean(values: np.ndarray) -> float:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else math.nan


def macro(scores: pd.DataFrame) -> dict[str, float]:
    """Macro means over videos (NaN rows left out; NaN when none is defined), P/R/F1 in percent,
    tau as is."""
    out = {c: _mean(scores[c].to_numpy(dtype=float)) * (1 if c == "order_tau" else 100) for c in VIDEO_COLUMNS}
    out["order_videos"] = int(scores["order_tau"].notna().sum())
    return out
