"""Cue text cleaned: HTML entities decoded first, then markup removed: the tags of
:data:`MARKUP_TAGS` only (WebVTT's ``<c.color>``, ``<v Bob>``, ``<i>``, karaoke timestamps; SRT's
``<font color=...>``; a few HTML tags; any tag with attributes), so ``Add salt <and> pepper`` keeps
its ``<and>``. A tag's name followed by words is text too (``Add salt <i think> to the pot``,
``a<b and c>d``): only a voice (``<v Bob>``: its speaker) and a language tag (``<lang en>``) carry an
annotation that is markup (:func:`is_markup_tag`), so no word of a cue is ever dropped as a tag's. A
ruby annotation keeps its base text only (``<ruby>Mix<rt>mikkusu</rt></ruby>`` -> ``Mix``), inside a
``<ruby>`` element only: elsewhere ``<rt>`` is a tag and its words stay; ASS
overrides ``{\\an8}``. Invisible characters are taken out of words (:data:`INVISIBLE`: a zero-width
space becomes a space, the others, bidi marks, embeddings and isolates among them, are removed), so
``Stir\u200b the sauce`` reads ``Stir the sauce`` and nothing invisible reaches the arguments or the
Markdown; bidi overrides, which make text display otherwise than it reads, are refused with their
line before this (:mod:`cookproc.app.cues`) and removed here when an entity hid them. The lines of
a multi-line cue are joined, whitespace collapsed; with ``drop_sound_tags``, music notes and a
bracket (``[...]`` or ``(...)``) whose whole content is a sound description
(:func:`is_sound_description`: ``[Music]``, ``[upbeat music playing]``, ``(laughs)``) are dropped,
any other bracket (``Add [about two cups] of flour``) is kept whole.

The overview of reading a subtitle file is :mod:`cookproc.app.subtitles`.
"""
from __future__ import annotations

import html
import re

#: The tags removed as markup (names, any case; with their classes, attributes and closing tag):
#: WebVTT's (c, i, b, u, v, lang, ruby, rt), those SRT players render (font, s) and the HTML tags
#: converted subtitles carry (br, span, em, strong, sub, sup, p, div, strike, tt, rp, script, style).
#: A closed set: any other word in angle brackets (``<and>``, ``<stew>``) is text, unless the tag has
#: HTML attributes (``<img src=x>``), which no one writes as text; and one of these names followed
#: by words (``<i think>``) is text too, but for a voice's speaker and a language tag (:func:`is_markup_tag`).
MARKUP_TAGS = frozenset({"c", "i", "b", "u", "v", "lang", "ruby", "rt", "rp", "font", "s", "br", "span", "em",
                         "strong", "sub", "sup", "p", "div", "strike", "tt", "script", "style"})
# A tag: its name, then WebVTT classes (.yellow), then an annotation or attributes (" Bob",
# ' color="#fff"'); or a karaoke timestamp <00:00:01.000>. "x < 5" and "<3" are text.
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)(?:\.[\w-]+)*(\s[^<>]*)?/?>|<\d{1,2}(?::\d{2}){1,2}\.\d{3}>")
# An HTML attribute (src=x, href="..."): a tag that has one is markup whatever its name (<img ...>).
_ATTRIBUTE = re.compile(r"\s[A-Za-z_:][\w:.-]*\s*=")
# A language tag (BCP 47 in its common shapes: en, en-GB, zh-Hant-TW), the annotation of <lang ...>.
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*")
# A ruby element (its base text and annotations), up to its end tag or the end of the cue text, and
# inside it a ruby annotation (the reading shown above the base text) or its fallback parentheses:
# dropped with their content. WebVTT lets </rt> be left out before </ruby>.
_RUBY = re.compile(r"(<ruby(?:\.[\w-]+)*(\s[^<>]*)?>)(.*?)(</ruby\s*>|$)", re.IGNORECASE | re.DOTALL)
_RUBY_TEXT = re.compile(r"<(rt|rp)(?:\.[\w-]+)*(\s[^<>]*)?>.*?(?:</\1\s*>|$)", re.IGNORECASE | re.DOTALL)
#: Invisible characters taken out of words: the zero-width space (U+200B, a word break: it becomes
#: a space) and those removed: zero-width (non-)joiners and the word joiner, the byte-order mark,
#: the soft hyphen, the Mongolian vowel separator, the invisible math operators, bidi marks
#: (LRM, RLM, ALM), embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), and the
#: invisible tag characters (U+E0000-U+E007F).
INVISIBLE = re.compile("[\u200b-\u200f\u00ad\u061c\u180e\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                       "\U000e0000-\U000e007f]")
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


def _annotation(rest: str | None) -> str:
    """What follows a tag's name and classes, without the self-closing slash: "" for a bare tag."""
    return (rest or "").strip().removesuffix("/").strip()


def is_markup_tag(name: str, rest: str | None, closing: bool = False, attributed: frozenset = frozenset()) -> bool:
    """Whether a tag (its ``name``, then ``rest``: what follows the name and classes) is markup.
    A bare tag (``<i>``, ``<c.yellow>``, ``</b>``, ``<br/>``) is when its name is one of
    :data:`MARKUP_TAGS` or of the ``attributed`` tags (the names of tags with attributes elsewhere in
    the text, whose closing tags go with them); a tag with HTML attributes (``<img src=x>``) always
    is. A tag whose name is followed by words is text (``<i think>``, ``<b and c>``), unless it is a
    voice, whose annotation is its speaker (``<v Roger Bingham>``), or a language tag (``<lang en>``)."""
    name, annotation = name.lower(), _annotation(rest)
    if not annotation:
        return name in MARKUP_TAGS or name in attributed
    if closing:
        return False
    if _ATTRIBUTE.match(" " + annotation):
        return True
    return name == "v" or (name == "lang" and _LANGUAGE_TAG.fullmatch(annotation) is not None)


def _is_markup(match: re.Match, attributed: frozenset = frozenset()) -> bool:
    """Whether a match of :data:`_TAG` is markup (a karaoke timestamp always is)."""
    if not match.group(1):
        return True
    return is_markup_tag(match.group(1), match.group(2), match.group(0).startswith("</"), attributed)


def remove_markup(text: str) -> str:
    """``text`` without its markup tags (:func:`is_markup_tag`): those of :data:`MARKUP_TAGS`, karaoke
    timestamps, and tags with HTML attributes with their closing tags (``<a href=x>``, ``</a>``);
    other text in angle brackets stays, a tag's name followed by words (``<i think>``) included."""
    attributed = frozenset(m.group(1).lower() for m in _TAG.finditer(text)
                           if m.group(1) and _ATTRIBUTE.match(" " + _annotation(m.group(2))))

    def replace(match: re.Match) -> str:
        if not _is_markup(match, attributed):
            return match.group(0)
        # A line break: the words on either side stay apart.
        return " " if (match.group(1) or "").lower() == "br" else ""

    return _TAG.sub(replace, text)


def remove_ruby_text(text: str) -> str:
    """``text`` without the annotations of its ruby elements (``<rt>``, ``<rp>`` and their content,
    inside ``<ruby>``); the base text and the ruby tags stay (markup, for :func:`remove_markup`). An
    ``<rt>`` outside a ruby element, or a tag followed by words, is left as it is."""
    def annotations(match: re.Match) -> str:
        if not is_markup_tag("ruby", match.group(2)):
            return match.group(1) + remove_ruby_text(match.group(3)) + match.group(4)
        inner = _RUBY_TEXT.sub(lambda m: "" if is_markup_tag(m.group(1), m.group(2)) else m.group(0), match.group(3))
        return match.group(1) + inner + match.group(4)

    return _RUBY.sub(annotations, text)


def remove_invisible(text: str) -> str:
    """``text`` without :data:`INVISIBLE` characters (a zero-width space becomes a space)."""
    return INVISIBLE.sub(lambda m: " " if m.group(0) == "\u200b" else "", text)


def clean_text(text: str, *, drop_sound_tags: bool = True) -> str:
    """Cue text without entities, markup, invisible characters, sound descriptions and line breaks."""
    # Entities first: an encoded tag (&lt;i&gt;) is markup as well, never text that turns into a tag later.
    text = remove_invisible(html.unescape(text))
    text = _ASS_OVERRIDE.sub("", remove_markup(remove_ruby_text(text)))
    if drop_sound_tags:
        text = _BRACKET.sub(_drop_sound_description, _MUSIC_NOTES.sub(" ", text))
    # A leading "- " marks a speaker change in multi-line cues; it is not part of the sentence.
    text = " ".join(re.sub(r"^\s*-\s+", "", line) for line in text.splitlines())
    return _SPACE.sub(" ", text).strip()

