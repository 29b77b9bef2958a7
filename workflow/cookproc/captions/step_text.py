"""A short imperative step text ("add the chopped onions to the pan") from a key step's normalised
verbs and nouns and the clip's own words.

The verbs are the step model's (at most two, joined by "and"); each of the step's nouns that the
clip itself says brings its phrase as the clip says it (the words before the noun in its phrase:
"the chopped onions"), objects first (at most three), then one phrase the clip puts after a
preposition ("in the pan"), each in the clip's order; a noun after "of" ("cloves of *garlic*")
counts as an object. A possessive or demonstrative in front of a phrase ("my", "this") becomes
"the": the text speaks to the reader, not from the cook. Nothing is added that the clip does not
say, but the verbs.
"""
from __future__ import annotations

from typing import Sequence

from cookproc.data.step_words import Phrase

#: Determiners of speech replaced by "the" in a step text.
SPEAKER_DETERMINERS = frozenset({"this", "that", "these", "those", "my", "your", "our", "his", "her", "their", "its"})
MAX_VERBS = 2
MAX_OBJECTS = 3
MAX_PLACES = 1


def _clean(text: str) -> str:
    words = text.split()
    if words and words[0] in SPEAKER_DETERMINERS:
        words[0] = "the"
    return " ".join(words)


def _join(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def step_text(verbs: Sequence[str], nouns: Sequence[str], phrases: Sequence[Phrase]) -> str:
    """The step text; empty when there is no verb."""
    if not verbs:
        return ""
    chosen = set(nouns)
    objects, places, seen = [], [], set()
    for phrase in phrases:
        if phrase.noun not in chosen or phrase.noun in seen:
            continue
        seen.add(phrase.noun)
        if phrase.preposition and phrase.preposition != "of":
            places.append(f"{phrase.preposition} {_clean(phrase.text)}")
        else:
            objects.append(_clean(phrase.text))
    words = [_join(list(verbs[:MAX_VERBS]))]
    if objects:
        words.append(_join(objects[:MAX_OBJECTS]))
    words += places[:MAX_PLACES]
    return " ".join(words)
