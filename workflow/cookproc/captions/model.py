"""The step model: which clips of a transcript are steps, and the verbs and nouns a person would
write for them, learnt from YouCook2's human captions of the training videos.

Four parts, fitted on the training videos outside inner validation (the *fit* videos):

1. **Key-step selector**: logistic regression on a sentence's vector, its neighbours' and its
   position, trained on the weak labels of the captions' alignment (:mod:`cookproc.captions.align`:
   a sentence aligned to a caption is a step) or, with ``benchmark_labels``, on the benchmark's
   gold key clips where a video has them and the weak labels elsewhere.
2. **Sentence verbs**: boosted trees scoring each candidate verb of each sentence
   (:func:`cookproc.captions.features.sentence_candidates`): is it a verb of a caption aligned within
   ``label_window`` sentences? Its features include the selector's probability.
3. **Video verbs**: boosted trees deciding, for each candidate verb of a video, whether the video's
   captions use it, from the sentence scores aggregated over the video, a logistic regression of the
   whole transcript's TF-IDF against the captions' verbs (the recipe speaks: a pizza is baked), and
   the verbs of the captions of the ``neighbours`` training videos whose transcripts are most
   similar. Parts 2 and 3 are stacked on cross-fitted scores (``folds`` folds of the fit videos), so
   that the video model learns from scores like those it will see.
4. **Video nouns**: boosted trees deciding which head nouns the narration says the captions name.

A chosen verb goes to the sentence that scores it highest: that sentence is a step, with every
chosen verb placed there, and the chosen nouns said in it or in the sentences just before and after
it (``noun_window`` sentences). The verb threshold is chosen on the inner-validation videos by the
mean per-video F1 of verbs, then the noun threshold and window by that of nouns
(:mod:`cookproc.scoring.people`).
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.special import expit

from cookproc.captions.features import (NounStatistics, VerbStatistics, VideoText, noun_candidates, selector_features,
                                        sentence_candidates, video_candidates)
from cookproc.data.step_words import StepWords
from cookproc.learn import boosted_trees

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TreeSettings:
    max_iter: int
    learning_rate: float
    max_leaf_nodes: int


@dataclass(frozen=True)
class StepModelSettings:
    """The config's ``captions.model`` section."""

    benchmark_labels: bool
    min_caption_videos: int
    label_window: int
    folds: int
    neighbours: int
    tfidf_max_features: int
    tfidf_min_df: int
    transcript_C: float
    selector_C: float
    sentence_trees: TreeSettings
    video_trees: TreeSettings
    noun_trees: TreeSettings
    verb_thresholds: tuple[float, ...]
    noun_thresholds: tuple[float, ...]
    noun_windows: tuple[int, ...]
    seed: int

    @classmethod
    def from_config(cls, section: Mapping) -> "StepModelSettings":
        values = dict(section)
        for key in ("sentence_trees", "video_trees", "noun_trees"):
            values[key] = TreeSettings(**values[key])
        for key in ("verb_thresholds", "noun_thresholds"):
            values[key] = tuple(float(t) for t in values[key])
        values["noun_windows"] = tuple(int(w) for w in values["noun_windows"])
        return cls(**values)

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("verb_thresholds", "noun_thresholds", "noun_windows"):
            out[key] = list(out[key])
        return out


@dataclass
class TrainingVideo:
    text: VideoText
    captions: list[StepWords]
    caption_vectors: np.ndarray
    alignment: list[int]  # each caption's sentence
    gold_key: np.ndarray | None = None  # the benchmark's key clips, per sentence, where the video has them

    def weak_key(self) -> np.ndarray:
        key = np.zeros(len(self.text.sentences), dtype=bool)
        key[self.alignment] = True
        return key

    def caption_verbs(self) -> set[str]:
        return {v for c in self.captions for v in c.verbs}

    def caption_nouns(self) -> set[str]:
        return {n for c in self.captions for n in c.nouns}


@dataclass
class Transcripts:
    """The TF-IDF of whole transcripts (fitted on the fit videos), the transcript classifier of
    caption verbs on it, and the fit videos' rows and caption words for the nearest neighbours."""

    terms: list[str]
    idf: np.ndarray
    classifier_verbs: list[str]
    coef: np.ndarray  # (classifier verbs × terms)
    intercept: np.ndarray
    fit_matrix: object  # scipy CSR (fit videos × terms), rows unit length
    fit_verbs: list[list[str]]
    fit_nouns: list[list[str]]
    neighbours: int

    def vectorizer(self):
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True,
                                     vocabulary={t: i for i, t in enumerate(self.terms)}, dtype=np.float64)
        vectorizer.idf_ = self.idf
        return vectorizer

    def transform(self, documents: Sequence[str]):
        return self.vectorizer().transform(documents)

    def classify(self, matrix) -> list[dict[str, float]]:
        logits = np.asarray(matrix @ self.coef.T) + self.intercept
        probability = expit(logits)
        return [dict(zip(self.classifier_verbs, row.tolist())) for row in probability]

    def neighbour_words(self, matrix, exclude: Sequence[int | None]) -> list[tuple[dict[str, float], dict[str, float]]]:
        """Per row: the share of the nearest fit videos whose captions use each verb and noun
        (``exclude``: a row's own fit video, left out)."""
        similarity = np.asarray((matrix @ self.fit_matrix.T).todense())
        out = []
        for row, own in zip(similarity, exclude):
            if own is not None:
                row[own] = -np.inf
            nearest = np.argsort(-row, kind="stable")[:self.neighbours]
            verbs: dict[str, float] = {}
            nouns: dict[str, float] = {}
            for i in nearest:
                for v in self.fit_verbs[i]:
                    verbs[v] = verbs.get(v, 0.0) + 1 / self.neighbours
                for n in self.fit_nouns[i]:
                    nouns[n] = nouns.get(n, 0.0) + 1 / self.neighbours
            out.append((verbs, nouns))
        return out


def document(video: VideoText) -> str:
    return " ".join(video.sentences)


@dataclass
class StepModel:
    settings: StepModelSettings
    verbs: VerbStatistics
    nouns: NounStatistics
    centroids: np.ndarray  # (verb vocabulary × dim): the mean unit vector of the captions using each verb
    selector_coef: np.ndarray
    selector_intercept: float
    transcripts: Transcripts
    sentence_trees: dict
    video_trees: dict
    noun_trees: dict
    verb_threshold: float
    noun_threshold: float
    noun_window: int
    validation: list[dict] = field(default_factory=list)  # the threshold grid's inner-validation scores
    training: dict = field(default_factory=dict)  # what it was fitted and chosen on (counts)

    # ------------------------------------------------------------------ applying
    def key_step(self, video: VideoText) -> np.ndarray:
        logits = selector_features(video) @ self.selector_coef + self.selector_intercept
        return expit(logits)

    def sentence_scores(self, video: VideoText) -> tuple[np.ndarray, list[tuple[int, str]], np.ndarray]:
        rows, pairs = sentence_candidates(video, self.verbs, self.centroids, self.key_step(video))
        scores = boosted_trees.predict_proba(self.sentence_trees, rows) if len(pairs) else np.zeros(0)
        return rows, pairs, scores

    def video_context(self, videos: Sequence[VideoText]) -> list[tuple[dict, dict, dict]]:
        """Per video: the transcript classifier's verb probabilities and its neighbours' verbs and nouns."""
        matrix = self.transcripts.transform([document(v) for v in videos])
        classified = self.transcripts.classify(matrix)
        neighbours = self.transcripts.neighbour_words(matrix, [None] * len(videos))
        return [(c, nv, nn) for c, (nv, nn) in zip(classified, neighbours)]

    def steps(self, videos: Sequence[VideoText]) -> list["VideoSteps"]:
        """Each video's steps (:class:`VideoSteps`)."""
        return [self.decode(video, self.probabilities(video, context)) for video, context
                in zip(videos, self.video_context(videos))]

    def probabilities(self, video: VideoText, context: tuple[dict, dict, dict]) -> "VideoProbabilities":
        """The model's scores of a video, before any threshold."""
        classified, neighbour_verbs, neighbour_nouns = context
        rows, pairs, scores = self.sentence_scores(video)
        verb_rows, verbs = video_candidates(video, rows, pairs, scores, classified, neighbour_verbs)
        noun_rows, nouns = noun_candidates(video, self.nouns, neighbour_nouns)
        return VideoProbabilities(
            pairs, scores, verbs, boosted_trees.predict_proba(self.video_trees, verb_rows) if verbs else np.zeros(0),
            nouns, boosted_trees.predict_proba(self.noun_trees, noun_rows) if nouns else np.zeros(0))

    def decode(self, video: VideoText, scored: "VideoProbabilities", *, verb_threshold: float | None = None,
               noun_threshold: float | None = None, noun_window: int | None = None) -> "VideoSteps":
        """Steps from scores (module doc); thresholds and window default to the model's."""
        verb_threshold = self.verb_threshold if verb_threshold is None else verb_threshold
        noun_threshold = self.noun_threshold if noun_threshold is None else noun_threshold
        window = self.noun_window if noun_window is None else noun_window
        n = len(video.sentences)
        key_probability = np.zeros(n)
        for (j, _), q in zip(scored.pairs, scored.scores):
            key_probability[j] = max(key_probability[j], q)
        chosen = {v: p for v, p in zip(scored.verbs, scored.verb_probability) if p >= verb_threshold}
        best: dict[str, tuple[float, int]] = {}
        for (j, verb), q in zip(scored.pairs, scored.scores):
            if verb in chosen and (verb not in best or q > best[verb][0]):
                best[verb] = (q, j)
        placed: dict[int, list[str]] = {}
        for verb in sorted(best, key=lambda v: (-chosen[v], v)):  # the likelier verb first
            placed.setdefault(best[verb][1], []).append(verb)
        chosen_nouns = {m for m, p in zip(scored.nouns, scored.noun_probability) if p >= noun_threshold}
        step_nouns = {}
        for j in placed:
            said = [m for k in range(max(0, j - window), min(n, j + window + 1)) for m in video.words[k].nouns]
            step_nouns[j] = list(dict.fromkeys(m for m in said if m in chosen_nouns))
        return VideoSteps(video.video_id, key_probability, {j: placed[j] for j in sorted(placed)}, step_nouns, window)


@dataclass
class VideoProbabilities:
    pairs: list[tuple[int, str]]  # (sentence, candidate verb)
    scores: np.ndarray  # of each pair: is it a caption verb of a step here?
    verbs: list[str]  # the video's candidate verbs
    verb_probability: np.ndarray  # of each: do the video's captions use it?
    nouns: list[str]  # the head nouns its narration says
    noun_probability: np.ndarray


@dataclass
class VideoSteps:
    """A video's steps: per sentence the highest score of any of its candidate verbs
    (``key_probability``), and for each step sentence its verbs and nouns."""

    video_id: str
    key_probability: np.ndarray
    verbs: dict[int, list[str]]
    nouns: dict[int, list[str]]
    noun_window: int  # a step's nouns are said in its sentence or this many before or after it

    def step_words(self) -> list[StepWords]:
        return [StepWords(tuple(self.verbs[j]), tuple(self.nouns.get(j, ()))) for j in sorted(self.verbs)]
