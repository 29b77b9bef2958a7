"""The step model: which sentences of a transcript are steps, then the verbs and nouns a person
would write for each and its text, learnt from YouCook2's human captions of the training videos.

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

Decoding (:meth:`StepModel.decode`) decides the steps first, then their words. The video's verbs
are those the video model finds likely (the verb threshold): video-level evidence ranks a step's
words, it never places them. A sentence is a step when one of those verbs scores at least the step
threshold there (the narration gives that step there), unless it does not say that verb itself and a
better-scored sentence within ``suppression_window`` sentences has the same best verb (its score
comes from its neighbour's instruction: one instruction, one step), unless it has an action of its own
(a verb with an object: "throw the onions in"). A step's verbs are its best verb, said there or not (a
verb people write for what is said another way: "throw them in" -> add), unless the sentence says one
of the video's verbs that scores at least ``said_verb_share`` of it (then only the verbs it says), and
the video's verbs its sentence says that score at least ``also_verb_threshold`` there, at most
``max_verbs``; a verb heads as many steps as the narration gives it. A video verb that heads no step
goes to the sentence that scores it best if that score is at least ``support_threshold`` (joining the
step there, or as a step of its own), and is left out otherwise. Each step owns a run of sentences:
those nearer to it than to the steps before and after it, at most ``run_window`` sentences away. Its
nouns are nouns said in its run (never a subject of its own sentence: "when you see *bubbles* flip the
pancake") that the noun model finds at least as likely as the noun threshold, at most ``max_nouns``,
the likeliest kept; its text is written from them and its own sentence's parse
(:mod:`cookproc.captions.step_text`), and its nouns are the text's. The verb and step thresholds are
chosen together on the inner-validation videos by the mean per-video step F1
(:mod:`cookproc.scoring.people`), then the noun threshold by the mean nouns F1.
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy.special import expit

from cookproc.captions.features import (NounStatistics, VerbStatistics, VideoText, noun_candidates, selector_features,
                                        sentence_candidates, video_candidates)
from cookproc.data.step_words import StepWords
from cookproc.learn import boosted_trees

log = logging.getLogger(__name__)


#: The thresholds chosen on inner validation, each among the candidates of its setting.
THRESHOLD_GRIDS = ("verb_thresholds", "step_thresholds", "noun_thresholds")


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
    step_thresholds: tuple[float, ...]
    noun_thresholds: tuple[float, ...]
    also_verb_threshold: float
    said_verb_share: float
    support_threshold: float
    suppression_window: int
    max_verbs: int
    run_window: int
    max_nouns: int
    seed: int

    @classmethod
    def from_config(cls, section: Mapping) -> "StepModelSettings":
        values = dict(section)
        for key in ("sentence_trees", "video_trees", "noun_trees"):
            values[key] = TreeSettings(**values[key])
        for key in THRESHOLD_GRIDS:
            values[key] = tuple(float(t) for t in values[key])
        return cls(**values)

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in THRESHOLD_GRIDS:
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

    def neighbour_words(self, matrix, exclude: Sequence[int | None]) -> list["NeighbourWords"]:
        """Per row: the share of the nearest fit videos whose captions use each verb and noun
        (``exclude``: a row's own fit video, left out)."""
        similarity = np.asarray((matrix @ self.fit_matrix.T).todense())
        out = []
        for row, own in zip(similarity, exclude):
            if own is not None:
                row[own] = -np.inf
            nearest = np.argsort(-row, kind="stable")[:self.neighbours]
            shares = NeighbourWords({}, {})
            for i in nearest:
                for share, items in ((shares.verbs, self.fit_verbs[i]), (shares.nouns, self.fit_nouns[i])):
                    for item in items:
                        share[item] = share.get(item, 0.0) + 1 / self.neighbours
            out.append(shares)
        return out


@dataclass
class NeighbourWords:
    """The share of a video's nearest training videos whose captions use each verb and noun."""

    verbs: dict[str, float]
    nouns: dict[str, float]


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
    step_threshold: float
    noun_threshold: float
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
        return VideoProbabilities(
            pairs, scores, verbs, boosted_trees.predict_proba(self.video_trees, verb_rows) if verbs else np.zeros(0),
            nouns, boosted_trees.predict_proba(self.noun_trees, noun_rows) if nouns else np.zeros(0))

    def decode(self, video: VideoText, scored: "VideoProbabilities", *, verb_threshold: float | None = None,
               step_threshold: float | None = None, noun_threshold: float | None = None) -> "VideoSteps":
        """Steps from scores (module doc); thresholds default to the model's. The texts need the
        video's words with their clauses and phrases (:func:`cookproc.data.step_words.transcript_words`)."""
        from cookproc.captions.step_text import LIGHT_VERBS, subject_nouns, write_step

        s = self.settings
        verb_threshold = self.verb_threshold if verb_threshold is None else verb_threshold
        step_threshold = self.step_threshold if step_threshold is None else step_threshold
        noun_threshold = self.noun_threshold if noun_threshold is None else noun_threshold
        n = len(video.sentences)
        key_probability = np.zeros(n)
        for (j, _), q in zip(scored.pairs, scored.scores):
            key_probability[j] = max(key_probability[j], q)
        video_verbs = {v: float(p) for v, p in zip(scored.verbs, scored.verb_probability) if p >= verb_threshold}
        ranked: dict[int, list[tuple[float, str]]] = {}  # per sentence, the video's verbs by their score there
        for (j, verb), q in zip(scored.pairs, scored.scores):
            if verb in video_verbs:
                ranked.setdefault(j, []).append((float(q), verb))
        for options in ranked.values():
            options.sort(key=lambda option: (-option[0], option[1]))
        said = sorted(j for j, options in ranked.items() if options[0][0] >= step_threshold)
        window = s.suppression_window

        def says(j, verb):
            return verb in video.word_verbs[j] or verb in video.words[j].verbs

        # A sentence that says its best verb, or an action of its own, is a step; another is no step where a
        # better-scored neighbour has the same best verb (its score comes from that neighbour's instruction).
        def own_action(j):  # a verb of its own with an object: "throw the onions in", "take the chicken out"
            return any(c.objects and c.verb not in LIGHT_VERBS for c in video.words[j].clauses)

        kept = [j for j in said if says(j, ranked[j][0][1]) or own_action(j) or all(
            (ranked[j][0][0], -j) > (ranked[k][0][0], -k) for k in said
            if 0 < abs(k - j) <= window and ranked[k][0][1] == ranked[j][0][1])]
        verbs = {j: step_verbs(ranked[j], lambda v, j=j: says(j, v), s.also_verb_threshold, s.said_verb_share,
                               s.max_verbs) for j in kept}
        heading = {v for vs in verbs.values() for v in vs}
        for verb in sorted(set(video_verbs) - heading, key=lambda v: (-video_verbs[v], v)):
            support = [(q, -j) for j, options in ranked.items() for q, v in options if v == verb]
            if not support or max(support)[0] < s.support_threshold:
                continue  # the narration does not give it: no step for it
            j = -max(support)[1]
            if j not in verbs:
                verbs[j] = [verb]
            elif len(verbs[j]) < s.max_verbs:
                verbs[j].append(verb)
        noun_probability = dict(zip(scored.nouns, scored.noun_probability.tolist()))
        steps = sorted(verbs)
        nouns, texts, runs = {}, {}, {}
        for i, j in enumerate(steps):
            first = max(j - s.run_window, (steps[i - 1] + j) // 2 + 1 if i else 0)
            last = min(j + s.run_window, (j + steps[i + 1]) // 2 if i + 1 < len(steps) else n - 1)
            runs[j] = (first, last)
            subjects = subject_nouns(video.words[j].clauses)
            said_nouns = dict.fromkeys(m for k in range(first, last + 1) for m in video.words[k].nouns
                                       if not (k == j and m in subjects))
            likely = sorted((m for m in said_nouns if noun_probability.get(m, 0.0) >= noun_threshold),
                            key=lambda m: (-noun_probability[m], m))[:s.max_nouns]
            # The step's own sentence first: a noun's phrase is taken from there when it is said there.
            phrases = [p for k in (j, *range(first, j), *range(j + 1, last + 1)) for p in video.words[k].phrases]
            texts[j], nouns[j] = write_step(verbs[j], likely, video.words[j].clauses, phrases)
        return VideoSteps(video.video_id, key_probability, {j: verbs[j] for j in steps}, nouns, texts, runs)


def step_verbs(options: Sequence[tuple[float, str]], said: Callable[[str], bool], also: float, share: float,
               most: int) -> list[str]:
    """A step's verbs from its sentence's options (the video's verbs by falling score there): its best
    verb, said there or not (a verb people write for what is said another way: "throw them in" -> add),
    unless the sentence says a verb that scores at least ``share`` of it (then its own verbs alone),
    then the verbs the sentence says that score at least ``also`` there; at most ``most``."""
    own = [(q, v) for q, v in options if said(v) and q >= also]
    if own and not said(options[0][1]) and own[0][0] >= share * options[0][0]:
        return [v for _, v in own][:most]
    return list(dict.fromkeys([options[0][1]] + [v for _, v in own]))[:most]


@dataclass
class VideoProbabilities:
    pairs: list[tuple[int, str]]  # (sentence, candidate verb)
    scores: np.ndarray  # of each pair: is it a caption verb of a step here?
    verbs: list[str]  # the video's candidate verbs
    verb_probability: np.ndarray  # of each: do the video's captions use it?
    nouns: list[str]  # the head nouns its narration says
    noun_probability: np.ndarray  # of each: do the video's captions name it?


@dataclass
class VideoSteps:
    """A video's steps: per sentence the highest score of any of its candidate verbs
    (``key_probability``), and for each step, by its sentence, its verbs, its nouns (its text's,
    said in its run), its text and its run of sentences (first, last)."""

    video_id: str
    key_probability: np.ndarray
    verbs: dict[int, list[str]]
    nouns: dict[int, tuple[str, ...]]
    texts: dict[int, str]
    runs: dict[int, tuple[int, int]]

    def step_words(self) -> list[StepWords]:
        return [StepWords(tuple(self.verbs[j]), tuple(self.nouns[j])) for j in sorted(self.verbs)]
