"""The steps of the people's table as they are scored (:data:`STEPS`), and the step texts scored as
captions.

A system's steps (``results/people/steps/<system>.parquet``) are the key clips of its procedures
(:data:`cookproc.evaluation.people.PROCEDURES`) in order: a step's words are the step model's
(``step_verbs``, ``step_nouns``) when the system has one, else the clip's own verbs and arguments
through the same lemmatisation as the captions' (:func:`cookproc.data.step_words.verb_lemma`,
:func:`~cookproc.data.step_words.argument_nouns`); its text is the step model's step text, else the
clip's sentence (what such a procedure shows under each step). The retrieval floor
(``nearest-video-captions``) is not a procedure of the video: each test video gets, as its steps, the
captions of the training video whose transcript is nearest its own (:func:`nearest_training_videos`):
fluent text that knows nothing of the video.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.scoring.people import step_alignment

STRING_LIST = pa.list_(pa.string())
#: One row per step of every people's test video, as it is scored: its words and its text.
STEPS = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("step_idx", pa.int32(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=True),  # the clip it is at (null: not a clip of the video)
    pa.field("verbs", STRING_LIST, nullable=False),  # lemmas, as the captions' (cookproc.data.step_words)
    pa.field("nouns", STRING_LIST, nullable=False),
    pa.field("text", pa.string(), nullable=False),
])


@dataclass(frozen=True)
class ScoredStep:
    """A step (or a caption) as it is scored: its verb and head-noun lemmas, and its text."""

    verbs: tuple[str, ...]
    nouns: tuple[str, ...]
    text: str = ""

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple((v, n) for v in self.verbs for n in self.nouns)


def procedure_steps(procedures: pd.DataFrame, normalised: bool) -> pd.DataFrame:
    """The steps (:data:`STEPS` columns) of a system's procedures: its key clips in order; the step
    model's words and text when ``normalised``, else the clip's own words, lemmatised, and its sentence."""
    from cookproc.data.step_words import argument_nouns, verb_lemma

    rows = []
    for video, clips in procedures.sort_values(["video_id", "clip_idx"]).groupby("video_id", sort=True):
        for step_idx, clip in enumerate(clips[clips["is_key"]].itertuples()):
            if normalised:
                verbs, nouns, text = list(clip.step_verbs), list(clip.step_nouns), clip.step_text or ""
            else:
                verbs = list(dict.fromkeys(v for v in (verb_lemma(x) for x in clip.verbs) if v))
                nouns, text = list(argument_nouns(clip.args)), clip.sentence
            rows.append({"video_id": video, "step_idx": step_idx, "clip_idx": int(clip.clip_idx), "verbs": verbs,
                         "nouns": nouns, "text": text})
    return pd.DataFrame(rows, columns=STEPS.names)


def steps_by_video(steps: pd.DataFrame) -> dict[str, list[ScoredStep]]:
    """{video id: its steps in order} of a :data:`STEPS` table (a video without a step is absent)."""
    out: dict[str, list[ScoredStep]] = {}
    for video, group in steps.sort_values(["video_id", "step_idx"]).groupby("video_id", sort=True):
        out[video] = [ScoredStep(tuple(r.verbs), tuple(r.nouns), r.text) for r in group.itertuples()]
    return out


def captions_by_video(captions: pd.DataFrame) -> dict[str, list[ScoredStep]]:
    """{video id: its captions in order, with their text} of a captions table (cookproc.data.captions.CAPTIONS)."""
    out: dict[str, list[ScoredStep]] = {}
    for video, group in captions.sort_values(["video_id", "caption_idx"]).groupby("video_id", sort=True):
        out[video] = [ScoredStep(tuple(r.verbs), tuple(r.nouns), r.caption) for r in group.itertuples()]
    return out


def nearest_training_videos(train: Mapping[str, str], test: Mapping[str, str], min_df: int = 2) -> dict[str, str]:
    """{test video: the training video whose transcript is nearest} by the cosine of TF-IDF vectors
    (words and word pairs, sublinear term frequency, terms of at least ``min_df`` training
    transcripts), fitted on the training transcripts only; ties go to the first training video by id."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    train_ids, test_ids = sorted(train), sorted(test)
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=min_df, dtype=np.float64)
    train_matrix = vectorizer.fit_transform([train[v] for v in train_ids])
    similarity = np.asarray((vectorizer.transform([test[v] for v in test_ids]) @ train_matrix.T).todense())
    return {video: train_ids[int(np.argmax(row))] for video, row in zip(test_ids, similarity)}


def retrieval_floor_steps(nearest: Mapping[str, str], train_captions: pd.DataFrame) -> pd.DataFrame:
    """The retrieval floor's steps (:data:`STEPS` columns): each test video's nearest training video's
    captions, in order, with their words and text."""
    captions = captions_by_video(train_captions)
    rows = [{"video_id": video, "step_idx": i, "clip_idx": None, "verbs": list(c.verbs), "nouns": list(c.nouns),
             "text": c.text} for video in sorted(nearest) for i, c in enumerate(captions[nearest[video]])]
    return pd.DataFrame(rows, columns=STEPS.names)


def text_scores(steps: Mapping[str, Sequence[ScoredStep]], captions: Mapping[str, Sequence[ScoredStep]]) -> dict:
    """The step texts scored as captions (:mod:`cookproc.scoring.captioning`, percent): each matched
    step (the step alignment's, a shared verb) against its caption, and each video's steps' texts,
    joined, against its captions, joined (paragraph captioning); and the number of matched steps."""
    from cookproc.scoring.captioning import caption_scores

    matched_hyp, matched_ref, paragraph_hyp, paragraph_ref = {}, {}, {}, {}
    for video in sorted(captions):
        ours, theirs = steps.get(video, ()), captions[video]
        for i, j in step_alignment(ours, theirs):
            key = f"{video}/{j}"
            matched_hyp[key], matched_ref[key] = ours[i].text, [theirs[j].text]
        paragraph_hyp[video] = " ".join(s.text for s in ours)
        paragraph_ref[video] = [" ".join(c.text for c in theirs)]
    matched, paragraph = caption_scores(matched_hyp, matched_ref), caption_scores(paragraph_hyp, paragraph_ref)
    return {"matched_steps": len(matched_hyp), **{f"matched_{k}": v for k, v in matched.items()},
            **{f"paragraph_{k}": v for k, v in paragraph.items()}}


