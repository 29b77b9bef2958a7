"""The language of a user's subtitles: the extractors and models were trained on English cooking
transcripts, so text in another language gives no key clips; say so (a warning, or a refusal).

Identified with ``py3langid`` (a maintained fork of langid.py: 97 languages, its model shipped in
the wheel as numpy arrays, no pickle; chosen over langdetect and lingua by bench/language_id.py:
fastest per call, a few MB). The text of a whole file is identified at once (its first
:data:`SAMPLE_CHARS` characters); a verdict needs :data:`MIN_LETTERS` letters and a probability of
:data:`MIN_CONFIDENCE`, below which the language is left undecided (a few words say little).
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Sequence

from cookproc.core.errors import InputError

log = logging.getLogger(__name__)

OTHER_LANGUAGE_ACTIONS = ("warn", "error")
#: Characters of a file's text that are identified (the start of a long file says enough).
SAMPLE_CHARS = 20_000
#: Fewer letters than this: too little text for a verdict.
MIN_LETTERS = 20
#: The probability (py3langid, normalised) the identified language needs for a verdict.
MIN_CONFIDENCE = 0.5

#: Names of the languages users are likeliest to meet, for messages (others are shown by code).
LANGUAGE_NAMES = {
    "ar": "Arabic", "bn": "Bengali", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "fa": "Persian", "fr": "French", "he": "Hebrew", "hi": "Hindi", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "ko": "Korean", "nl": "Dutch", "pl": "Polish", "pt": "Portuguese", "ru": "Russian",
    "sv": "Swedish", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese",
    "zh": "Chinese", "zxx": "no language",
}


def language_name(code: str) -> str:
    return f"{LANGUAGE_NAMES[code]} ({code})" if code in LANGUAGE_NAMES else code


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(text: str) -> tuple[str | None, float]:
    """``(ISO 639-1 code, probability)`` of ``text``'s language; ``(None, 0.0)`` when it has too few
    letters or no language is probable enough."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < MIN_LETTERS:
        return None, 0.0
    code, confidence = _identifier().classify(sample)
    return (code, float(confidence)) if confidence >= MIN_CONFIDENCE else (None, float(confidence))


def check_language(path: str | Path, sentences: Sequence[str], *, expected: str | None = "en",
                   action: str = "warn") -> dict:
    """The language of a file's sentences against ``expected`` (None: not checked). Text in another
    language is logged and its message returned (``"warning"``), or refused (``action="error"``).
    Returns the record procedure documents carry: expected, detected (None when undecided), its
    probability, and the action."""
    if action not in OTHER_LANGUAGE_ACTIONS:
        raise ValueError(f"other_language must be one of {OTHER_LANGUAGE_ACTIONS}, got {action!r}")
    if expected is None:
        return {"expected": None, "detected": None, "confidence": None, "action": action}
    code, confidence = identify(" ".join(sentences))
    record = {"expected": expected, "detected": code, "confidence": round(confidence, 4), "action": action}
    if code is None or code == expected:
        return record
    what = (f"the text looks like {language_name(code)} (probability {confidence:.2f}), not {language_name(expected)}: "
            "the extractors and key-clip models were trained on English cooking transcripts")
    if action == "error":
        raise InputError(path, f"{what}; translate the subtitles, or set procedures.other_language to warn to extract anyway")
    record["warning"] = f"{path}: {what}, so expect few or no key clips (procedures.other_language: error refuses such files)"
    log.warning("%s", record["warning"])
    return record
