"""Cleaned cues -> timed clips, like the benchmark's sentence clips.

Clips follow the paper's definition (SPEC.md §1): clip i runs from its start to clip i+1's start;
the last clip ends at the end of the last cue, or at the video's end when the video is known.
``segmentation="sentence"`` re-cuts the cue stream at sentence ends (``.``, ``?``, ``!`` and those
of other scripts: ``。！？`` without a following space, Arabic ``؟`` ``۔``, Devanagari ``।``
``॥``, ...), so a sentence spread over several cues is one clip and a cue with two sentences gives
two (times inside a cue are interpolated by character count); a clip is also closed once it spans
``max_clip_s`` seconds, for captions without punctuation. ``segmentation="cue"``: one clip per cue.
``segmentation="auto"`` (default) cuts clips the way the benchmark's were, on which the models were
trained: one sentence per clip when the file is punctuated, one cue per clip when it is not (ASR
captions), rather than merging unpunctuated cues into ``max_clip_s`` runs.

A clip longer than ``max_sentence_chars`` characters never reaches a parser: it is cut at word
boundaries into clips under the limit with a warning naming the file, line and cue
(``long_sentences="cut"``), or refused (``"error"``) (:func:`limit_sentence_length`).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from cookproc.app.caption_text import text_words
from cookproc.app.cues import Cue, SubtitleError, format_time
from cookproc.app.rolling_captions import (ROLLING_CAPTIONS, RollingCaptions, RollingEvidence, remove_rolling_repeats,
                                           rolling_evidence)
from cookproc.core.logs import format_duration

log = logging.getLogger(__name__)

SEGMENTATIONS = ("auto", "sentence", "cue")
LONG_SENTENCES = ("cut", "error")
# Auto segmentation: a file with fewer sentence ends than one per this many words is unpunctuated
# (spoken sentences run 10-20 words; ASR captions have no sentence ends at all).
MAX_WORDS_PER_SENTENCE_END = 40
# Sentence ends: those followed by a space (Latin ., ?, !, Arabic question mark and full stop,
# Devanagari danda and double danda, Ethiopic, Myanmar and Armenian full stops) and those of scripts
# written without spaces (CJK full stop, full-width ! ? and full stop, half-width full stop).
_SPACED_ENDS = ".!?\u061f\u06d4\u0964\u0965\u1362\u104b\u0589"
_UNSPACED_ENDS = "\u3002\uff01\uff1f\uff0e\uff61"
_CLOSERS = "\"')\\]\u201d\u2019\u00bb\u300d\u300f\uff09"  # closing quotes and brackets after an end
_SENTENCE_BREAK = re.compile(rf"[{_SPACED_ENDS}][{_CLOSERS}]*(?=\s)|[{_UNSPACED_ENDS}][{_CLOSERS}]*")
_CLOSED_SENTENCE = re.compile(rf"[{_SPACED_ENDS}{_UNSPACED_ENDS}][{_CLOSERS}]*$")  # text that ends a sentence


@dataclass
class Clip:
    """One clip: its times (paper's definition; None in an untimed transcript), its sentence and
    the source lines it came from."""

    start_s: float | None
    end_s: float | None
    sentence: str
    lines: list[int] = field(default_factory=list)


def split_sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end (any script's; closing quotes and brackets stay with
    their sentence), each piece stripped; nothing else is removed."""
    pieces, start = [], 0
    for match in _SENTENCE_BREAK.finditer(text):
        pieces.append(text[start:match.end()])
        start = match.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def _pieces(cue: Cue) -> list[tuple[float, float | None, str]]:
    """A cue split at sentence ends, each piece timed by its share of the cue's characters."""
    parts = split_sentences(cue.text)
    if len(parts) <= 1 or cue.end_s is None:
        return [(cue.start_s, cue.end_s, cue.text)]
    total = sum(len(p) for p in parts)
    out, done = [], 0
    for part in parts:
        start = cue.start_s + (cue.end_s - cue.start_s) * done / total
        done += len(part)
        out.append((start, cue.start_s + (cue.end_s - cue.start_s) * done / total, part))
    return out


def is_punctuated(cues: Sequence[Cue]) -> bool:
    """Whether the cues end sentences often enough (one end per MAX_WORDS_PER_SENTENCE_END words)
    for sentence clips; the rolling repeats of ASR captions count twice on both sides alike."""
    words = sum(len(text_words(c.text)) for c in cues)
    ends = sum(1 for c in cues for piece in split_sentences(c.text) if _CLOSED_SENTENCE.search(piece))
    return ends > 0 and words <= MAX_WORDS_PER_SENTENCE_END * ends


def resolve_segmentation(cues: Sequence[Cue], segmentation: str) -> str:
    """The segmentation :func:`segment` applies to ``cues``: ``auto`` becomes ``sentence`` for
    punctuated text and ``cue`` otherwise; the lines of an untimed transcript are ``cue`` always."""
    if segmentation not in SEGMENTATIONS:
        raise ValueError(f"segmentation must be one of {SEGMENTATIONS}, got {segmentation!r}")
    if any(c.start_s is None for c in cues):
        return "cue"
    if segmentation == "auto":
        return "sentence" if is_punctuated([c for c in cues if c.text]) else "cue"
    return segmentation


def segment(cues: Sequence[Cue], *, segmentation: str = "sentence", max_clip_s: float = 15.0,
            video_end_s: float | None = None, path: str | Path = "<subtitles>",
            rolling_captions: str = "auto") -> list[Clip]:
    """Clips from cleaned cues (:func:`segment_cues` without its record of rolling captions)."""
    return segment_cues(cues, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s,
                        path=path, rolling_captions=rolling_captions)[0]


def cue_label(cues: Sequence[Cue], k: int) -> str:
    """``cue N `` of the k-th cue (0-based) of a subtitle file, ``the line `` of a transcript's."""
    return "the line " if cues[k].end_s is None else f"cue {k + 1} "


def check_cue_order(cues: Sequence[Cue], path: str | Path, *, strict: bool = False) -> tuple[list[str], int]:
    """Cues (in file order) that start before the cue above them: taken in time order with one
    warning naming the first and counting them all, or (``strict``) refused naming its line.
    Returns the warnings (none, or that one) and the number of such cues."""
    late = [k for k in range(1, len(cues)) if cues[k].start_s is not None and cues[k - 1].start_s is not None
            and cues[k].start_s < cues[k - 1].start_s]
    if not late:
        return [], 0
    k = late[0]
    what = (f"{cue_label(cues, k)}starts at {format_time(cues[k].start_s)}, before {cue_label(cues, k - 1)}"
            f"(line {cues[k - 1].line}) at {format_time(cues[k - 1].start_s)}")
    if strict:
        raise SubtitleError(path, f"{what}: cues out of order (strict refuses them): put the cues in time order, "
                                  "or check the hours of the cue above", line=cues[k].line)
    others = f"; {len(late) - 1} more cues start before the one above them" if len(late) > 1 else ""
    warning = f"{path}, line {cues[k].line}: {what}{others}: the cues are taken in time order (check their times)"
    log.warning("%s", warning)
    return [warning], len(late)


def check_clip_spans(clips: Sequence[Clip], cues: Sequence[Cue], path: str | Path, *, longest_s: float,
                     video_end_s: float | None = None) -> None:
    """Refuse a cue that would make a clip span more than ``longest_s`` seconds (a clip runs to the
    next one's start; the last to the end of the speech): a typo in the hours (``10:00:08`` in a
    20-second file) or a pause no cooking video has, named by its line. The last clip, when it
    ends at the video's end, is the video's business, not a cue's."""
    number = {c.line: k for k, c in enumerate(cues)}
    for i, clip in enumerate(clips):
        if clip.start_s is None or clip.end_s is None or clip.end_s - clip.start_s <= longest_s:
            continue
        last = i + 1 == len(clips)
        if last and video_end_s is not None:
            continue
        span = format_duration(clip.end_s - clip.start_s)
        limit = f"over the limit of {format_duration(longest_s)} (procedures.longest_clip_s)"
        if not last:
            k = number[clips[i + 1].lines[0]]
            raise SubtitleError(path, f"{cue_label(cues, k)}starts at {format_time(cues[k].start_s)}, {span} after the "
                                      f"clip before it (line {clip.lines[0]}, {format_time(clip.start_s)}), which would "
                                      f"make a clip of {span}, {limit}: a typo in the hours?", line=cues[k].line)
        k = max(range(len(cues)), key=lambda j: -1.0 if cues[j].end_s is None else cues[j].end_s)
        raise SubtitleError(path, f"{cue_label(cues, k)}ends at {format_time(cues[k].end_s)}, which would make the "
                                  f"last clip (from {format_time(clip.start_s)}) {span} long, {limit}: a typo in the "
                                  "hours?", line=cues[k].line)


def segment_cues(cues: Sequence[Cue], *, segmentation: str = "sentence", max_clip_s: float = 15.0,
                 video_end_s: float | None = None, path: str | Path = "<subtitles>",
                 rolling_captions: str = "auto", strict: bool = False) -> tuple[list[Clip], RollingCaptions]:
    """Clips from cleaned cues (sorted by start time; overlapping cues are allowed); the lines of
    an untimed transcript are one clip each, in file order. ``rolling_captions``: ``auto`` removes
    rolling repeats when :func:`rolling_evidence` finds the file rolling (``strict``: refuses the
    file instead), ``remove`` always, ``keep`` never; a removal is logged as a warning with its
    counts."""
    if rolling_captions not in ROLLING_CAPTIONS:
        raise ValueError(f"rolling_captions must be one of {ROLLING_CAPTIONS}, got {rolling_captions!r}")
    segmentation = resolve_segmentation(cues, segmentation)
    if any(c.start_s is None for c in cues):
        clips = [Clip(None, None, c.text, [c.line]) for c in cues if c.text]
        if not clips:
            raise SubtitleError(path, "no text left on any line after removing markup and sound tags")
        return clips, RollingCaptions(rolling_captions, RollingEvidence(0, 0), False, 0)
    # Stable sort: cues that overlap or come out of order are taken by start time, then file order.
    ordered = sorted((c for c in cues if c.text), key=lambda c: (c.start_s, c.line))
    if not ordered:
        raise SubtitleError(path, "no text left in any cue after removing markup and sound tags")
    evidence = rolling_evidence(ordered)
    apply = rolling_captions == "remove" or (rolling_captions == "auto" and evidence.rolling)
    before = {c.line: len(text_words(c.text)) for c in ordered}
    # The end of the speech: the latest cue end (a repeat removed below may hold it).
    last_end = max((c.end_s for c in ordered if c.end_s is not None), default=None)
    if apply:
        kept = remove_rolling_repeats(ordered)
        after = {c.line: len(text_words(c.text)) for c in kept}
        changed = [line for line in before if after.get(line, 0) < before[line]]
        rolling = RollingCaptions(rolling_captions, evidence, True, sum(before.values()) - sum(after.values()),
                                  len(changed), sum(1 for line in changed if line not in after))
        if rolling.words_removed and strict and rolling_captions == "auto":
            raise SubtitleError(path, f"{rolling.message(path).split(': ', 1)[1].replace('removed', 'would remove')}; "
                                      "strict refuses to change the text: set procedures.rolling_captions to keep or "
                                      "remove", line=changed[0])
        if rolling.words_removed:
            log.warning("%s", rolling.message(path))
        ordered = kept
    else:
        rolling = RollingCaptions(rolling_captions, evidence, False, 0)
    if video_end_s is not None:
        late = [c for c in ordered if c.start_s >= video_end_s]
        if late:
            raise SubtitleError(path, f"cue starts at {format_time(late[0].start_s)}, after the video's end "
                                      f"({format_time(video_end_s)}); is it the right video?", line=late[0].line)

    spans: list[tuple[float, float | None, str, list[int]]] = []  # start, speech end, text, lines
    if segmentation == "cue":
        spans = [(c.start_s, c.end_s, c.text, [c.line]) for c in ordered]
    else:
        current: list[tuple[float, float | None, str, int]] = []
        for cue in ordered:
            for start, end, text in _pieces(cue):
                if current and start - current[0][0] >= max_clip_s:
                    spans.append(_join(current))
                    current = []
                current.append((start, end, text, cue.line))
                if _CLOSED_SENTENCE.search(text):
                    spans.append(_join(current))
                    current = []
        if current:
            spans.append(_join(current))

    # A sentence's start inside a cue is interpolated, so with overlapping cues it can fall after the
    # next cue's start: clips start in order all the same (each no earlier than the one before).
    for i in range(1, len(spans)):
        if spans[i][0] < spans[i - 1][0]:
            spans[i] = (spans[i - 1][0], *spans[i][1:])
    clips = []
    for i, (start, speech_end, text, lines) in enumerate(spans):
        if i + 1 < len(spans):
            end = spans[i + 1][0]
        elif video_end_s is not None:  # the last clip: to the video's end when known,
            end = video_end_s
        else:  # else to the end of the speech
            end = max((e for e in (speech_end, last_end) if e is not None), default=None)
        clips.append(Clip(round(start, 3), None if end is None else round(end, 3), text, sorted(set(lines))))
    return clips, rolling


def _join(pieces) -> tuple[float, float | None, str, list[int]]:
    ends = [p[1] for p in pieces if p[1] is not None]
    return pieces[0][0], (max(ends) if ends else None), " ".join(p[2] for p in pieces), [p[3] for p in pieces]


def cut_long_sentence(clip: Clip, max_chars: int) -> list[Clip]:
    """``clip`` cut into clips of at most ``max_chars`` characters: at its sentence ends first, one
    sentence a clip (a long transcript line holds many), then a sentence still over the limit at
    spaces (a word longer than the limit is cut inside); times interpolated by characters; every
    character but the spaces cut at is kept."""
    return _cut_pieces(clip, max_chars)[0]


def _cut_pieces(clip: Clip, max_chars: int) -> tuple[list[Clip], str]:
    """:func:`cut_long_sentence` and how it cut (for the warning)."""
    text = clip.sentence
    pieces, start, inside, sentences = [], 0, 0, 0
    sentence_ends = [m.end() for m in _SENTENCE_BREAK.finditer(text)] + [len(text)]
    for end in sentence_ends:
        while start < end and text[start] == " ":
            start += 1
        if start >= end:
            continue
        sentences += 1
        inside += end - start > max_chars
        while start < end:
            stop = start + max_chars
            if stop < end:
                space = text.rfind(" ", start + 1, stop + 1)
                stop = space if space > start else stop
            else:
                stop = end
            pieces.append((start, text[start:stop].rstrip(" ")))
            start = stop
            while start < end and text[start] == " ":
                start += 1
    if sentences == 1:
        how = f"cut at spaces into {len(pieces):,} clips (it has no sentence end)"
    elif not inside:
        how = f"cut into its {sentences:,} sentences, one clip each"
    else:
        how = (f"cut into its {sentences:,} sentences, and {inside:,} of them still over the limit at spaces: "
               f"{len(pieces):,} clips")
    if clip.start_s is None:
        return [Clip(None, None, piece, list(clip.lines)) for _, piece in pieces], how
    end = clip.end_s if clip.end_s is not None else clip.start_s
    times = [round(clip.start_s + (end - clip.start_s) * offset / len(text), 3) for offset, _ in pieces]
    return [Clip(t, times[i + 1] if i + 1 < len(times) else clip.end_s, piece, list(clip.lines))
            for i, (t, (_, piece)) in enumerate(zip(times, pieces))], how


def limit_sentence_length(clips: Sequence[Clip], path: str | Path, *, max_chars: int, action: str,
                          cue_of_line: dict[int, int] | None = None) -> tuple[list[Clip], list[str]]:
    """Clips no longer than ``max_chars`` characters, for the parsers: a longer one is cut
    (:func:`cut_long_sentence`, ``action="cut"``, with a warning naming the file, line and cue) or
    refused (``"error"``). Returns the clips and the warnings."""
    if action not in LONG_SENTENCES:
        raise ValueError(f"long_sentences must be one of {LONG_SENTENCES}, got {action!r}")
    if max_chars < 1:
        raise ValueError(f"max_sentence_chars must be at least 1, got {max_chars}")
    out, warnings = [], []
    for clip in clips:
        if len(clip.sentence) <= max_chars:
            out.append(clip)
            continue
        line = clip.lines[0]
        cue = f"cue {cue_of_line[line]}: " if cue_of_line and line in cue_of_line else ""
        what = (f"{cue}{'a sentence' if cue else 'a line'} of {len(clip.sentence):,} characters, over the limit of "
                f"{max_chars:,} (procedures.max_sentence_chars)")
        if action == "error":
            raise SubtitleError(path, f"{what}; split it into sentences, or set procedures.long_sentences to cut", line=line)
        pieces, how = _cut_pieces(clip, max_chars)
        warnings.append(f"{path}, line {line}: {what}: {how}")
        log.warning("%s", warnings[-1])
        out += pieces
    return out, warnings

