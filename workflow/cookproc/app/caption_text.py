"""Cue text cleaned: HTML entities decoded first, then markup removed (``<i>``, ``<font>``,
``<c.color>``, karaoke timestamps, ``{\\an8}``), so an encoded ``&lt;script&gt;`` is markup too;
the lines of a multi-line cue joined, whitespace collapsed; with ``drop_sound_tags``, music notes
and a bracket (``[...]`` or ``(...)``) whose whole content is a sound description
(:func:`is_sound_description`: ``[Music]``, ``[upbeat music playing]``, ``(laughs)``) are dropped,
any other bracket (``Add [about two cups] of flour``) is kept whole.

The overview of reading a subtitle file is :mod:`cookproc.app.subtitles`.
"""
from __future__ import annotations

import html
import re

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
_WORD = re.compile(r"\S+")


def text_words(text: str) -> list[str]:
    """The words of a text: its runs of non-space characters."""
    return _WORD.findall(text)


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

