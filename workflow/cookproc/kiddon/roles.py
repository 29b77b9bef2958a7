"""Roles of a frame's argument chunks: DOBJ, PARG (+ preposition) or OARG, as the original writer
assigns and prints them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .text import IN, RB, TO, WH, OPEN, is_base_verb, is_mostly_noun_or_adjective, word_class

DOBJ, PARG, OARG = "DOBJ", "PARG", "OARG"
_DURATION_WORDS = frozenset({"minute", "minutes", "hour", "hours", "second", "seconds"})


@dataclass(frozen=True)
class Argument:
    role: str
    text: str  # as printed upstream: lowercase, "and" lists written with commas
    prep: str | None = None  # the preposition of a PARG


def printed(chunk: str) -> str:
    """The original writer prints "a , and b" / "a and b" lists as "a , b" / "a, b"."""
    return chunk.replace(", and ", ", ").replace(" and ", ", ")


def _has_ly_word(chunk: str) -> bool:
    """Upstream prefers a chunk without an "-ly" word as the direct object."""
    return any(word.endswith("ly") for word in chunk.split(" "))


def _is_other(chunk: str) -> bool:
    """Chunks that are never objects: one adverb (or punctuation-only) word; a wh-clause; a
    duration ("10 minutes"); "to" + a word read as a verb or adverb ("to boil")."""
    words = chunk.split(" ")
    first = word_class(words[0])
    if len(words) == 1:
        return first == RB or not any(ch.isalnum() for ch in words[0])
    if first == WH or any(w in _DURATION_WORDS for w in words[1:]):
        return True
    return first == TO and _to_reads_as_verb(words[1])


def _to_reads_as_verb(word: str) -> bool:
    cls = word_class(word)
    reads_as_verb = cls == RB or (cls == OPEN and is_base_verb(word))
    return reads_as_verb and not is_mostly_noun_or_adjective(word)


def _is_prepositional(chunk: str) -> bool:
    words = chunk.split(" ")
    if len(words) < 2 or word_class(words[0]) not in (IN, TO):
        return False
    return not (word_class(words[0]) == TO and _to_reads_as_verb(words[1]))


def assign_roles(chunks: Sequence[str]) -> list[Argument]:
    """Prepositional chunks become PARGs (preposition apart); of the remaining chunks that are not
    "other" (see ``_is_other``) the longest is the DOBJ, preferring chunks without an "-ly" word;
    everything else is an OARG. Order: DOBJ, PARGs, OARGs, each in sentence order."""
    pargs: list[Argument] = []
    others: list[tuple[int, str]] = []
    objects: list[tuple[int, str]] = []
    for index, chunk in enumerate(chunks):
        if _is_prepositional(chunk):
            prep, rest = chunk.split(" ", 1)
            pargs.append(Argument(PARG, printed(rest), prep))
        elif _is_other(chunk):
            others.append((index, chunk))
        else:
            objects.append((index, chunk))
    result: list[Argument] = []
    if objects:
        pool = [o for o in objects if not _has_ly_word(o[1])] or objects
        dobj = max(pool, key=lambda o: len(o[1]))  # max keeps the first of the longest
        result.append(Argument(DOBJ, printed(dobj[1])))
        others = sorted(others + [o for o in objects if o is not dobj])
    result += pargs
    result += [Argument(OARG, printed(chunk)) for _, chunk in others]
    return result
