"""The segmenter's hypothesis space: chunking a tagged sentence into frames, and the constraints.

A *labelling* assigns PRED or NN to every candidate verb of a sentence (the other words keep their
closed-class tag). ``extract_frames`` turns a labelling into frames ``(verb, [argument chunks])``;
``valid_labellings`` enumerates every labelling that passes the original implementation's
well-formedness checks, in a fixed order (NN before PRED at each candidate, left to right), which
is also the tie-break order of the E-step.
"""
from __future__ import annotations

from typing import Sequence

from .text import (CAND, CC, CD, COMMA, DT, IN, NN, PRED, RB, TO, VBG, WH, can_be_noun_or_verb,
                   is_base_verb, is_numeric, is_punct, word_class)

Frame = tuple[str, tuple[str, ...]]  # (verb, argument chunks)

_CHUNK_STOPS = (PRED, IN, TO, RB, VBG, WH)


def _has_alnum(word: str) -> bool:
    return any(ch.isalnum() for ch in word)


def argument_chunk(words: Sequence[str], tags: Sequence[str], start: int) -> tuple[str | None, int]:
    """The argument chunk that starts at ``start``: ``(text or None, index after it)``.

    A chunk extends right until a PRED, preposition, TO, adverb, gerund or wh-word, but continues
    through a gerund not followed by a determiner/number, through anything after a leading
    "until", through IN/TO/RB right after IN/TO/DT/CD, through TO after a number, and through "of".
    A trailing conjunction (with a comma before it) or punctuation is dropped; a chunk left with
    no word is None. A lone adverb is a chunk of its own.
    """
    n = len(words)
    first = words[start]
    parts: list[str] = []
    if _has_alnum(first):
        parts.append(first)
        if tags[start] == RB:
            return first, start + 1
    for i in range(start + 1, n):
        tag = tags[i]
        if tag in _CHUNK_STOPS:
            prev_tag = tags[i - 1]
            if tag == VBG and (i == n - 1 or tags[i + 1] not in (DT, CD)):
                parts.append(words[i])
                continue
            if tag != PRED and first == "until":
                parts.append(words[i])
                continue
            if tag in (IN, TO, RB) and prev_tag in (IN, TO, DT, CD):
                parts.append(words[i])
                continue
            if tag == TO and (prev_tag == CD or is_numeric(words[i - 1])):
                parts.append(words[i])
                continue
            if words[i] == "of":
                parts.append(words[i])
                continue
            if prev_tag == CC or words[i - 1] == "then":
                if len(parts) <= 1:
                    return None, i
                parts.pop()  # the conjunction
                if i > 1 and is_punct(tags[i - 2]):
                    if len(parts) <= 1:
                        return None, i
                    parts.pop()  # the comma before it
                return " ".join(parts), i
            if is_punct(prev_tag):
                if len(parts) <= 1:
                    return None, i
                parts.pop()
                return " ".join(parts), i
            return (" ".join(parts) or None), i
        parts.append(words[i])
    if is_punct(tags[n - 1]):
        if len(parts) <= 1:
            return None, n
        parts.pop()
    return (" ".join(parts) or None), n


def extract_frames(words: Sequence[str], tags: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Frames of a labelled sentence: each PRED opens a frame; chunks before the first PRED belong
    to the first frame; a PRED separated from the previous PRED only by CC/RB words gives its first
    chunk to the previous frame ("chop and mix the onions" -> chop(the onions), mix())."""
    frames: list[tuple[str, list[str]]] = []
    verb: str | None = None
    args: list[str] = []
    verb_index = -1
    first_chunk = True
    i, n = 0, len(words)
    while i < n:
        if tags[i] == PRED:
            if verb is not None:
                frames.append((verb, args))
                args = []
                first_chunk = True
            verb, verb_index = words[i], i
            i += 1
            continue
        chunk, i = argument_chunk(words, tags, i)
        if chunk is None:
            continue
        give_back = False
        if first_chunk:
            first_chunk = False
            for j in range(verb_index - 1, -1, -1):
                if tags[j] == PRED:
                    give_back = True
                if tags[j] not in (CC, RB):
                    break
        (frames[-1][1] if give_back else args).append(chunk)
    frames.append((verb, args))
    return frames


# --- constraints -------------------------------------------------------------------------------

def verbs_are_coordinated(words: Sequence[str], tags: Sequence[str]) -> bool:
    """Reject a PRED separated from the previous PRED only by plain words (no CC, ":" or ";")
    unless it reads as a base verb on its own; and "PRED ," not followed by another PRED."""
    had_coordination, has_other_word = True, False
    n = len(tags)
    for i, tag in enumerate(tags):
        if tag == PRED:
            if not had_coordination and has_other_word and not is_base_verb(words[i]):
                return False
            if i < n - 2 and words[i + 1] == "," and tags[i + 2] != PRED:
                return False
            had_coordination, has_other_word = False, False
        elif tag == CC or words[i] in (":", ";"):
            had_coordination = True
        elif words[i] != ",":
            has_other_word = True
    return True


def _pred_follows(tags: Sequence[str], start: int) -> bool:
    for tag in tags[start:]:
        if tag == PRED:
            return True
        if tag == NN:
            return False
    return False


def _pred_precedes(tags: Sequence[str], start: int) -> bool:
    for j in range(start, -1, -1):
        if tags[j] == PRED:
            return True
        if tags[j] in (NN, VBG):
            return False
    return False


def _coordination_closes_list(tags: Sequence[str], start: int) -> bool:
    """Walking left from ``start``: the conjunction joins verbs only if no comma-separated list of
    words lies between it and the previous PRED/IN/RB/TO/wh-word/CC."""
    commas = 0
    for j in range(start, -1, -1):
        tag = tags[j]
        if tag in (PRED, IN, RB, TO, WH):
            return commas == 0
        if tag == CC:
            return True
        if tag == COMMA and j != start:
            commas += 1
    return commas == 0


def coordination_is_clean(tags: Sequence[str]) -> bool:
    """A conjunction before a PRED must close a clean list; one before a noun must not follow a
    PRED directly (through non-nouns)."""
    n = len(tags)
    for i in range(n - 2, -1, -1):
        if tags[i] != CC:
            continue
        if _pred_follows(tags, i + 1):
            if not _coordination_closes_list(tags, i - 1):
                return False
        elif _pred_precedes(tags, i - 1):
            return False
    return True


def pred_follows_preposition(tags: Sequence[str]) -> bool:
    return any(tags[i] == PRED and tags[i - 1] in (IN, TO, PRED) for i in range(1, len(tags)))


def _java_split_commas(text: str) -> list[str]:
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts or [text]


def _list_is_malformed(arg: str, parts: list[str]) -> bool:
    if len(parts) == 2 and " and " in arg:
        return True  # "a , and b" / "a , b and c": not a list
    if arg.startswith("and "):
        return True
    inner = [p.startswith("and ") for p in parts[1:-1]]
    return any(inner) and not all(inner)


def argument_has_noun(arg: str) -> bool:
    """An argument needs a noun-like word (WordNet noun or verb), an adverb or "through"."""
    for word in arg.split(" "):
        tag = word_class(word)
        if tag == RB or word == "through":
            return True
        if tag in (IN, TO):
            continue
        if can_be_noun_or_verb(word):
            return True
    return False


def frames_are_wellformed(frames: Sequence[tuple[str, Sequence[str]]]) -> bool:
    """No argument starting with "and" or holding a malformed "," / "and" list; in every frame but
    the last, each argument has a noun-like word and commas only inside an "and" list."""
    for _, args in frames:
        for arg in args:
            if _list_is_malformed(arg, _java_split_commas(arg)):
                return False
    for _, args in frames[:-1]:
        for arg in args:
            if not argument_has_noun(arg):
                return False
            if len(_java_split_commas(arg)) > 1 and " and " not in arg:
                return False
    return True


def valid_labellings(words: Sequence[str], tags: Sequence[str]) -> list[tuple[Frame, ...]]:
    """Frames of every well-formed labelling of the candidates (CAND tags), in enumeration order.

    The first word, when a candidate, is always PRED. Labellings giving the same frames are kept
    once (they score the same). A PRED right after IN/TO or another PRED is also pruned as it is
    placed, which keeps long sentences cheap.
    """
    candidates = [i for i, tag in enumerate(tags) if tag == CAND]
    seq = list(tags)
    found: dict[tuple[Frame, ...], None] = {}

    def leaf() -> None:
        if PRED not in seq or pred_follows_preposition(seq):
            return
        if not verbs_are_coordinated(words, seq) or not coordination_is_clean(seq):
            return
        frames = extract_frames(words, seq)
        if frames_are_wellformed(frames):
            found.setdefault(tuple((verb, tuple(args)) for verb, args in frames), None)

    def descend(k: int) -> None:
        if k == len(candidates):
            leaf()
            return
        pos = candidates[k]
        for label in ((PRED,) if pos == 0 else (NN, PRED)):
            if label == PRED and pos > 0 and seq[pos - 1] in (IN, TO, PRED):
                continue
            seq[pos] = label
            descend(k + 1)
        seq[pos] = CAND

    descend(0)
    return list(found)
