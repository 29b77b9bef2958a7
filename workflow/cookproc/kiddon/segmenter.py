"""E-step: the best labelling of one sentence under a model, and hard-EM training on the training text."""
from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from cookproc.core.logs import Progress

from .model import Model, training_vocabulary, initial_model, m_step
from .search import Frame, valid_labellings
from .text import (CAND, DEFAULT_IGNORE_WORDS, base_tags, candidate_tags, ignore_reason,
                   split_sentences, tokenize)

log = logging.getLogger(__name__)

Sentence = tuple[str, ...]  # tokens, case kept (only the capital-"I" rule looks at case)


@dataclass(frozen=True)
class Settings:
    """Knobs of the segmenter (defaults: the original program as upstream ran it)."""

    ignore_words: tuple[str, ...] = DEFAULT_IGNORE_WORDS
    ignore_capital_i: bool = True
    lowercase_i_is_pronoun: bool = False
    then_is_conjunction: bool = False
    max_candidates: int = 15

    def to_dict(self) -> dict:
        """JSON values (as in config.yaml's kiddon section)."""
        values = dataclasses.asdict(self)
        values["ignore_words"] = list(self.ignore_words)
        return values

    @classmethod
    def from_dict(cls, values: dict) -> "Settings":
        """Settings from config / a model file (unknown keys are refused)."""
        unknown = sorted(set(values) - set(cls().to_dict()))
        if unknown:
            raise ValueError(f"unknown segmenter settings {unknown}")
        values = dict(values)
        if "ignore_words" in values:
            values["ignore_words"] = tuple(values["ignore_words"])
        return cls(**values)


@dataclass(frozen=True)
class Parse:
    """The segmenter's reading of a sentence: frames (empty when skipped) and why it was skipped."""

    frames: tuple[Frame, ...]
    score: float | None
    skipped: str | None


def document_sentences(lines: Iterable[str]) -> list[Sentence]:
    """Sentences of a document (lines joined), split as the original splitter does."""
    tokens = tokenize(" ".join(lines))
    return [tuple(tokens[a:b]) for a, b in split_sentences(tokens)]


class Segmenter:
    """Labels sentences under one model; remembers each sentence's labellings while its candidate
    verbs stay the same (the hypothesis space does not depend on the model's numbers)."""

    def __init__(self, settings: Settings = Settings()):
        self.settings = settings
        self._base: dict[Sentence, tuple[tuple[str, ...], list[str]]] = {}
        self._space: dict[Sentence, tuple[tuple[int, ...], list[tuple[Frame, ...]] | str]] = {}

    def hypotheses(self, tokens: Sentence, verbs) -> list[tuple[Frame, ...]] | str:
        """Every well-formed labelling's frames, or the reason the sentence is skipped."""
        cached_base = self._base.get(tokens)
        if cached_base is None:
            words = tuple(t.lower() for t in tokens)
            tags = base_tags(words, lowercase_i_is_pronoun=self.settings.lowercase_i_is_pronoun,
                             then_is_conjunction=self.settings.then_is_conjunction)
            cached_base = self._base[tokens] = (words, tags)
        words, base = cached_base
        tags = candidate_tags(words, base, verbs)
        key = tuple(i for i, t in enumerate(tags) if t == CAND)
        cached = self._space.get(tokens)
        if cached is not None and cached[0] == key:
            return cached[1]
        reason = ignore_reason(tokens, tags, ignore_words=self.settings.ignore_words,
                               ignore_capital_i=self.settings.ignore_capital_i,
                               max_candidates=self.settings.max_candidates)
        space: list[tuple[Frame, ...]] | str = reason if reason else valid_labellings(words, tags)
        if not space:
            space = "no well-formed labelling"
        self._space[tokens] = (key, space)
        return space

    def parse(self, tokens: Sentence, model: Model, frame_scores: dict | None = None) -> Parse:
        """The highest-scoring labelling (the first one found on ties)."""
        space = self.hypotheses(tokens, model.verbs)
        if isinstance(space, str):
            return Parse((), None, space)
        cache = {} if frame_scores is None else frame_scores
        best, best_score = None, float("-inf")
        for frames in space:
            score = model.count_logprob(len(frames))
            for frame in frames:
                s = cache.get(frame)
                if s is None:
                    s = cache[frame] = model.frame_logprob(*frame)
                score += s
            if score > best_score:
                best, best_score = frames, score
        return Parse(best, best_score, None)


@dataclass(frozen=True)
class IterationStats:
    iteration: int
    log_likelihood: float  # sum of the best labellings' scores under the model the E-step used
    objective: float | None  # hard EM's objective (Model.objective); None in iteration 1
    n_sentences: int
    n_parsed: int  # sentences with at least one frame
    n_predicates: int
    candidate_verbs: int  # verbs of the model the E-step used
    active_verbs: int  # verbs the E-step predicted (the new model's verbs)
    p_predicates: float
    seconds: float


def training_sentences(documents: Iterable[Sequence[str]]) -> Counter[Sentence]:
    """Every sentence of every document (non-empty), with its multiplicity."""
    counts: Counter[Sentence] = Counter()
    for lines in documents:
        counts.update(s for s in document_sentences(lines) if s)
    return counts


def train(training_text: Counter[Sentence], lexicon: Iterable[str], can_be_verb: Callable[[str], bool], *,
          iterations: int, settings: Settings = Settings()) -> tuple[Model, list[IterationStats]]:
    """Hard EM from the lexicon model: each iteration labels every sentence with its best labelling
    under the current model, then re-estimates the model from those labellings.

    Once an M-step returns the parameters it started from, hard EM is at a fixed point (the E-step
    is deterministic): the remaining iterations would repeat it exactly, so they are recorded
    without being recomputed.
    """
    if iterations < 1:
        raise ValueError("iterations must be >= 1")
    sentences = sorted(training_text)  # fixed order: results never depend on hashing
    n_sentences = sum(training_text.values())
    word_counts: Counter[str] = Counter()
    for tokens in sentences:
        for token in tokens:
            word_counts[token.lower()] += training_text[tokens]
    vocabulary_size = training_vocabulary(sorted(word_counts))
    model = initial_model(lexicon, word_counts, can_be_verb)
    segmenter = Segmenter(settings)
    history: list[IterationStats] = []
    fixed_point = False
    for iteration in range(1, iterations + 1):
        if fixed_point:
            stats = dataclasses.replace(history[-1], iteration=iteration, seconds=0.0)
            model.iteration = iteration
            history.append(stats)
            log.info("iteration %d: fixed point, same as iteration %d", iteration, iteration - 1)
            continue
        started = time.perf_counter()
        frame_scores: dict = {}
        labelled, scores, n_parsed = [], [], 0
        progress = Progress(f"EM iteration {iteration}/{iterations}, E-step", len(sentences), unit="sentences", log=log)
        for tokens in progress.iterate(sentences):
            parse = segmenter.parse(tokens, model, frame_scores)
            if parse.frames:
                weight = training_text[tokens]
                labelled.append((weight, parse.frames))
                scores.append(weight * parse.score)
                n_parsed += weight
        new_model = m_step(labelled, n_sentences, vocabulary_size, iteration=iteration)
        new_model.settings = settings.to_dict()
        stats = IterationStats(
            iteration=iteration, log_likelihood=math.fsum(scores),
            objective=model.objective(scores, n_parsed, n_sentences),
            n_sentences=n_sentences, n_parsed=n_parsed, n_predicates=new_model.total_verbs,
            candidate_verbs=len(model.verb_counts), active_verbs=len(new_model.verb_counts),
            p_predicates=new_model.p_predicates, seconds=time.perf_counter() - started)
        log.info("iteration %d: log-likelihood %.1f, objective %s, %d/%d sentences parsed, "
                 "%d predicates, verbs %d -> %d (%.1fs)", iteration, stats.log_likelihood,
                 "-" if stats.objective is None else f"{stats.objective:.1f}", n_parsed, n_sentences,
                 stats.n_predicates, stats.candidate_verbs, stats.active_verbs, stats.seconds)
        history.append(stats)
        fixed_point = new_model.same_parameters(model)
        model = new_model
    return model, history
