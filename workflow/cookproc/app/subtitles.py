"""A user's own subtitles or transcript -> timed clips, like the benchmark's sentence clips.

Three input formats, chosen by the file's extension:

* ``.srt`` (SubRip), parsed with ``pysrt``;
* ``.vtt`` (WebVTT, e.g. YouTube captions), parsed with ``webvtt-py``;
* ``.txt`` (a plain transcript): one clip per line, the line starting with its time, either
  ``[HH:MM:SS] sentence`` / ``[MM:SS.s] sentence`` or ``MM:SS.s<TAB>sentence`` /
  ``HH:MM:SS<TAB>sentence``. Blank lines and lines starting with ``#`` are skipped; times must not
  decrease. A transcript with no time on any line (the benchmark's ``youcook2/transcript/*.txt``:
  one sentence a line) is read in order, its clips untimed (times None); a time on some lines but
  not others is an error.

Both subtitle libraries are lenient: pysrt reads ``00:00:0x,000`` as 0 s and webvtt-py silently
drops such a cue. So every timing line (``start --> end``) is first checked here with a strict
pattern, and the libraries' cues are matched one to one with those lines (their number and start
times must agree); any error names the file, the line and the cue.

Every file is checked first: no control characters (a NUL byte, ...; the usual sign of a UTF-16
file read as UTF-8) and no time beyond :data:`MAX_TIME_S` (100 hours), each refused naming the
file, line and cue. A timing line is the first or second line of a cue block (after the SRT index
or the WebVTT cue identifier), so ``-->`` further down is cue text.

Cue text is cleaned: HTML entities decoded first, then markup removed (``<i>``, ``<font>``,
``<c.color>``, karaoke timestamps, ``{\\an8}``), so an encoded ``&lt;script&gt;`` is markup too;
the lines of a multi-line cue joined, whitespace collapsed; with ``drop_sound_tags``, music notes
and a bracket (``[...]`` or ``(...)``) whose whole content is a sound description
(:func:`is_sound_description`: ``[Music]``, ``[upbeat music playing]``, ``(laughs)``) are dropped,
any other bracket (``Add [about two cups] of flour``) is kept whole.

Rolling captions (each cue repeating the previous cue's last line, as YouTube's automatic captions
do) are recognised per file (:func:`rolling_evidence`): when at least
:data:`ROLLING_MIN_FRACTION` of the consecutive cue pairs (and at least :data:`ROLLING_MIN_PAIRS`)
have the next cue start within :data:`ROLLING_MAX_GAP_S` of the previous one's end and begin with
:data:`ROLLING_MIN_WORDS` or more words the previous cue ends with, the file is rolling and the
repeats are removed (:func:`remove_rolling_repeats`), logged and recorded with the number of words
removed; otherwise (``rolling_captions="auto"``) nothing is removed: an ordinary file keeps every
word, repeated sentences included.

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
(``long_sentences="cut"``), or refused (``"error"``). The text's language is identified
(:mod:`cookproc.app.language`): text that is not in the expected language gives a warning, or is
refused (``other_language``). :func:`read_subtitles` returns the clips with a record of all this
(``checks``), which procedure documents carry.
"""
from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from cookproc.core.errors import InputError

log = logging.getLogger(__name__)

SUBTITLE_EXTENSIONS = ("vtt", "srt", "txt")
SEGMENTATIONS = ("auto", "sentence", "cue")
ROLLING_CAPTIONS = ("auto", "remove", "keep")
LONG_SENTENCES = ("cut", "error")
# Auto segmentation: a file with fewer sentence ends than one per this many words is unpunctuated
# (spoken sentences run 10-20 words; ASR captions have no sentence ends at all).
MAX_WORDS_PER_SENTENCE_END = 40
#: No cue or transcript line may start or end later than this (100 hours): a longer time is a typo
#: or a broken file, never a cooking video.
MAX_TIME_S = 100 * 3600
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

# HH:MM:SS,mmm (SRT; "." tolerated) or [HH:]MM:SS.mmm (WebVTT); hours of any length (bounded below).
_TIMESTAMP = r"(?:(\d+):)?(\d{2}):(\d{2})[.,](\d{3})"
_TIMING = re.compile(rf"^\s*{_TIMESTAMP}\s*-->\s*{_TIMESTAMP}(?:\s+.*)?$")
# Plain transcript: "[01:02:03.5] text", "[02:03] text", "02:03.5<TAB>text", "1:02:03<TAB>text".
_TRANSCRIPT_TIME = r"(?:(\d+):)?(\d{1,2}):(\d{2}(?:\.\d+)?)"
_TRANSCRIPT_BRACKET = re.compile(rf"^\[\s*{_TRANSCRIPT_TIME}\s*\]\s*(.*)$")
_TRANSCRIPT_TAB = re.compile(rf"^{_TRANSCRIPT_TIME}\t(.*)$")
# Control characters (C0 but tab and line ends, DEL, C1) and the line separators that would make
# Python's line numbers disagree with the subtitle libraries'.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")

# Markup, matched after entities are decoded: <i>, </font>, <c.yellow>, <v Bob>, <00:00:01.000>.
# A "<" followed by a space or a digit that is not a timestamp ("x < 5", "<3") is text.
_TAG = re.compile(r"</?[A-Za-z][\w.-]*(?:\s[^<>]*)?/?>|<\d{1,2}(?::\d{2}){1,2}\.\d{3}>")
_ASS_OVERRIDE = re.compile(r"\{\\[^}]*\}")    # {\an8}, {\i1}
_BRACKET = re.compile(r"\[([^\[\]]*)\]|\(([^()]*)\)")
_MUSIC_NOTES = re.compile(r"[♪♫♬]")
_SPACE = re.compile(r"\s+")
#: Words of a bracket that describes a sound, as captioners write them ([Music], [Applause],
#: (laughs), [Foreign] for speech in another language): a bracket is dropped only when all its words
#: are these or :data:`SOUND_MODIFIERS` and one at least is one of these.
SOUND_WORDS = frozenset({
    "music", "applause", "laughter", "laughs", "laughing", "laugh", "chuckles", "chuckling", "giggles",
    "cheering", "cheers", "clapping", "claps", "silence", "noise", "noises", "inaudible", "indistinct",
    "crosstalk", "chatter", "chattering", "sighs", "sighing", "coughs", "coughing", "sniffs", "gasps",
    "whistling", "humming", "hums", "singing", "sizzling", "sizzles", "beeping", "beeps", "beep", "ding",
    "dings", "chime", "chimes", "bell", "bells", "buzzing", "whooshing", "whoosh", "foreign", "sound", "sounds",
    "audio", "static", "blank_audio", "no_speech", "instrumental",
})
#: Words that may stand beside :data:`SOUND_WORDS` in a sound description ([upbeat music playing]).
SOUND_MODIFIERS = frozenset({
    "upbeat", "soft", "gentle", "light", "loud", "quiet", "dramatic", "background", "playing", "plays", "continues",
    "continuing", "fades", "fading", "stops", "ends", "intro", "outro", "theme", "cheerful", "calm", "mellow",
    "bright", "happy", "lively", "relaxing", "energetic", "suspenseful", "tense", "playful", "whimsical", "jazzy",
    "ambient", "electronic", "acoustic", "piano", "guitar", "audience", "crowd", "and", "in", "out", "the", "no",
    "effects", "effect", "of", "speech", "&",
})
# Sentence ends: those followed by a space (Latin ., ?, !, Arabic question mark and full stop,
# Devanagari danda and double danda, Ethiopic, Myanmar and Armenian full stops) and those of scripts
# written without spaces (CJK full stop, full-width ! ? and full stop, half-width full stop).
_SPACED_ENDS = ".!?\u061f\u06d4\u0964\u0965\u1362\u104b\u0589"
_UNSPACED_ENDS = "\u3002\uff01\uff1f\uff0e\uff61"
_CLOSERS = "\"')\\]\u201d\u2019\u00bb\u300d\u300f\uff09"  # closing quotes and brackets after an end
_SENTENCE_BREAK = re.compile(rf"[{_SPACED_ENDS}][{_CLOSERS}]*(?=\s)|[{_UNSPACED_ENDS}][{_CLOSERS}]*")
_CLOSED_SENTENCE = re.compile(rf"[{_SPACED_ENDS}{_UNSPACED_ENDS}][{_CLOSERS}]*$")  # text that ends a sentence
_WORD = re.compile(r"\S+")


class SubtitleError(InputError):
    """A subtitle or transcript file that cannot be read into clips."""


@dataclass(frozen=True)
class Cue:
    """One subtitle cue (or transcript line) after cleaning; ``line`` is its timing line (1-based).
    ``start_s`` is None for a line of an untimed transcript."""

    start_s: float | None
    end_s: float | None
    text: str
    line: int


@dataclass
class Clip:
    """One clip: its times (paper's definition; None in an untimed transcript), its sentence and
    the source lines it came from."""

    start_s: float | None
    end_s: float | None
    sentence: str
    lines: list[int] = field(default_factory=list)


def format_time(seconds: float | None) -> str:
    """``HH:MM:SS.s`` (``--`` for an unknown time)."""
    if seconds is None:
        return "--"
    tenths = int(round(seconds * 10))
    hours, rest = divmod(tenths, 36000)
    minutes, rest = divmod(rest, 600)
    return f"{hours:02d}:{minutes:02d}:{rest // 10:02d}.{rest % 10}"


def is_sound_description(text: str) -> bool:
    """Whether a bracket's content describes a sound (``Music``, ``upbeat music playing``,
    ``laughs``) rather than saying something (``about two cups``): every word one of
    :data:`SOUND_WORDS` or :data:`SOUND_MODIFIERS`, one at least a sound word."""
    words = [w.strip(".,!?;:-♪♫♬*_\"'") for w in text.lower().split()]
    words = [w for w in words if w]
    return (bool(words) and all(w in SOUND_WORDS or w in SOUND_MODIFIERS for w in words)
            and any(w in SOUND_WORDS for w in words))


def _drop_sound_description(match: re.Match) -> str:
    content = match.group(1) if match.group(1) is not None else match.group(2)
    return " " if is_sound_description(content) else match.group(0)


def clean_text(text: str, *, drop_sound_tags: bool = True) -> str:
    """Cue text without entities, markup, sound descriptions and line breaks."""
    # Entities first: an encoded tag (&lt;i&gt;) is markup as well, never text that turns into a tag later.
    text = html.unescape(text)
    text = _ASS_OVERRIDE.sub("", _TAG.sub("", text))
    if drop_sound_tags:
        text = _BRACKET.sub(_drop_sound_description, _MUSIC_NOTES.sub(" ", text))
    # A leading "- " marks a speaker change in multi-line cues; it is not part of the sentence.
    text = " ".join(re.sub(r"^\s*-\s+", "", line) for line in text.splitlines())
    return _SPACE.sub(" ", text).strip()


# ----------------------------------------------------------------------------- reading files
def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise SubtitleError(path, f"not UTF-8 text (byte {exc.start}); save the file as UTF-8", line=line) from exc


def _check_control_characters(path: Path, text: str, *, cues: bool) -> None:
    """Refuse a control character (NUL, ...), naming its line and (``cues``: a subtitle file) the
    cue it is in."""
    match = _CONTROL.search(text)
    if match is None:
        return
    line_start = text.rfind("\n", 0, match.start()) + 1
    line = text.count("\n", 0, line_start) + 1
    # The cue: the timing lines before this line (the text before it has no control character).
    cue = len(timing_lines(path, text[:line_start])) if cues else 0
    char = match.group(0)
    hint = " (NUL bytes usually mean a UTF-16 file: save it as UTF-8)" if char == "\x00" else ""
    raise SubtitleError(path, (f"cue {cue}: " if cue else "") + f"control character U+{ord(char):04X} in the text; "
                              f"remove it{hint}", line=line)


def _seconds(hours, minutes, seconds, millis) -> float:
    # The hours are bounded by their digits first: int() of thousands of digits is slow (or refused).
    if hours and len(hours.lstrip("0")) > 6:
        return float("inf")
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000


def _is_timing_line(line: str, block_position: int, block_first: str) -> bool:
    """Whether a line holding ``-->`` is a cue's timing line: the first line of a cue block, or the
    second after an SRT index or a WebVTT cue identifier (which cannot hold ``-->``); further down,
    only a complete timing line (a missing blank line before it) is one. Other ``-->`` are cue text."""
    if block_position == 0 or (block_position == 1 and "-->" not in block_first):
        return True
    return _TIMING.match(line) is not None


def timing_lines(path: Path, text: str) -> list[tuple[int, float, float]]:
    """``(line, start_s, end_s)`` of every cue's ``start --> end`` line, checked strictly."""
    out = []
    position, first = 0, ""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            position = 0
            continue
        if position == 0:
            first = line
        position += 1
        if "-->" not in line or not _is_timing_line(line, position - 1, first):
            continue
        cue = len(out) + 1
        match = _TIMING.match(line)
        if not match:
            raise SubtitleError(path, f"cue {cue}: bad timing {line.strip()[:80]!r}; expected "
                                      "'HH:MM:SS,mmm --> HH:MM:SS,mmm' (SRT) or 'MM:SS.mmm --> MM:SS.mmm' (WebVTT)",
                                line=n)
        g = match.groups()
        if int(g[1]) > 59 or int(g[2]) > 59 or int(g[5]) > 59 or int(g[6]) > 59:
            raise SubtitleError(path, f"cue {cue}: minutes and seconds must be below 60 in {line.strip()[:80]!r}",
                                line=n)
        start, end = _seconds(*g[:4]), _seconds(*g[4:])
        if max(start, end) > MAX_TIME_S:
            raise SubtitleError(path, f"cue {cue}: a time beyond {MAX_TIME_S // 3600} hours in "
                                      f"{line.strip()[:80]!r}; no video is that long (a typo in the hours?)", line=n)
        if end < start:
            raise SubtitleError(path, f"cue {cue}: ends ({line.split('-->')[1].split()[0]}) before it starts "
                                      f"({line.split('-->')[0].strip()})", line=n)
        out.append((n, start, end))
    return out


# A character no subtitle holds, standing in for "-->" in WebVTT cue text while webvtt-py reads it
# (it takes every line with "-->" for a timing line and drops the cue's text).
_ARROW_STAND_IN = "\U000f0000"


def _library_cues(path: Path, suffix: str, text: str, timings) -> list[tuple[float, str]]:
    """``(start_s, raw text)`` per cue, as the subtitle library reads the file."""
    if suffix == "srt":
        import pysrt

        try:
            items = pysrt.open(str(path), encoding="utf-8-sig", error_handling=pysrt.ERROR_RAISE)
        except pysrt.Error as exc:
            # pysrt reports the offending block's text; point at the line where that block starts.
            block = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], str) else ""
            at = text.find(block.strip()) if block.strip() else -1
            raise SubtitleError(path, "not a valid SubRip cue (expected a number, an 'HH:MM:SS,mmm --> "
                                      f"HH:MM:SS,mmm' line, then the text): {block.strip()[:80]!r}",
                                line=text[:at].count("\n") + 1 if at >= 0 else None) from exc
        return [(item.start.ordinal / 1000, item.text) for item in items]
    import webvtt
    from webvtt.errors import MalformedCaptionError, MalformedFileError

    timing_numbers = {line for line, _, _ in timings}
    lines = text.splitlines()
    if _ARROW_STAND_IN in text:
        raise SubtitleError(path, f"the file holds the private character U+{ord(_ARROW_STAND_IN):X}; remove it")
    for i, line in enumerate(lines):
        if "-->" in line and i + 1 not in timing_numbers:
            lines[i] = line.replace("-->", _ARROW_STAND_IN)
    try:
        captions = webvtt.from_string("\n".join(lines))
    except (MalformedFileError, MalformedCaptionError) as exc:
        raise SubtitleError(path, f"WebVTT parser: {exc} (a WebVTT file starts with a 'WEBVTT' line)") from exc
    return [(c.start_time.in_milliseconds() / 1000, c.raw_text.replace(_ARROW_STAND_IN, "-->")) for c in captions]


def read_subtitle_cues(path: str | Path, *, drop_sound_tags: bool = True) -> list[Cue]:
    """Cues of an ``.srt`` or ``.vtt`` file, in file order, text cleaned (may be empty)."""
    path = Path(path)
    suffix = path.suffix.lower().lstrip(".")
    text = _read_text(path)
    if not text.strip():
        raise SubtitleError(path, "the file is empty")
    _check_control_characters(path, text, cues=True)
    timings = timing_lines(path, text)
    if not timings:
        raise SubtitleError(path, "no cues found (no 'start --> end' timing line)")
    cues = _library_cues(path, suffix, text, timings)
    if len(cues) != len(timings):
        raise SubtitleError(path, f"{len(timings)} timing lines but the {suffix.upper()} parser read {len(cues)} "
                                  "cues; check the blank lines between cues near the first timing line whose cue "
                                  "is missing", line=_first_unmatched(timings, cues))
    out = []
    for k, ((line, start, end), (lib_start, raw)) in enumerate(zip(timings, cues), 1):
        if abs(lib_start - start) > 0.0015:
            raise SubtitleError(path, f"cue {k}: the parser read start {lib_start:.3f} s, the timing line says "
                                      f"{start:.3f} s; the cue blocks are malformed", line=line)
        out.append(Cue(start, end, clean_text(raw, drop_sound_tags=drop_sound_tags), line))
    return out


def _first_unmatched(timings, cues) -> int:
    for (line, start, _), (lib_start, _) in zip(timings, cues):
        if abs(lib_start - start) > 0.0015:
            return line
    return timings[min(len(cues), len(timings) - 1)][0]


def read_transcript(path: str | Path, *, drop_sound_tags: bool = True) -> list[Cue]:
    """Lines of a plain transcript (see the module doc): timed (end times unknown, None) when its
    first line has a time, then every line must; untimed (start and end None) when it has none."""
    path = Path(path)
    text = _read_text(path)
    _check_control_characters(path, text, cues=False)
    cues: list[Cue] = []
    timed = None  # decided by the first line with text
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _TRANSCRIPT_BRACKET.match(line.strip()) or _TRANSCRIPT_TAB.match(line.lstrip(" "))
        if timed is None:
            timed = match is not None
        if not timed:
            if match:
                raise SubtitleError(path, f"this line has a time but line {cues[0].line} has none; a transcript has "
                                          "'[HH:MM:SS] sentence' lines throughout, or no times at all", line=n)
            cues.append(Cue(None, None, clean_text(line, drop_sound_tags=drop_sound_tags), n))
            continue
        if not match:
            raise SubtitleError(path, f"expected '[HH:MM:SS] sentence' or 'MM:SS.s<TAB>sentence' (as on line "
                                      f"{cues[0].line}), got {line[:60]!r}", line=n)
        hours, minutes, seconds, sentence = match.groups()
        if int(minutes) > 59 or float(seconds) >= 60:
            raise SubtitleError(path, f"bad time in {line[:30]!r}: minutes and seconds must be below 60", line=n)
        # The hours are bounded by their digits first: int() of thousands of digits is slow (or refused).
        start = float("inf") if hours and len(hours.lstrip("0")) > 6 else \
            int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
        if start > MAX_TIME_S:
            raise SubtitleError(path, f"a time beyond {MAX_TIME_S // 3600} hours in {line[:30]!r}; no video is that "
                                      "long (a typo in the hours?)", line=n)
        if cues and start < cues[-1].start_s:
            raise SubtitleError(path, f"time {format_time(start)} is before the previous line's "
                                      f"{format_time(cues[-1].start_s)} (line {cues[-1].line}); times must not decrease",
                                line=n)
        cues.append(Cue(start, None, clean_text(sentence, drop_sound_tags=drop_sound_tags), n))
    if not cues:
        raise SubtitleError(path, "no timed lines found, nor untimed sentences: only blank lines and # comments"
                            if text.strip() else "the file is empty")
    return cues


# ----------------------------------------------------------------------------- cues -> clips
def _words(text: str) -> list[str]:
    return _WORD.findall(text)


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
        words = _words(cue.text)
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
    """Count the consecutive cue pairs (time order, cues with text) whose next cue starts within
    :data:`ROLLING_MAX_GAP_S` of the previous cue's end and begins with at least
    :data:`ROLLING_MIN_WORDS` words the previous cue ends with: rolling captions repeat in nearly
    every pair, an ordinary file in the odd one (a sentence said twice)."""
    pairs = repeating = 0
    prev_norm, prev_end = None, None
    for cue in cues:
        words = _words(cue.text)
        norm = [_norm(w) for w in words] if len(words) <= 2 * _MAX_OVERLAP_WORDS else \
            [_norm(w) for w in words[:_MAX_OVERLAP_WORDS] + words[-_MAX_OVERLAP_WORDS:]]
        if prev_norm is not None:
            pairs += 1
            longest = min(len(norm), len(prev_norm))
            if (longest >= ROLLING_MIN_WORDS and cue.start_s <= prev_end + ROLLING_MAX_GAP_S
                    and _overlap(prev_norm, norm[:_MAX_OVERLAP_WORDS], longest) >= ROLLING_MIN_WORDS):
                repeating += 1
        prev_norm = norm[-_MAX_OVERLAP_WORDS:]
        prev_end = cue.end_s if cue.end_s is not None else cue.start_s
    return RollingEvidence(pairs, repeating)


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
    words = sum(len(_words(c.text)) for c in cues)
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


@dataclass(frozen=True)
class RollingCaptions:
    """What :func:`segment_cues` did about rolling captions: the evidence, whether it removed the
    repeats, and how many words that removed."""

    mode: str
    evidence: RollingEvidence
    applied: bool
    words_removed: int

    def record(self) -> dict:
        return {"mode": self.mode, "cue_pairs": self.evidence.cue_pairs,
                "repeating_pairs": self.evidence.repeating_pairs, "fraction": round(self.evidence.fraction, 4),
                "applied": self.applied, "words_removed": self.words_removed}


def segment(cues: Sequence[Cue], *, segmentation: str = "sentence", max_clip_s: float = 15.0,
            video_end_s: float | None = None, path: str | Path = "<subtitles>",
            rolling_captions: str = "auto") -> list[Clip]:
    """Clips from cleaned cues (:func:`segment_cues` without its record of rolling captions)."""
    return segment_cues(cues, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s,
                        path=path, rolling_captions=rolling_captions)[0]


def segment_cues(cues: Sequence[Cue], *, segmentation: str = "sentence", max_clip_s: float = 15.0,
                 video_end_s: float | None = None, path: str | Path = "<subtitles>",
                 rolling_captions: str = "auto") -> tuple[list[Clip], RollingCaptions]:
    """Clips from cleaned cues (sorted by start time; overlapping cues are allowed); the lines of
    an untimed transcript are one clip each, in file order. ``rolling_captions``: ``auto`` removes
    rolling repeats when :func:`rolling_evidence` finds the file rolling, ``remove`` always, ``keep``
    never."""
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
    words_before = sum(len(_words(c.text)) for c in ordered)
    # The end of the speech: the latest cue end (a repeat removed below may hold it).
    last_end = max((c.end_s for c in ordered if c.end_s is not None), default=None)
    if apply:
        ordered = remove_rolling_repeats(ordered)
    words_removed = words_before - sum(len(_words(c.text)) for c in ordered)
    rolling = RollingCaptions(rolling_captions, evidence, apply, words_removed)
    if apply:
        log.info("%s: rolling captions (%d of %d cue pairs repeat the previous cue's last words): removed %d "
                 "repeated words", path, evidence.repeating_pairs, evidence.cue_pairs, rolling.words_removed)
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
    """``clip`` cut into clips of at most ``max_chars`` characters, at spaces (a word longer than the
    limit is cut inside), times interpolated by characters; every character but the spaces cut at
    is kept."""
    text = clip.sentence
    pieces, start = [], 0
    while start < len(text):
        stop = start + max_chars
        if stop < len(text):
            space = text.rfind(" ", start + 1, stop + 1)
            stop = space if space > start else stop
        pieces.append((start, text[start:stop]))
        start = stop
        while start < len(text) and text[start] == " ":
            start += 1
    if clip.start_s is None:
        return [Clip(None, None, piece, list(clip.lines)) for _, piece in pieces]
    end = clip.end_s if clip.end_s is not None else clip.start_s
    times = [round(clip.start_s + (end - clip.start_s) * offset / len(text), 3) for offset, _ in pieces]
    return [Clip(t, times[i + 1] if i + 1 < len(times) else clip.end_s, piece, list(clip.lines))
            for i, (t, (_, piece)) in enumerate(zip(times, pieces))]


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
        what = (f"{cue}a sentence of {len(clip.sentence):,} characters, over the limit of {max_chars:,} "
                "(user.max_sentence_chars)")
        if action == "error":
            raise SubtitleError(path, f"{what}; split it into sentences, or set user.long_sentences to cut", line=line)
        pieces = cut_long_sentence(clip, max_chars)
        warnings.append(f"{path}, line {line}: {what}: cut into {len(pieces)} clips")
        log.warning("%s", warnings[-1])
        out += pieces
    return out, warnings


@dataclass
class SubtitleReading:
    """A file read into clips: the clips, the segmentation that cut them (never ``auto``) and a
    record of the checks and changes (``checks``: rolling captions, long sentences, language,
    warnings) that procedure documents carry as their ``input``."""

    clips: list[Clip]
    segmentation: str
    checks: dict


def read_subtitles(path: str | Path, *, segmentation: str = "auto", max_clip_s: float = 15.0,
                   video_end_s: float | None = None, drop_sound_tags: bool = True, rolling_captions: str = "auto",
                   max_sentence_chars: int = 2000, long_sentences: str = "cut", language: str | None = "en",
                   other_language: str = "warn") -> SubtitleReading:
    """Clips of a subtitle (``.srt``, ``.vtt``) or transcript (``.txt``) file, checked (module doc)."""
    from cookproc.app.language import check_language

    path = Path(path)
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in SUBTITLE_EXTENSIONS:
        raise SubtitleError(path, f"unknown subtitle format {path.suffix!r}; expected one of "
                                  + ", ".join(f".{e}" for e in SUBTITLE_EXTENSIONS))
    if suffix == "txt":
        cues = read_transcript(path, drop_sound_tags=drop_sound_tags)
        # A transcript line is one clip: the user already split the sentences.
        segmentation = "cue"
    else:
        cues = read_subtitle_cues(path, drop_sound_tags=drop_sound_tags)
    segmentation = resolve_segmentation(cues, segmentation)
    clips, rolling = segment_cues(cues, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s,
                                  path=path, rolling_captions=rolling_captions)
    cue_of_line = {c.line: k for k, c in enumerate(cues, 1)} if suffix != "txt" else None
    clips, warnings = limit_sentence_length(clips, path, max_chars=max_sentence_chars, action=long_sentences,
                                            cue_of_line=cue_of_line)
    n_cut = len(warnings)
    if rolling.applied:
        warnings.insert(0, f"{path}: rolling captions ({rolling.evidence.repeating_pairs} of "
                           f"{rolling.evidence.cue_pairs} cue pairs repeat the previous cue's last words): "
                           f"removed {rolling.words_removed} repeated words")
    found = check_language(path, [c.sentence for c in clips], expected=language, action=other_language)
    if found.get("warning"):
        warnings.append(found["warning"])
    checks = {"rolling_captions": rolling.record(),
              "long_sentences": {"max_sentence_chars": max_sentence_chars, "action": long_sentences,
                                 "cut": n_cut},
              "language": {k: v for k, v in found.items() if k != "warning"},
              "warnings": warnings}
    log.info("%s: %d cues -> %d clips (%s segmentation)", path, len(cues), len(clips), segmentation)
    return SubtitleReading(clips, segmentation, checks)


def read_subtitle_clips(path: str | Path, *, segmentation: str = "auto", max_clip_s: float = 15.0,
                        video_end_s: float | None = None, drop_sound_tags: bool = True, **checks) -> list[Clip]:
    """Clips of a subtitle (``.srt``, ``.vtt``) or transcript (``.txt``) file (:func:`read_subtitles`)."""
    return read_subtitles(path, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s,
                          drop_sound_tags=drop_sound_tags, **checks).clips


def read_clips_and_segmentation(path: str | Path, *, segmentation: str = "auto", max_clip_s: float = 15.0,
                                video_end_s: float | None = None, drop_sound_tags: bool = True, **checks
                                ) -> tuple[list[Clip], str]:
    """Clips of a subtitle or transcript file, and the segmentation that cut them (never ``auto``)."""
    reading = read_subtitles(path, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s,
                             drop_sound_tags=drop_sound_tags, **checks)
    return reading.clips, reading.segmentation
