"""Subtitle and transcript files -> cues, each checked strictly and its text cleaned
(:mod:`cookproc.app.caption_text`).

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
file read as UTF-8), no bidirectional override (U+202D, U+202E: text that displays otherwise than
it reads) and no time beyond :data:`MAX_TIME_S` (100 hours), each refused naming the file, line and
cue. A timing line is the first or second line of a cue block (after the SRT index or the WebVTT
cue identifier), so ``-->`` further down is cue text; a WebVTT NOTE, STYLE or REGION block is no
cue, whatever it holds.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cookproc.app.caption_text import clean_text
from cookproc.core.errors import InputError

#: No cue or transcript line may start or end later than this (100 hours): a longer time is a typo
#: or a broken file, never a cooking video.
MAX_TIME_S = 100 * 3600

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
# Bidirectional overrides: they make text display otherwise than it reads ("tlas" shown as "salt"),
# so a word would be extracted as one thing and seen as another. Refused; the other invisible
# characters (zero-width, bidi marks, embeddings and isolates) are removed by clean_text.
_BIDI_OVERRIDE = re.compile("[\u202d\u202e]")


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


def format_time(seconds: float | None) -> str:
    """``HH:MM:SS.s`` (``--`` for an unknown time)."""
    if seconds is None:
        return "--"
    tenths = int(round(seconds * 10))
    hours, rest = divmod(tenths, 36000)
    minutes, rest = divmod(rest, 600)
    return f"{hours:02d}:{minutes:02d}:{rest // 10:02d}.{rest % 10}"



def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise SubtitleError(path, f"not UTF-8 text (byte {exc.start}); save the file as UTF-8", line=line) from exc


def _check_control_characters(path: Path, text: str, *, cues: bool) -> None:
    """Refuse a control character (NUL, ...) or a bidirectional override, naming its line and
    (``cues``: a subtitle file) the cue it is in."""
    control, override = _CONTROL.search(text), _BIDI_OVERRIDE.search(text)
    match = min((m for m in (control, override) if m is not None), key=lambda m: m.start(), default=None)
    if match is None:
        return
    line_start = text.rfind("\n", 0, match.start()) + 1
    line = text.count("\n", 0, line_start) + 1
    # The cue: the timing lines before this line (the text before it has no control character).
    cue = len(timing_lines(path, text[:line_start])) if cues else 0
    char = match.group(0)
    if match is override:
        line_end = text.find("\n", match.start())
        shown = text[match.start() + 1:line_end if line_end >= 0 else len(text)].split("\u202c")[0].strip()[:40]
        shows = f"{shown!r} displays as {shown[::-1]!r}" if char == "\u202e" else \
            f"{shown!r} displays otherwise than it reads"
        what = (f"a {'right-to-left' if char == chr(0x202E) else 'left-to-right'} override (U+{ord(char):04X}) in "
                f"the text, so {shows}; remove it")
    else:
        hint = " (NUL bytes usually mean a UTF-16 file: save it as UTF-8)" if char == "\x00" else ""
        what = f"control character U+{ord(char):04X} in the text; remove it{hint}"
    raise SubtitleError(path, (f"cue {cue}: " if cue else "") + what, line=line)


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


# A WebVTT block that is no cue: a comment (NOTE), a style sheet (STYLE) or a region definition
# (REGION), each up to the next blank line. WebVTT forbids "-->" in them, but a commented-out cue
# ("NOTE 00:01.000 --> 00:02.000 old") is what people write: it stays a comment, never a cue.
_VTT_NOT_A_CUE = re.compile(r"^(?:NOTE|STYLE|REGION)(?:[ \t]|$)")


def timing_lines(path: Path, text: str) -> list[tuple[int, float, float]]:
    """``(line, start_s, end_s)`` of every cue's ``start --> end`` line, checked strictly (in a
    ``.vtt`` file, NOTE, STYLE and REGION blocks are skipped)."""
    out = []
    position, first = 0, ""
    vtt = Path(path).suffix.lower() == ".vtt"
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            position = 0
            continue
        if position == 0:
            first = line
        position += 1
        if vtt and _VTT_NOT_A_CUE.match(first):
            continue
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

