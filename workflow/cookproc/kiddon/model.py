"""The segmenter's generative model: its parameters (kept as integer counts), scores and M-step.

A sentence labelled with k >= 1 predicates scores

    log Geo(k; p) + sum over frames [ log(count[v] / N) + log P(#args | v)
                                      + sum over arguments of bigram log-probabilities ]

with Geo(k; p) = (1-p)^(k-1) p, p = S / (S + V) (S sentences of the training text, V predicates),
P(#args = j | v) = (c_vj + 1) / (n_v + 4) (j capped at 3; an unseen verb gets 1/4) and an add-one
bigram model over argument tokens: an argument starts in context "PRED"+verb, "and" and "," are
not scored and reset the context to it, numbers read NUM#, and the argument ends with END;
P(t | c) = (c_ct + 1) / (n_c + K) with K = |vocabulary| + 1 (the +1 is the OTHER slot), and an
unseen context gets 1/K. The initial model (from the cooking lexicon) has verb counts only and
scores sum log(count[v] / N).

The vocabulary is fixed for a training run (every token of the training text): then every smoothed
estimate is the exact posterior mode under a fixed Dirichlet(2) prior, and hard EM provably never
lowers ``objective`` (see ``Model.objective``).
"""
from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from .text import is_numeric

END = "END"
NUM = "NUM#"
PRED_CONTEXT = "PRED"  # prefix of an argument's start context (words are lowercase, so no clash)
MAX_ARGS = 3  # argument counts above this are pooled
ARG_COUNT_OUTCOMES = MAX_ARGS + 1
FORMAT = "cookproc.kiddon.model/1"


def bigram_token(token: str) -> str | None:
    """The symbol a chunk token is scored as (None: not scored, it resets the context)."""
    if token in ("and", ","):
        return None
    return NUM if is_numeric(token) else token


def bigram_events(verb: str, arg: str) -> list[tuple[str, str]]:
    """The (context, token) events an argument chunk contributes to the bigram model."""
    start = PRED_CONTEXT + verb
    context, events = start, []
    for raw in arg.split(" "):
        token = bigram_token(raw)
        if token is None:
            context = start
            continue
        events.append((context, token))
        context = token
    events.append((context, END))
    return events


def training_vocabulary(words: Iterable[str]) -> int:
    """Size of the bigram vocabulary of a training text: its scored token symbols plus END."""
    return len({t for t in map(bigram_token, words) if t is not None} | {END})


@dataclass
class Model:
    """Parameters as counts; probabilities are derived on demand (so a saved model is exact)."""

    verb_counts: dict[str, int]
    # Filled by the M-step; absent in the initial (lexicon) model.
    n_sentences: int | None = None
    arg_counts: dict[str, list[int]] | None = None  # verb -> frames with 0, 1, 2, >=3 arguments
    bigram_counts: dict[str, dict[str, int]] | None = None  # context -> next token -> count
    vocabulary_size: int | None = None
    iteration: int = 0
    # The segmenter settings it was trained with (JSON values), so segmentation uses the same.
    settings: dict = field(default_factory=dict)
    _context_totals: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.verb_counts or any(c <= 0 for c in self.verb_counts.values()):
            raise ValueError("verb counts must be positive and not empty")
        self.total_verbs = sum(self.verb_counts.values())
        self._log_total = math.log(self.total_verbs)
        if self.bigram_counts is not None:
            if not self.vocabulary_size:
                raise ValueError("a model with a bigram model needs its vocabulary size")
            self._context_totals = {ctx: sum(nxt.values()) for ctx, nxt in self.bigram_counts.items()}
            self._outcomes = self.vocabulary_size + 1  # + OTHER

    @property
    def has_arguments(self) -> bool:
        return self.bigram_counts is not None

    @property
    def p_predicates(self) -> float | None:
        """Parameter p of the geometric distribution over the number of predicates per sentence."""
        if self.n_sentences is None:
            return None
        return self.n_sentences / (self.n_sentences + self.total_verbs)

    @property
    def verbs(self) -> frozenset[str]:
        return frozenset(self.verb_counts)

    def same_parameters(self, other: "Model") -> bool:
        return (self.verb_counts, self.n_sentences, self.arg_counts, self.bigram_counts, self.vocabulary_size) == (
            other.verb_counts, other.n_sentences, other.arg_counts, other.bigram_counts, other.vocabulary_size)

    # --- scores ---------------------------------------------------------------------------------
    def bigram_logprob(self, context: str, token: str) -> float:
        nxt = self.bigram_counts.get(context)
        if nxt is None:  # unseen context: OTHER back-off, uniform
            return -math.log(self._outcomes)
        return math.log(nxt.get(token, 0) + 1) - math.log(self._context_totals[context] + self._outcomes)

    def arg_count_logprob(self, verb: str, n_args: int) -> float:
        counts = self.arg_counts.get(verb) if self.arg_counts else None
        if counts is None:
            return -math.log(ARG_COUNT_OUTCOMES)  # an unseen verb: 1/4
        return math.log(counts[min(n_args, MAX_ARGS)] + 1) - math.log(sum(counts) + ARG_COUNT_OUTCOMES)

    def frame_logprob(self, verb: str, args: Sequence[str]) -> float:
        score = math.log(self.verb_counts[verb]) - self._log_total
        if not self.has_arguments:
            return score
        score += self.arg_count_logprob(verb, len(args))
        for arg in args:
            for context, token in bigram_events(verb, arg):
                score += self.bigram_logprob(context, token)
        return score

    def count_logprob(self, n_predicates: int) -> float:
        p = self.p_predicates
        if p is None:
            return 0.0
        return (n_predicates - 1) * math.log1p(-p) + math.log(p)

    def log_prior(self) -> float:
        """Log density (up to a constant) of the Dirichlet(2) priors that make the add-one
        estimates posterior modes: sum of log-probabilities of every outcome of every smoothed
        distribution, relative to the uniform distribution of an unseen context/verb."""
        if not self.has_arguments:
            return 0.0
        terms = []
        k = self._outcomes
        for ctx, nxt in self.bigram_counts.items():
            n = self._context_totals[ctx]
            terms.append(sum(math.log(c + 1) for c in nxt.values()) - k * math.log(n + k) + k * math.log(k))
        a = ARG_COUNT_OUTCOMES
        for counts in self.arg_counts.values():
            terms.append(sum(math.log(c + 1) for c in counts) - a * math.log(sum(counts) + a) + a * math.log(a))
        return math.fsum(terms)

    def objective(self, best_scores: Iterable[float], n_parsed: int, n_sentences: int) -> float | None:
        """The quantity hard EM climbs, for sentence scores computed under this model:

            sum of the best labellings' scores + log P(k = 0 predicates | p) for unparsed
            sentences + log(1 - p) per parsed sentence (p is the MLE of a geometric over k >= 0
            on every sentence) + ``log_prior``.

        The E-step maximises it over labellings for fixed parameters and the M-step maximises it
        over parameters for fixed labellings, so it does not decrease from one iteration to the
        next while the set of parsed sentences stays the same. None for the initial model.
        """
        p = self.p_predicates
        if p is None:
            return None
        return math.fsum([math.fsum(best_scores), n_parsed * math.log1p(-p),
                          (n_sentences - n_parsed) * math.log(p), self.log_prior()])

    # --- persistence -----------------------------------------------------------------------------
    def to_json(self) -> str:
        """Deterministic JSON (sorted keys, integer counts; p is derived, written for readers)."""
        doc = {
            "format": FORMAT,
            "iteration": self.iteration,
            "total_verbs": self.total_verbs,
            "n_sentences": self.n_sentences,
            "p_predicates": self.p_predicates,
            "verb_counts": self.verb_counts,
            "arg_counts": self.arg_counts,
            "vocabulary_size": self.vocabulary_size,
            "bigram_counts": self.bigram_counts,
            "settings": self.settings,
        }
        return json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, text: str, *, path: str = "<model>") -> "Model":
        from cookproc.core.errors import InputError

        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise InputError(path, f"expected a model in format {FORMAT!r}, found {found!r}")
        try:
            return cls(verb_counts=doc["verb_counts"], n_sentences=doc["n_sentences"],
                       arg_counts=doc["arg_counts"], bigram_counts=doc["bigram_counts"],
                       vocabulary_size=doc["vocabulary_size"], iteration=doc["iteration"],
                       settings=doc["settings"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(path, f"malformed model: {exc!r}") from exc


def initial_model(lexicon: Iterable[str], training_counts: Mapping[str, int], can_be_verb) -> Model:
    """Verb counts 1 + training-text frequency for lexicon words that WordNet knows as verbs."""
    counts = {w: 1 + training_counts.get(w, 0) for w in sorted(set(lexicon)) if can_be_verb(w)}
    if not counts:
        raise ValueError("no lexicon word has a WordNet verb synset")
    return Model(verb_counts=counts)


def m_step(labelled: Iterable[tuple[int, Sequence[tuple[str, Sequence[str]]]]], n_sentences: int,
           vocabulary_size: int, *, iteration: int) -> Model:
    """Hard counts over the training text: ``labelled`` yields (multiplicity, frames) per parsed sentence;
    ``n_sentences`` counts every sentence, skipped ones included (it sets p = S / (S + V)).
    Verbs that no sentence was labelled with drop out of the model."""
    verb_counts: Counter[str] = Counter()
    arg_counts: dict[str, list[int]] = defaultdict(lambda: [0] * ARG_COUNT_OUTCOMES)
    bigrams: dict[str, Counter[str]] = defaultdict(Counter)
    for weight, frames in labelled:
        for verb, args in frames:
            verb_counts[verb] += weight
            arg_counts[verb][min(len(args), MAX_ARGS)] += weight
            for arg in args:
                for context, token in bigram_events(verb, arg):
                    bigrams[context][token] += weight
    if not verb_counts:
        raise ValueError("the E-step labelled no sentence with a predicate: nothing to count")
    return Model(
        verb_counts={v: verb_counts[v] for v in sorted(verb_counts)},
        n_sentences=n_sentences,
        arg_counts={v: arg_counts[v] for v in sorted(arg_counts)},
        bigram_counts={ctx: dict(sorted(bigrams[ctx].items())) for ctx in sorted(bigrams)},
        vocabulary_size=vocabulary_size,
        iteration=iteration,
    )
