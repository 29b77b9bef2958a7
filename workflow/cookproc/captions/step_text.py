"""A short imperative step text ("add the flour sugar and salt to the bowl") from a step's verbs, the
nouns chosen for it (said in its run of sentences) and its own sentence's parse
(:class:`cookproc.data.step_words.Clause`); the step's nouns are those the text names: one list. A
subject of the sentence is never written (:func:`subject_nouns`).

Each verb of the step comes first, then its own objects: the chosen nouns its clause has as objects
("flip the pancake"), in the sentence's order, each in its phrase as the narration says it ("the
chopped onions"). Chosen nouns that no verb of the step has as an object (said in a neighbouring
sentence of the run, or where the parse attached them elsewhere) follow the first verb's objects,
unless the narration says them after a preposition: then the first such noun, if not a time ("for
five minutes"), is the step's one place ("into the pan"), after the objects of the verb whose clause
has it (else the first verb's), and any other is left out of the text and of the step's nouns. A
phrase after "with" goes with the objects ("whisk two eggs with the milk"). A verb the sentence says
another way (the step model's "add" for "throw them in") writes the objects of the sentence's action:
its first clause with objects whose verb is no other verb of the step and not a verb of speech or
going (:data:`LIGHT_VERBS`). A possessive or demonstrative in front of a phrase ("my", "this")
becomes "the": the text speaks to the reader, not from the cook. Nothing is written that the run does
not say, but the verbs.
"""
from __future__ import annotations

from typing import Sequence

from cookproc.data.step_words import Clause, Phrase

#: Determiners of speech replaced by "the" in a step text.
SPEAKER_DETERMINERS = frozenset({"this", "that", "these", "those", "my", "your", "our", "his", "her", "their", "its"})
#: Verbs that carry no action of their own in a narration ("we 're going to", "let it", "you want to").
LIGHT_VERBS = frozenset({"be", "have", "do", "go", "let", "want", "need", "see", "know", "say", "think", "look", "try",
                         "like", "start", "begin", "show", "come", "make", "get", "give", "gonna", "wanna", "tell",
                         "talk"})
def _clean(text: str) -> str:
    words = text.split()
    if words and words[0].lower() in SPEAKER_DETERMINERS:
        words[0] = "the"
    return " ".join(words)


def _join(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def clause_for(verb: str, verbs: Sequence[str], clauses: Sequence[Clause]) -> Clause | None:
    """The clause a step verb writes its objects from: its own (the first with objects, else the
    first), or for a verb the sentence does not say as one, the sentence's action (module doc)."""
    own = [c for c in clauses if c.verb == verb]
    if own:
        return next((c for c in own if c.objects), own[0])
    return next((c for c in clauses if c.objects and c.verb not in verbs and c.verb not in LIGHT_VERBS), None)


def subject_nouns(clauses: Sequence[Clause]) -> set[str]:
    """The nouns that are a subject in a sentence ("when you see *bubbles* flip the pancake"): never a
    step's words."""
    from cookproc.data.step_words import noun_lemma

    return {noun_lemma(c.subject) for c in clauses if c.subject}


def write_step(verbs: Sequence[str], nouns: Sequence[str], clauses: Sequence[Clause],
               phrases: Sequence[Phrase]) -> tuple[str, tuple[str, ...]]:
    """The step text (module doc) and its nouns, from the step's ``verbs``, its chosen ``nouns``, its
    sentence's ``clauses`` and the ``phrases`` of its run (its own sentence's first); empty when there
    is no verb."""
    verbs = list(dict.fromkeys(verbs))
    if not verbs:
        return "", ()
    phrase = {}
    for p in phrases:
        phrase.setdefault(p.noun, p)
    subjects = subject_nouns(clauses)
    chosen = [m for m in dict.fromkeys(nouns) if m in phrase and m not in subjects]
    owners = [clause_for(v, verbs, clauses) for v in verbs]
    objects: list[list[str]] = [[] for _ in verbs]
    for k, clause in enumerate(owners):  # each verb's own objects, in its clause's order
        for m in (m for span in (clause.objects if clause else ()) for m in span.nouns):
            if m in chosen and not any(m in o for o in objects):
                objects[k].append(m)
    placed = {m for o in objects for m in o}
    place, place_verb = None, 0
    for m in chosen:
        if m in placed:
            continue
        if _kind(phrase[m]) == "place":
            if place is None and not _is_time(m):
                place = m
                place_verb = next((k for k, c in enumerate(owners) if c and any(m in p.nouns for p in c.places)), 0)
            continue  # one place a step: another is left out
        objects[0].append(m)
    parts, written = [], []
    for k, verb in enumerate(verbs):
        plain = [m for m in objects[k] if _kind(phrase[m]) != "with"]
        withs = [m for m in objects[k] if _kind(phrase[m]) == "with"]
        words = [verb] + ([_join([_clean(phrase[m].text) for m in plain])] if plain else [])
        words += ["with " + _join([_clean(phrase[m].text) for m in withs])] if withs else []
        if place is not None and k == place_verb:
            words.append(f"{phrase[place].preposition} {_clean(phrase[place].text)}")
        written += plain + withs + ([place] if place is not None and k == place_verb else [])
        parts.append(" ".join(words))
    return " and ".join(parts), tuple(dict.fromkeys(written))


def _kind(phrase: Phrase) -> str:
    """object (no preposition, or "of": "a pinch of *salt*"), with, or place."""
    if phrase.preposition in ("", "of"):
        return "object"
    return "with" if phrase.preposition == "with" else "place"


def _is_time(noun: str) -> bool:
    from cookproc.data.wordnet import noun_lexname

    return noun_lexname(noun) == "noun.time"
