"""Rolling captions (each cue repeating the previous cue's last line, as YouTube's automatic captions
and broadcast roll-up captions do) are recognised per file by a stated test (:func:`rolling_evidence`):
a consecutive cue pair *rolls* when the next cue starts within :data:`ROLLING_MAX_GAP_S` of the
previous one's end, begins with :data:`ROLLING_MIN_WORDS` or more words the previous cue ends with,
and the two cues are not the same words (a cue repeated whole is a sentence said twice, or a
duplicated cue: ordinary subtitles have those, rolling ones add words in every new cue). A file is
rolling when at least :data:`ROLLING_MIN_PAIRS` pairs, and at least :data:`ROLLING_MIN_FRACTION` of
all its consecutive pairs, roll. Only then (``rolling_captions="auto"``) are the repeats removed
(:func:`remove_rolling_repeats`), and the removal is reported as a warning (stderr, the log, the
document) with the words and cues it took; ``strict`` refuses the file instead. An ordinary file
keeps every word, repeated sentences included.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from cookproc.app.caption_text import text_words
from cookproc.app.cues import Cue

ROLLING_CAPTIONS = ("auto", "remove", "keep")
#: Rolling captions (:func:`rolling_evidence`): a cue pair repeats when the next cue starts within
#: ROLLING_MAX_GAP_S of the previous one's end and begins with at least ROLLING_MIN_WORDS words the
#: previous cue ends with; a file is rolling when at least ROLLING_MIN_PAIRS pairs, and at least
#: ROLLING_MIN_FRACTION of all its consecutive pairs, repeat (YouTube's automatic captions: nearly
#: all; an ordinary file: the odd repeated sentence).
ROLLING_MAX_GAP_S = 1.0
ROLLING_MIN_WORDS = 3
ROLLING_MIN_PAIRS = 3
ROLLING_MIN_FRACTION = 0.5
# Rolling overlaps are a caption line (under 20 words); comparing more is wasted time on long cues.
_MAX_OVERLAP_WORDS = 64

_NOT_WORD = re.compile(r"[^\w']")


def _norm(word: str) -> str:
    return _NOT_WORD.sub("", word.lower())


def remove_rolling_repeats(cues: Sequence[Cue], *, max_gap_s: float = ROLLING_MAX_GAP_S) -> list[Cue]:
    """Drop the words each cue repeats from the end of the text before it (rolling captions; applied
    only to a file that :func:`rolling_evidence` finds rolling, unless asked).

    Only cues that start within ``max_gap_s`` of the previous cue's end are compared (rolling
    captions follow each other without a gap); the overlap must be a whole suffix of the previous
    text and a whole prefix of this one. Cues left without words are dropped.
    """
    out: list[Cue] = []
    history: list[str] = []  # normalised words of the recent kept text
    prev_end = None
    for cue in cues:
        words = text_words(cue.text)
        norm = [_norm(w) for w in words]
        if prev_end is not None and cue.start_s <= prev_end + max_gap_s and history:
            overlap = _overlap(history, norm, min(len(norm), len(history)))
            if overlap:
                words, norm = words[overlap:], norm[overlap:]
        prev_end = cue.end_s if cue.end_s is not None else cue.start_s
        if not words:
            continue
        history = (history + norm[-_MAX_OVERLAP_WORDS:])[-_MAX_OVERLAP_WORDS:]
        out.append(Cue(cue.start_s, cue.end_s, " ".join(words), cue.line))
    return out


def _overlap(before: Sequence[str], after: Sequence[str], longest: int) -> int:
    """The most words (up to ``longest``, at most :data:`_MAX_OVERLAP_WORDS`) that ``after`` begins
    with and ``before`` ends with; 0 when none."""
    for k in range(min(longest, _MAX_OVERLAP_WORDS), 0, -1):
        if list(after[:k]) == list(before[-k:]):
            return k
    return 0


@dataclass(frozen=True)
class RollingEvidence:
    """How much a file's cues look like rolling captions (:func:`rolling_evidence`)."""

    cue_pairs: int  # consecutive pairs of cues with text, in time order
    repeating_pairs: int  # of them, those whose next cue begins with the previous cue's last words

    @property
    def fraction(self) -> float:
        return self.repeating_pairs / self.cue_pairs if self.cue_pairs else 0.0

    @property
    def rolling(self) -> bool:
        return self.repeating_pairs >= ROLLING_MIN_PAIRS and self.fraction >= ROLLING_MIN_FRACTION


def rolling_evidence(cues: Sequence[Cue]) -> RollingEvidence:
    """Count the consecutive cue pairs (time order, cues with text) that roll (module doc): the next
    cue starts within :data:`ROLLING_MAX_GAP_S` of the previous cue's end, begins with at least
    :data:`ROLLING_MIN_WORDS` words the previous cue ends with, and is not the previous cue's words
    again. Rolling captions roll in nearly every pair; an ordinary file in the odd one, and a
    sentence said twice (two cues of the same words) never counts."""
    pairs = repeating = 0
    prev_norm, prev_all, prev_end = None, None, None
    for cue in cues:
        words = text_words(cue.text)
        norm = [_norm(w) for w in words] if len(words) <= 2 * _MAX_OVERLAP_WORDS else \
            [_norm(w) for w in words[:_MAX_OVERLAP_WORDS] + words[-_MAX_OVERLAP_WORDS:]]
        every = (len(words), norm)
        if prev_norm is not None:
            pairs += 1
            longest = min(len(norm), len(prev_norm))
            if (longest >= ROLLING_MIN_WORDS and cue.start_s <= prev_end + ROLLING_MAX_GAP_S and every != prev_all
                    and _overlap(prev_norm, norm[:_MAX_OVERLAP_WORDS], longest) >= ROLLING_MIN_WORDS):
                repeating += 1
        prev_norm, prev_all = norm[-_MAX_OVERLAP_WORDS:], every
        prev_end = cue.end_s if cue.end_s is not None else cue.start_s
    return RollingEvidence(pairs, repeating)



@dataclass(frozen=True)
class RollingCaptions:
    """What :func:`segment_cues` did about rolling captions: the evidence, whether it removed the
    repeats, and how many words that removed."""

    mode: str
    evidence: RollingEvidence
    applied: bool
    words_removed: int
    cues_changed: int = 0  # cues that lost words
    cues_dropped: int = 0  # of them, those left without a word

    def record(self) -> dict:
        return {"mode": self.mode, "cue_pairs": self.evidence.cue_pairs,
                "repeating_pairs": self.evidence.repeating_pairs, "fraction": round(self.evidence.fraction, 4),
                "applied": self.applied, "words_removed": self.words_removed, "cues_changed": self.cues_changed,
                "cues_dropped": self.cues_dropped}

    def message(self, path) -> str:
        """The warning that reports a removal, with its counts."""
        why = (f"rolling captions ({self.evidence.repeating_pairs} of {self.evidence.cue_pairs} cue pairs repeat "
               "the previous cue's last words)" if self.mode == "auto" else "procedures.rolling_captions: remove")
        return (f"{path}: {why}: removed {self.words_removed} repeated words from {self.cues_changed} cues "
                f"({self.cues_dropped} of them left empty and dropped)")


