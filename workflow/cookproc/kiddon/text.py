"""Tokens, sentences and out-of-context word classes for the Kiddon et al. (2015) segmenter.

The original implementation tags each word *on its own* with the Stanford tagger and only uses the
closed classes (prepositions, adverbs, pronouns, conjunctions, wh-words, gerunds, determiners,
numbers, punctuation); every other word is either a candidate verb or a noun. We get the same
classes from closed-class word lists, suffix rules and WordNet, so no tagger model is needed.
"""
from __future__ import annotations

import functools
import re
from typing import Sequence

from cookproc.data.wordnet import has_verb_synset, verb_lemma, wordnet

# Word classes (tags). Candidate verbs and the E-step's choices use CAND / PRED / NN.
IN, TO, RB, PRP, CC, WH, VBG, DT, CD = "IN", "TO", "RB", "PRP", "CC", "W", "VBG", "DT", "CD"
NN, CAND, PRED = "NN", "CAND", "PRED"
COMMA, PUNCT = ",", "."  # punctuation: the comma is told apart because lists are built with it
OPEN = "OPEN"  # any open-class word (noun, verb, adjective, modal...) before candidate selection

PREPOSITIONS = frozenset("""
about above across after against along amid among amongst around as at because before behind
below beneath beside besides between beyond by despite during except for from if in inside into
like near of off on onto outside over per since than though although throughout till toward
towards under underneath unless unlike until upon via whether while with within without
""".split())
ADVERBS = frozenset("""
again ahead almost already also always anyway apart aside away back down else even ever here
instead just maybe meanwhile n't never not now often once only out perhaps quite rather really so
sometimes somewhat soon still then there through together too twice up very well yet
""".split())
PRONOUNS = frozenset("""
me my mine myself you your yours yourself yourselves we us our ours ourselves he him his himself
she her hers herself it its itself they them their theirs themselves
""".split())
CONJUNCTIONS = frozenset({"and", "or", "but", "nor", "plus"})
WH_WORDS = frozenset("""
what whatever which whichever who whoever whom whose where wherever when whenever why how however
""".split())
DETERMINERS = frozenset("""
a an the this that these those some any all each every no another both either neither
""".split())
NUMBER_WORDS = frozenset("""
zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred
thousand million dozen
""".split())

# Units and vague amounts: the original splitter never ends a sentence at a period right after one
# of these (it protects amounts like "2 c."), so "... 2 cups." runs on into the next line.
AMOUNT_WORDS = frozenset("""
cup cups c c. teaspoon teaspoons tsp tsps tsp. tsps. t. tablespoon tablespoons tbsp tbsps tbsp.
tbsps. tb. tb tbl tbls tbl. tbls. quart quarts qt qts qt. qts. liter liters litre litres lt lts
lt. lts. gallon gallons gal gal. gals gals. scoop scoops pinch sprinkle dash can cans ml ml. mls
milliliter milliliters millilitre millilitres ounce ounces oz ozs pound pounds lb lbs lb. lbs.
piece pieces remaining rest approximately about
""".split())
# Tokens that end a sentence wherever they are (the original splitter's list).
SENTENCE_FINAL = frozenset({"!", "?", ";", ":", "...", "+", "="})

_NUMERIC = re.compile(r"^\d+([./,-]\d+)*$")
_ABBREVIATION = re.compile(r"^([A-Za-z]\.){2,}$")
_LEADING = "\"([{`"
_TRAILING = ".,?!;:\")]}"
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")
_HAS_ALPHA = re.compile(r"[A-Za-z]")


def tokenize(text: str) -> list[str]:
    """Split on white space and peel punctuation off words (as a PTB tokenizer would).

    Apostrophes stay with their word ("'s", "n't" are already separate in the transcripts); a final
    period becomes its own token except in dotted abbreviations ("a.m."); "..." stays whole.
    """
    tokens: list[str] = []
    for raw in text.replace("*", " ").split():
        lead: list[str] = []
        while raw and raw[0] in _LEADING:
            lead.append(raw[0])
            raw = raw[1:]
        trail: list[str] = []
        while raw and not _ABBREVIATION.match(raw):
            if raw.endswith("..."):
                trail.append("...")
                raw = raw[:-3]
            elif raw[-1] in _TRAILING:
                trail.append(raw[-1])
                raw = raw[:-1]
            else:
                break
        tokens.extend(lead)
        if raw:
            tokens.append(raw)
        tokens.extend(reversed(trail))
    return tokens


def is_numeric(token: str) -> bool:
    """A number written with digits ("10", "1/2", "1.5") or a small number word."""
    return bool(_NUMERIC.match(token)) or token in NUMBER_WORDS


def is_amount(token: str) -> bool:
    return token.lower() in AMOUNT_WORDS


def split_sentences(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Sentence spans ``(start, end)`` of a tokenized document, as the original splitter cuts them.

    A sentence ends after "!", "?", ";", ":", "...", "+" or "="; and after a period token unless the
    word before it is an amount word (a word ending in a period, like "p.m.", ends one only before a
    capitalised word). A sentence that is only a period is dropped.
    """
    spans: list[tuple[int, int]] = []
    # Stage 1: sentence-final punctuation words.
    chunks, begin = [], 0
    for i, token in enumerate(tokens):
        if token in SENTENCE_FINAL:
            chunks.append((begin, i + 1))
            begin = i + 1
    if begin < len(tokens):
        chunks.append((begin, len(tokens)))
    # Stage 2: periods inside each chunk.
    for start, end in chunks:
        begin = start
        for w in range(start, end):
            word = tokens[w]
            if not word.endswith(".") or is_amount(word) or (w > start and is_amount(tokens[w - 1])):
                continue
            next_upper = w != end - 1 and tokens[w + 1][:1].isupper()
            if next_upper or word == ".":
                size = w + 1 - begin
                if (size and len(word) > 1) or (size > 1 and word == "."):
                    spans.append((begin, w + 1))
                begin = w + 1
        if begin < end:
            spans.append((begin, end))
    return spans


def is_punct(tag: str) -> bool:
    return tag in (COMMA, PUNCT)


@functools.lru_cache(maxsize=None)
def word_class(word: str) -> str:
    """The closed class of a lowercased word seen on its own, or OPEN."""
    if not _HAS_ALNUM.search(word):
        return COMMA if word == "," else PUNCT
    if word == "to":
        return TO
    if word in CONJUNCTIONS:
        return CC
    if word in DETERMINERS:
        return DT
    if word in PRONOUNS:
        return PRP
    if word in WH_WORDS:
        return WH
    if word in PREPOSITIONS:
        return IN
    if word in ADVERBS:
        return RB
    if is_numeric(word):
        return CD
    if not _HAS_ALPHA.search(word):
        return CD  # other digit strings ("1:30"); "2nd" has letters and stays open
    if len(word) > 4 and word.endswith("ly") and wordnet().synsets(word, pos="r"):
        return RB
    if len(word) > 4 and word.endswith("ing"):
        lemma = verb_lemma(word)
        if lemma != word and has_verb_synset(lemma):
            return VBG
    return OPEN


@functools.lru_cache(maxsize=None)
def _sense_weight(word: str, pos: str) -> int:
    """Tagged-corpus frequency plus number of senses of ``word`` as ``pos`` in WordNet."""
    synsets = wordnet().synsets(word, pos=pos)
    count = sum(lemma.count() for s in synsets for lemma in s.lemmas() if lemma.name().lower() == word)
    return count + len(synsets)


@functools.lru_cache(maxsize=None)
def is_base_verb(word: str) -> bool:
    """Whether a tagger would call ``word`` on its own a base-form verb (VB).

    Approximated with WordNet: the word is its own verb lemma and weighs more as a verb than as a
    noun (tagged-sense counts plus sense counts): "add", "mix", "stir" yes; "salt", "pepper" no.
    """
    word = word.lower()
    if word_class(word) != OPEN or not has_verb_synset(word) or verb_lemma(word) != word:
        return False
    return _sense_weight(word, "v") > _sense_weight(word, "n")


@functools.lru_cache(maxsize=None)
def is_mostly_noun_or_adjective(word: str) -> bool:
    verb = _sense_weight(word, "v")
    return _sense_weight(word, "n") > verb or _sense_weight(word, "a") + _sense_weight(word, "s") > verb


@functools.lru_cache(maxsize=None)
def can_be_noun_or_verb(word: str) -> bool:
    wn = wordnet()
    return bool(wn.synsets(word, pos="n") or wn.synsets(word, pos="v"))


def base_tags(words: Sequence[str], *, lowercase_i_is_pronoun: bool = False,
              then_is_conjunction: bool = False) -> list[str]:
    """Closed-class tags in context (before the verb model decides which open words are candidates)
    of lowercased ``words``.

    A closed-class word right after a determiner, number, preposition or wh-word is read as a noun
    ("the in", "a then"); "through" is always an adverb. Open words stay OPEN. Two readings of the original program's tagger, each a switch:

    * ASR's lowercase "i" is an open word unless ``lowercase_i_is_pronoun``: a tagger trained on
      edited text does not know it as the pronoun "I";
    * "then" is an adverb unless ``then_is_conjunction``: the original code turns "then" into CC
      only for words its tagger did not already call RB, and a tagger calls "then" RB.
    """
    tags: list[str] = []
    for i, word in enumerate(words):
        if word == "i" and lowercase_i_is_pronoun:
            tag = PRP
        elif word == "then" and then_is_conjunction:
            tag = CC
        else:
            tag = word_class(word)
        prev = tags[i - 1] if i else None
        if tag in (IN, TO, RB, PRP, CC, WH, VBG):
            if word == "through":
                tag = RB
            elif prev in (DT, CD, IN, TO, WH):
                tag = NN
        tags.append(tag)
    return tags


def candidate_tags(words: Sequence[str], base: Sequence[str], verbs) -> list[str]:
    """Mark open words that the verb model knows as CAND, unless a determiner, number, wh-word or a
    preposition other than "then" precedes them; every other open word is NN."""
    tags = list(base)
    for i, tag in enumerate(tags):
        if tag != OPEN:
            continue
        prev = tags[i - 1] if i else None
        blocked = prev in (DT, CD, WH) or (prev == IN and words[i - 1] != "then")
        tags[i] = CAND if (words[i] in verbs and not blocked) else NN
    return tags


#: Words that make the original program skip a sentence (matched lowercased). Upstream also skips
#: a sentence with the pronoun "I", matched case-sensitively: see ``ignore_reason``.
DEFAULT_IGNORE_WORDS = ("be", "will", "not", "copyright", "submitted", "formatted", "typed")


def ignore_reason(tokens: Sequence[str], tags: Sequence[str], *, ignore_words=DEFAULT_IGNORE_WORDS,
                  ignore_capital_i: bool = True, max_candidates: int = 15) -> str | None:
    """Why the segmenter skips a sentence (then it has no actions), or None.

    ``tokens`` keep their case. Skipped: a sentence starting with a determiner, pronoun or
    punctuation; containing "@" or one of ``ignore_words``; containing the capitalised pronoun "I"
    (when ``ignore_capital_i``: upstream compares case-sensitively, so ASR's lowercase "i" passes);
    or with more than ``max_candidates`` candidate verbs (the search is exhaustive).
    """
    if not tokens:
        return "empty"
    if tags[0] in (DT, PRP) or is_punct(tags[0]):
        return f"starts with {tags[0]}"
    ignore = {w.lower() for w in ignore_words}
    for token in tokens:
        if "@" in token:
            return "contains @"
        if ignore_capital_i and token == "I":
            return "contains 'I'"
        if token.lower() in ignore:
            return f"contains {token.lower()!r}"
    n_candidates = sum(1 for t in tags if t == CAND)
    if n_candidates > max_candidates:
        return f"{n_candidates} candidate verbs"
    return None
