"""The step model: which clips of a transcript are steps, and the verbs and nouns a person would
write for them, learnt from YouCook2's human captions of the training videos.

Five parts, fitted on the training videos outside inner validation (the *fit* videos):

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
5. **Pairs**: boosted trees deciding, for each of the video's ``pair_candidates`` likeliest verbs
   with each of its as many likeliest nouns, whether one caption writes that verb with that noun,
   from both probabilities (cross-fitted as well), how often the training captions pair them and
   the nearest videos' captions do, and how near the narration says them.

Each chosen verb (probability at least the verb threshold), the likeliest first, is a step of its
own at the sentence that scores it highest or, where a likelier verb took that one, at the nearest
free sentence that scores it at least half as high (the narration supports it there; with the
likelier verb where none does); the step's nouns are those whose pair with its verb is likely
enough (the pair threshold), said anywhere in the narration. One verb a step where the narration
allows, because a step's pairs are each of its verbs with each of its nouns. The verb threshold is
chosen on the inner-validation videos by the mean per-video F1 of verbs, then the pair threshold by
that of pairs (:mod:`cookproc.scoring.people`).
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.special import expit

from cookproc.captions.features import (NounStatistics, PairStatistics, VerbStatistics, VideoText, noun_candidates,
                                        pair_candidates, selector_features, sentence_candidates, video_candidates)
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
    pair_trees: TreeSettings
    pair_candidates: int
    verb_thresholds: tuple[float, ...]
    pair_thresholds: tuple[float, ...]
    seed: int

    @classmethod
    def from_config(cls, section: Mapping) -> "StepModelSettings":
        values = dict(section)
        for key in ("sentence_trees", "video_trees", "noun_trees", "pair_trees"):
            values[key] = TreeSettings(**values[key])
        for key in ("verb_thresholds", "pair_thresholds"):
            values[key] = tuple(float(t) for t in values[key])
        return cls(**values)

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("verb_thresholds", "pair_thresholds"):
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

    def caption_pairs(self) -> set[tuple[str, str]]:
        return {p for c in self.captions for p in c.pairs}


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
    fit_pairs: list[list[tuple[str, str]]]
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

    def neighbour_words(self, matrix, exclude: Sequence[int | None]) -> list["NeighbourWords"]:
        """Per row: the share of the nearest fit videos whose captions use each verb, noun and pair
        (``exclude``: a row's own fit video, left out)."""
        similarity = np.asarray((matrix @ self.fit_matrix.T).todense())
        out = []
        for row, own in zip(similarity, exclude):
            if own is not None:
                row[own] = -np.inf
            nearest = np.argsort(-row, kind="stable")[:self.neighbours]
            shares = NeighbourWords({}, {}, {})
            for i in nearest:
                for share, items in ((shares.verbs, self.fit_verbs[i]), (shares.nouns, self.fit_nouns[i]),
                                     (shares.pairs, self.fit_pairs[i])):
                    for item in items:
                        share[item] = share.get(item, 0.0) + 1 / self.neighbours
            out.append(shares)
        return out


@dataclass
class NeighbourWords:
    """The share of a video's nearest training videos whose captions use each verb, noun and pair."""

    verbs: dict[str, float]
    nouns: dict[str, float]
    pairs: dict[tuple[str, str], float]


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
    pairs: PairStatistics
    pair_trees: dict
    verb_threshold: float
    pair_threshold: float
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

    def video_context(self, videos: Sequence[VideoText]) -> list[tuple[dict, NeighbourWords]]:
        """Per video: the transcript classifier's verb probabilities and its neighbours' words."""
        matrix = self.transcripts.transform([document(v) for v in videos])
        return list(zip(self.transcripts.classify(matrix),
                        self.transcripts.neighbour_words(matrix, [None] * len(videos))))

    def steps(self, videos: Sequence[VideoText]) -> list["VideoSteps"]:
        """Each video's steps (:class:`VideoSteps`)."""
        return [self.decode(video, self.probabilities(video, context)) for video, context
                in zip(videos, self.video_context(videos))]

    def probabilities(self, video: VideoText, context: tuple[dict, NeighbourWords]) -> "VideoProbabilities":
        """The model's scores of a video, before any threshold."""
        classified, neighbours = context
        rows, pairs, scores = self.sentence_scores(video)
        verb_rows, verbs = video_candidates(video, rows, pairs, scores, classified, neighbours.verbs)
        noun_rows, nouns = noun_candidates(video, self.nouns, neighbours.nouns)
        verb_probability = boosted_trees.predict_proba(self.video_trees, verb_rows) if verbs else np.zeros(0)
        noun_probability = boosted_trees.predict_proba(self.noun_trees, noun_rows) if nouns else np.zeros(0)
        pair_rows, verb_nouns = pair_candidates(video, pairs, scores, verbs, verb_probability, nouns, noun_probability,
                                                self.pairs, neighbours.pairs, self.settings.pair_candidates)
        return VideoProbabilities(
            pairs, scores, verbs, verb_probability, nouns, noun_probability, verb_nouns,
            boosted_trees.predict_proba(self.pair_trees, pair_rows) if verb_nouns else np.zeros(0))

    def decode(self, video: VideoText, scored: "VideoProbabilities", *, verb_threshold: float | None = None,
               pair_threshold: float | None = None) -> "VideoSteps":
        """Steps from scores (module doc); thresholds default to the model's."""
        verb_threshold = self.verb_threshold if verb_threshold is None else verb_threshold
        pair_threshold = self.pair_threshold if pair_threshold is None else pair_threshold
        n = len(video.sentences)
        key_probability = np.zeros(n)
        sentence_score: dict[str, dict[int, float]] = {}
        for (j, verb), q in zip(scored.pairs, scored.scores):
            key_probability[j] = max(key_probability[j], q)
            sentence_score.setdefault(verb, {})[j] = float(q)
        chosen = {v: p for v, p in zip(scored.verbs, scored.verb_probability) if p >= verb_threshold}
        placed: dict[int, list[str]] = {}
        for verb in sorted(chosen, key=lambda v: (-chosen[v], v)):  # the likelier verb first
            score = sentence_score.get(verb)
            if not score:
                continue
            best = min(score, key=lambda j: (-score[j], j))
            free = [j for j in score if j not in placed and score[j] >= score[best] / 2]
            j = min(free, key=lambda j: (abs(j - best), -score[j], j)) if free else best
            placed.setdefault(j, []).append(verb)
        paired: dict[str, list[tuple[float, str]]] = {}
        for (verb, noun), q in zip(scored.verb_nouns, scored.pair_probability):
            if q >= pair_threshold:
                paired.setdefault(verb, []).append((-q, noun))
        step_nouns = {j: list(dict.fromkeys(noun for verb in verbs for _, noun in sorted(paired.get(verb, ()))))
                      for j, verbs in placed.items()}
        return VideoSteps(video.video_id, key_probability, {j: placed[j] for j in sorted(placed)},
                          {j: step_nouns[j] for j in sorted(step_nouns)})


@dataclass
class VideoProbabilities:
    pairs: list[tuple[int, str]]  # (sentence, candidate verb)
    scores: np.ndarray  # of each pair: is it a caption verb of a step here?
    verbs: list[str]  # the video's candidate verbs
    verb_probability: np.ndarray  # of each: do the video's captions use it?
    nouns: list[str]  # the head nouns its narration says
    noun_probability: np.ndarray
    verb_nouns: list[tuple[str, str]]  # the candidate pairs (verb, noun)
    pair_probability: np.ndarray  # of each: does one of the video's captions write the verb with the noun?


@dataclass
class VideoSteps:
    """A video's steps: per sentence the highest score of any of its candidate verbs
    (``key_probability``), and for each step sentence its verbs and nouns."""

    video_id: str
    key_probability: np.ndarray
    verbs: dict[int, list[str]]
    nouns: dict[int, list[str]]  # said somewhere in the narration, not necessarily in the step's sentence

    def step_words(self) -> list[StepWords]:
        return [StepWords(tuple(self.verbs[j]), tuple(self.nouns.get(j, ()))) for j in sorted(self.verbs)]
