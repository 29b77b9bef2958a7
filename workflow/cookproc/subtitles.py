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

Cue text is cleaned: markup removed (``<i>``, ``<font>``, ``<c.color>``, karaoke timestamps,
``{\\an8}``), HTML entities decoded, the lines of a multi-line cue joined, sound tags such as
``[Music]`` and ``♪`` dropped, whitespace collapsed. Rolling captions (each cue repeating the
previous cue's last line, as YouTube's automatic captions do) are de-duplicated: the words a cue
shares with the end of the text before it are removed, and a cue left empty is dropped.

Clips follow the paper's definition (SPEC.md §1): clip i runs from its start to clip i+1's start;
the last clip ends at the end of its last cue, or at the video's end when the video is known.
``segmentation="sentence"`` re-cuts the cue stream at sentence ends (``.``, ``?``,
``!``), so a sentence spread over several cues is one clip and a cue with two sentences gives two
(times inside a cue are interpolated by character count); a clip is also closed once it spans
``max_clip_s`` seconds, for captions without punctuation. ``segmentation="cue"``: one clip per cue.
``segmentation="auto"`` (default) cuts clips the way the benchmark's were, on which the models were
trained: one sentence per clip when the file is punctuated, one cue per clip when it is not (ASR
captions), rather than merging unpunctuated cues into ``max_clip_s`` runs.
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
# Auto segmentation: a file with fewer sentence ends than one per this many words is unpunctuated
# (spoken sentences run 10-20 words; ASR captions have no sentence ends at all).
MAX_WORDS_PER_SENTENCE_END = 40

# HH:MM:SS,mmm (SRT; "." tolerated) or [HH:]MM:SS.mmm (WebVTT); hours of any length.
_TIMESTAMP = r"(?:(\d+):)?(\d{2}):(\d{2})[.,](\d{3})"
_TIMING = re.compile(rf"^\s*{_TIMESTAMP}\s*-->\s*{_TIMESTAMP}(?:\s+.*)?$")
# Plain transcript: "[01:02:03.5] text", "[02:03] text", "02:03.5<TAB>text", "1:02:03<TAB>text".
_TRANSCRIPT_TIME = r"(?:(\d+):)?(\d{1,2}):(\d{2}(?:\.\d+)?)"
_TRANSCRIPT_BRACKET = re.compile(rf"^\[\s*{_TRANSCRIPT_TIME}\s*\]\s*(.*)$")
_TRANSCRIPT_TAB = re.compile(rf"^{_TRANSCRIPT_TIME}\t(.*)$")

_TAG = re.compile(r"<[^>]*>")                 # <i>, </font>, <c.yellow>, <00:00:01.000>, <v Bob>
_ASS_OVERRIDE = re.compile(r"\{\\[^}]*\}")    # {\an8}, {\i1}
_SOUND = re.compile(r"\[[^\]]*\]|[♪♫]")       # [Music], [Applause], music notes
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_CLOSED_SENTENCE = re.compile(r"[.!?][\"')\]]*$")  # text that ends with a sentence end
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


def clean_text(text: str, *, drop_sound_tags: bool = True) -> str:
    """Cue text without markup, entities, sound tags and line breaks."""
    text = _ASS_OVERRIDE.sub("", _TAG.sub("", text))
    text = html.unescape(text)
    if drop_sound_tags:
        text = _SOUND.sub(" ", text)
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


def _seconds(hours, minutes, seconds, millis) -> float:
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000


def timing_lines(path: Path, text: str) -> list[tuple[int, float, float]]:
    """``(line, start_s, end_s)`` of every ``start --> end`` line, checked strictly."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if "-->" not in line:
            continue
        cue = len(out) + 1
        match = _TIMING.match(line)
        if not match:
            raise SubtitleError(path, f"cue {cue}: bad timing {line.strip()!r}; expected "
                                      "'HH:MM:SS,mmm --> HH:MM:SS,mmm' (SRT) or 'MM:SS.mmm --> MM:SS.mmm' (WebVTT)",
                                line=n)
        g = match.groups()
        if int(g[1]) > 59 or int(g[2]) > 59 or int(g[5]) > 59 or int(g[6]) > 59:
            raise SubtitleError(path, f"cue {cue}: minutes and seconds must be below 60 in {line.strip()!r}", line=n)
        start, end = _seconds(*g[:4]), _seconds(*g[4:])
        if end < start:
            raise SubtitleError(path, f"cue {cue}: ends ({line.split('-->')[1].split()[0]}) before it starts "
                                      f"({line.split('-->')[0].strip()})", line=n)
        out.append((n, start, end))
    return out


def _library_cues(path: Path, suffix: str) -> list[tuple[float, str]]:
    """``(start_s, raw text)`` per cue, as the subtitle library reads the file."""
    if suffix == "srt":
        import pysrt

        try:
            items = pysrt.open(str(path), encoding="utf-8-sig", error_handling=pysrt.ERROR_RAISE)
        except pysrt.Error as exc:
            # pysrt reports the offending block's text; point at the line where that block starts.
            block = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], str) else ""
            text = _read_text(path)
            at = text.find(block.strip()) if block.strip() else -1
            raise SubtitleError(path, "not a valid SubRip cue (expected a number, an 'HH:MM:SS,mmm --> "
                                      f"HH:MM:SS,mmm' line, then the text): {block.strip()[:80]!r}",
                                line=text[:at].count("\n") + 1 if at >= 0 else None) from exc
        return [(item.start.ordinal / 1000, item.text) for item in items]
    import webvtt
    from webvtt.errors import MalformedCaptionError, MalformedFileError

    try:
        captions = webvtt.read(str(path), encoding="utf-8-sig")
    except (MalformedFileError, MalformedCaptionError) as exc:
        raise SubtitleError(path, f"WebVTT parser: {exc} (a WebVTT file starts with a 'WEBVTT' line)") from exc
    return [(c.start_time.in_milliseconds() / 1000, c.raw_text) for c in captions]


def read_subtitle_cues(path: str | Path, *, drop_sound_tags: bool = True) -> list[Cue]:
    """Cues of an ``.srt`` or ``.vtt`` file, in file order, text cleaned (may be empty)."""
    path = Path(path)
    suffix = path.suffix.lower().lstrip(".")
    text = _read_text(path)
    if not text.strip():
        raise SubtitleError(path, "the file is empty")
    timings = timing_lines(path, text)
    if not timings:
        raise SubtitleError(path, "no cues found (no 'start --> end' timing line)")
    cues = _library_cues(path, suffix)
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
        start = int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
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


def _norm(word: str) -> str:
    return re.sub(r"[^\w']", "", word.lower())


def remove_rolling_repeats(cues: Sequence[Cue], *, max_gap_s: float = 1.0) -> list[Cue]:
    """Drop the words each cue repeats from the end of the text before it (rolling captions).

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
            overlap = 0
            for k in range(min(len(norm), len(history)), 0, -1):
                if norm[:k] == history[-k:]:
                    overlap = k
                    break
            if overlap:
                words, norm = words[overlap:], norm[overlap:]
        prev_end = cue.end_s if cue.end_s is not None else cue.start_s
        if not words:
            continue
        history = (history + norm)[-64:]
        out.append(Cue(cue.start_s, cue.end_s, " ".join(words), cue.line))
    return out


def _pieces(cue: Cue) -> list[tuple[float, float | None, str]]:
    """A cue split at sentence ends, each piece timed by its share of the cue's characters."""
    parts = [p for p in _SENTENCE_END.split(cue.text) if p.strip()]
    if len(parts) <= 1 or cue.end_s is None:
        return [(cue.start_s, cue.end_s, cue.text)]
    total = sum(len(p) for p in parts)
    out, done = [], 0
    for part in parts:
        start = cue.start_s + (cue.end_s - cue.start_s) * done / total
        done += len(part)
        out.append((start, cue.start_s + (cue.end_s - cue.start_s) * done / total, part.strip()))
    return out


def is_punctuated(cues: Sequence[Cue]) -> bool:
    """Whether the cues end sentences often enough (one end per MAX_WORDS_PER_SENTENCE_END words)
    for sentence clips; the rolling repeats of ASR captions count twice on both sides alike."""
    words = sum(len(_words(c.text)) for c in cues)
    ends = sum(len(_SENTENCE_END.findall(c.text)) + bool(_CLOSED_SENTENCE.search(c.text)) for c in cues)
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
            video_end_s: float | None = None, path: str | Path = "<subtitles>") -> list[Clip]:
    """Clips from cleaned cues (sorted by start time; overlapping cues are allowed); the lines of
    an untimed transcript are one clip each, in file order."""
    segmentation = resolve_segmentation(cues, segmentation)
    if any(c.start_s is None for c in cues):
        clips = [Clip(None, None, c.text, [c.line]) for c in cues if c.text]
        if not clips:
            raise SubtitleError(path, "no text left on any line after removing markup and sound tags")
        return clips
    # Stable sort: cues that overlap or come out of order are taken by start time, then file order.
    ordered = sorted((c for c in cues if c.text), key=lambda c: (c.start_s, c.line))
    ordered = remove_rolling_repeats(ordered)
    if not ordered:
        raise SubtitleError(path, "no text left in any cue after removing markup and sound tags")
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

    clips = []
    for i, (start, speech_end, text, lines) in enumerate(spans):
        if i + 1 < len(spans):
            end = spans[i + 1][0]
        else:  # the last clip: to the video's end when known, else to the end of its speech
            end = video_end_s if video_end_s is not None else speech_end
        clips.append(Clip(round(start, 3), None if end is None else round(end, 3), text, sorted(set(lines))))
    return clips


def _join(pieces) -> tuple[float, float | None, str, list[int]]:
    ends = [p[1] for p in pieces if p[1] is not None]
    return pieces[0][0], (max(ends) if ends else None), " ".join(p[2] for p in pieces), [p[3] for p in pieces]


def read_subtitle_clips(path: str | Path, *, segmentation: str = "auto", max_clip_s: float = 15.0,
               video_end_s: float | None = None, drop_sound_tags: bool = True) -> list[Clip]:
    """Clips of a subtitle (``.srt``, ``.vtt``) or transcript (``.txt``) file."""
    return read_clips_and_segmentation(path, segmentation=segmentation, max_clip_s=max_clip_s,
                                       video_end_s=video_end_s, drop_sound_tags=drop_sound_tags)[0]


def read_clips_and_segmentation(path: str | Path, *, segmentation: str = "auto", max_clip_s: float = 15.0,
                                video_end_s: float | None = None, drop_sound_tags: bool = True
                                ) -> tuple[list[Clip], str]:
    """Clips of a subtitle or transcript file, and the segmentation that cut them (never ``auto``)."""
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
    clips = segment(cues, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s, path=path)
    log.info("%s: %d cues -> %d clips (%s segmentation)", path, len(cues), len(clips), segmentation)
    return clips, segmentation
