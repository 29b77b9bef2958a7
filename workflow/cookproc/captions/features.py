"""What the step model reads of a video: its sentences as words and vectors, and the features of
each candidate verb of each sentence, of each candidate verb of the video, and of each noun the
video's narration says.

A **candidate verb of a sentence** is a verb lemma of one of its words (any word WordNet knows as
a verb, whatever the tagger says: "give it a good *mix*"), or one of the caption vocabulary's verbs
whose captions' vectors are nearest the sentence's (a verb people write for what is said another
way: "throw it in" -> add). A **candidate verb of the video** is a candidate of any of its
sentences; a **candidate noun** is a head noun the narration says (nothing else can be a step's
noun: the model never invents an ingredient or a tool).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from cookproc.data.step_words import StepWords

#: Vocabulary verbs nearest a sentence (by caption vectors) that are candidates of it.
NEAREST_VERBS = 15
#: WordNet lexicographer files of nouns, one feature each (what kind of thing a noun is).
NOUN_KINDS = ("noun.food", "noun.plant", "noun.artifact", "noun.substance", "noun.animal", "noun.quantity",
              "noun.time", "noun.act", "noun.body")
_WORD = re.compile(r"[a-z]+")

SENTENCE_FEATURES = ("tagged_verb", "word", "neighbour_word", "video_mentions", "caption_prior", "sentence_copy",
                     "video_copy", "similarity", "window_similarity", "similarity_rank", "key_step", "position",
                     "in_vocabulary")
VIDEO_FEATURES = ("max_score", "sum_score", "noisy_or", "n_likely", "word_mentions", "tagged_mentions",
                  "caption_prior", "sentence_copy", "video_copy", "max_similarity", "top3_similarity",
                  "in_vocabulary", "log_sentences", "n_candidate_sentences", "transcript_classifier",
                  "neighbour_videos", "first_mention", "mention_share")
NOUN_FEATURES = ("log_mentions", "mention_share", "first_mention", "caption_prior", "video_copy",
                 "neighbour_videos", *NOUN_KINDS, "length")

@dataclass
class VideoText:
    """A video's transcript as the model reads it (sentences lower-cased, in order)."""

    video_id: str
    sentences: list[str]
    words: list[StepWords]
    vectors: np.ndarray  # (sentences × dim)
    word_verbs: list[frozenset[str]] = field(default_factory=list)  # verb lemmas of every word, per sentence

    def __post_init__(self):
        if len(self.words) != len(self.sentences) or len(self.vectors) != len(self.sentences):
            raise ValueError(f"video {self.video_id}: {len(self.sentences)} sentences, {len(self.words)} parsed, "
                             f"{len(self.vectors)} vectors")
        if not self.word_verbs:
            self.word_verbs = [word_verbs(s) for s in self.sentences]


def word_verbs(sentence: str) -> frozenset[str]:
    """The verb lemma of every word of three letters or more that WordNet knows as a verb."""
    from cookproc.data.wordnet import has_verb_synset, verb_lemma

    return frozenset(verb_lemma(w) for w in _WORD.findall(sentence.lower()) if len(w) > 2 and has_verb_synset(w))


def unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def selector_features(video: VideoText) -> np.ndarray:
    """Per sentence: its vector, the mean of its neighbours' and its relative position."""
    x = np.asarray(video.vectors, dtype=np.float64)
    padded = np.pad(x, ((1, 1), (0, 0)))
    n = len(x)
    position = (np.arange(n) / max(1, n - 1))[:, None]
    return np.hstack([x, (padded[:-2] + padded[2:]) / 2, position])


@dataclass
class VerbStatistics:
    """What the training videos say about verbs: how many videos' captions use each (``df``, of
    ``n_videos``), how often a word said in an aligned sentence is a verb of its caption
    (``sentence_copy``) and a verb said in a video one of its captions' (``video_copy``)."""

    vocabulary: list[str]
    df: dict[str, int]
    n_videos: int
    sentence_copy: dict[str, float]
    video_copy: dict[str, float]
    default_sentence_copy: float
    default_video_copy: float

    def prior(self, verb: str) -> float:
        return math.log((self.df.get(verb, 0) + 1) / (self.n_videos + 1))


def sentence_candidates(video: VideoText, statistics: VerbStatistics, centroids: np.ndarray,
                        key_step: np.ndarray) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """The features (:data:`SENTENCE_FEATURES`) of every (sentence, candidate verb) of a video, and
    the pairs, sentence by sentence, candidates sorted."""
    n = len(video.sentences)
    vocabulary = {v: k for k, v in enumerate(statistics.vocabulary)}
    x = unit_rows(video.vectors)
    padded = np.pad(x, ((1, 1), (0, 0)))
    window = unit_rows(padded[:-2] + padded[1:-1] + padded[2:])
    similarity, window_similarity = x @ centroids.T, window @ centroids.T
    rank = (-similarity).argsort(axis=1, kind="stable").argsort(axis=1, kind="stable")
    mentions: dict[str, int] = {}
    for verbs in video.word_verbs:
        for verb in verbs:
            mentions[verb] = mentions.get(verb, 0) + 1
    rows, pairs = [], []
    for j in range(n):
        neighbours = (video.word_verbs[j - 1] if j > 0 else frozenset()) | (
            video.word_verbs[j + 1] if j + 1 < n else frozenset())
        nearest = {statistics.vocabulary[k] for k in np.argsort(-similarity[j], kind="stable")[:NEAREST_VERBS]}
        for verb in sorted(set(video.word_verbs[j]) | set(video.words[j].verbs) | nearest):
            k = vocabulary.get(verb)
            rows.append([verb in video.words[j].verbs, verb in video.word_verbs[j], verb in neighbours,
                         math.log1p(mentions.get(verb, 0)), statistics.prior(verb),
                         statistics.sentence_copy.get(verb, statistics.default_sentence_copy),
                         statistics.video_copy.get(verb, statistics.default_video_copy),
                         similarity[j, k] if k is not None else -1.0,
                         window_similarity[j, k] if k is not None else -1.0,
                         rank[j, k] if k is not None else len(vocabulary), key_step[j], j / max(1, n - 1),
                         k is not None])
            pairs.append((j, verb))
    return np.asarray(rows, dtype=np.float64).reshape(len(pairs), len(SENTENCE_FEATURES)), pairs


def video_candidates(video: VideoText, rows: np.ndarray, pairs: Sequence[tuple[int, str]], scores: np.ndarray,
                     transcript_classifier: Mapping[str, float], neighbours: Mapping[str, float],
                     likely: float = 0.05) -> tuple[np.ndarray, list[str]]:
    """The features (:data:`VIDEO_FEATURES`) of every candidate verb of a video, from its sentences'
    candidate rows and their scores; candidates sorted."""
    column = {name: i for i, name in enumerate(SENTENCE_FEATURES)}
    by_verb: dict[str, list[int]] = {}
    for i, (_, verb) in enumerate(pairs):
        by_verb.setdefault(verb, []).append(i)
    n = len(video.sentences)
    out, verbs = [], sorted(by_verb)
    for verb in verbs:
        idx = np.asarray(by_verb[verb])
        q, r = scores[idx], rows[idx]
        said = np.asarray([pairs[i][0] for i in idx])[r[:, column["word"]] > 0]
        out.append([q.max(), q.sum(), 1 - np.prod(1 - q), (q > likely).sum(), r[:, column["word"]].sum(),
                    r[:, column["tagged_verb"]].sum(), r[0, column["caption_prior"]],
                    r[0, column["sentence_copy"]], r[0, column["video_copy"]], r[:, column["similarity"]].max(),
                    np.sort(r[:, column["similarity"]])[-3:].mean(), r[0, column["in_vocabulary"]], math.log(max(n, 1)),
                    len(idx), transcript_classifier.get(verb, -1.0), neighbours.get(verb, 0.0),
                    said.min() / n if len(said) else -1.0, r[:, column["word"]].sum() / max(n, 1)])
    return np.asarray(out, dtype=np.float64).reshape(len(verbs), len(VIDEO_FEATURES)), verbs


@dataclass
class NounStatistics:
    df: dict[str, int]
    n_videos: int
    video_copy: dict[str, float]
    default_video_copy: float

    def prior(self, noun: str) -> float:
        return math.log((self.df.get(noun, 0) + 1) / (self.n_videos + 1))


def noun_kind(noun: str) -> str:
    """The WordNet lexicographer file of a noun's first sense ("noun.food"), or "none"."""
    from cookproc.data.wordnet import noun_lexname

    return noun_lexname(noun)


def noun_candidates(video: VideoText, statistics: NounStatistics,
                    neighbours: Mapping[str, float]) -> tuple[np.ndarray, list[str]]:
    """The features (:data:`NOUN_FEATURES`) of every head noun the video's narration says, sorted."""
    n = len(video.sentences)
    mentions: dict[str, int] = {}
    first: dict[str, int] = {}
    for j, words in enumerate(video.words):
        for noun in words.nouns:
            mentions[noun] = mentions.get(noun, 0) + 1
            first.setdefault(noun, j)
    nouns = sorted(mentions)
    out = []
    for noun in nouns:
        kind = noun_kind(noun)
        out.append([math.log1p(mentions[noun]), mentions[noun] / n, first[noun] / n, statistics.prior(noun),
                    statistics.video_copy.get(noun, statistics.default_video_copy), neighbours.get(noun, 0.0),
                    *(kind == k for k in NOUN_KINDS), len(noun)])
    return np.asarray(out, dtype=np.float64).reshape(len(nouns), len(NOUN_FEATURES)), nouns
