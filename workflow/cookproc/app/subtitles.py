"""A user's own subtitles or transcript -> timed clips, like the benchmark's sentence clips.

The file is read into cues (:mod:`cookproc.app.cues`: ``.srt``, ``.vtt`` or a ``.txt`` transcript,
each checked strictly, their text cleaned by :mod:`cookproc.app.caption_text`); rolling captions
are recognised and their repeats removed (:mod:`cookproc.app.rolling_captions`); the cues are cut
into clips (:mod:`cookproc.app.clips`: the paper's clip times, sentence or cue segmentation).

A clip longer than ``max_sentence_chars`` characters never reaches a parser: it is cut at word
boundaries into clips under the limit with a warning naming the file, line and cue
(``long_sentences="cut"``), or refused (``"error"``). The text's language is identified
(:mod:`cookproc.app.language`): text that is not in the expected language gives a warning, or is
refused (``other_language``). :func:`read_subtitles` returns the clips with a record of all this
(``checks``), which procedure documents carry.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from cookproc.app.clips import (Clip, check_clip_spans, check_cue_order, limit_sentence_length, resolve_segmentation,
                                segment_cues)
from cookproc.app.cues import SubtitleError, read_subtitle_cues, read_transcript

log = logging.getLogger(__name__)

SUBTITLE_EXTENSIONS = ("vtt", "srt", "txt")
#: The longest a clip may span (procedures.longest_clip_s): 10 minutes. A cue that would make one
#: longer is refused naming its line: a typo in the hours, or a pause no cooking video has.
LONGEST_CLIP_S = 600.0


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
                   other_language: str = "warn", longest_clip_s: float = LONGEST_CLIP_S,
                   strict: bool = False) -> SubtitleReading:
    """Clips of a subtitle (``.srt``, ``.vtt``) or transcript (``.txt``) file, checked (module doc).
    ``strict``: every check that would warn refuses the file instead (rolling-caption repeats,
    cues out of order, long sentences, another language)."""
    from cookproc.app.language import check_language

    if strict:
        long_sentences, other_language = "error", "error"
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
    order_warnings, out_of_order = check_cue_order(cues, path, strict=strict)
    clips, rolling = segment_cues(cues, segmentation=segmentation, max_clip_s=max_clip_s, video_end_s=video_end_s,
                                  path=path, rolling_captions=rolling_captions, strict=strict)
    check_clip_spans(clips, cues, path, longest_s=longest_clip_s, video_end_s=video_end_s)
    cue_of_line = {c.line: k for k, c in enumerate(cues, 1)} if suffix != "txt" else None
    clips, warnings = limit_sentence_length(clips, path, max_chars=max_sentence_chars, action=long_sentences,
                                            cue_of_line=cue_of_line)
    n_cut = len(warnings)
    warnings[:0] = order_warnings + ([rolling.message(path)] if rolling.words_removed else [])
    found = check_language(path, [c.sentence for c in clips], expected=language, action=other_language)
    if found.get("warning"):
        warnings.append(found["warning"])
    checks = {"rolling_captions": rolling.record(),
              "cue_order": {"out_of_order": out_of_order, "longest_clip_s": longest_clip_s, "strict": strict},
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
