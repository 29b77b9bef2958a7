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
import re
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


#: Common English words: function words, and the commonest words of cooking videos. Text whose
#: language is left undecided (too short, or no language probable enough) still "looks English" when
#: at least :data:`ENGLISH_MIN_SHARE` of its words are among them; otherwise it is warned about (or
#: refused) as text in another language is. Romanised Hindi ("Ab pyaaz ko baarik kaat lijiye.")
#: has none of them; "Stir." is one.
ENGLISH_WORDS = frozenset("""
a about after all also an and any are as at be because been before but by can could did do does
don't down each even first for from get go going good got had has have he her here him his how i
if i'm in into is it it's its just keep know let let's like little look make me more most my next
no not now of off on once one only or other our out over put really right see she should so some
that that's the their them then there these they this those through to too two until up us very
want was we we're well were what when where which while who will with would you you're your
add bake beat blend boil bowl bread bring butter chicken chop cheese combine cook cooking cover
cream cup cups cut dice dough drain egg eggs fire flour fold fry garlic grate heat hot ingredients
knife lemon low medium melt milk minced minute minutes mix mixture oil onion onions oven pan
pepper peel place plate pot pour recipe remove rice rinse roll salt sauce season serve set side
simmer slice spoon sprinkle stir sugar taste tablespoon teaspoon toss transfer water whisk
""".split())
#: The share of an undecided text's words that must be :data:`ENGLISH_WORDS` for it to look English.
ENGLISH_MIN_SHARE = 0.25
_LATIN_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def english_share(text: str) -> tuple[float, int]:
    """The share of ``text``'s words (of its first :data:`SAMPLE_CHARS` characters) that are
    :data:`ENGLISH_WORDS`, and the number of words."""
    words = [w.lower() for w in _LATIN_WORD.findall(text[:SAMPLE_CHARS])]
    return (sum(w in ENGLISH_WORDS for w in words) / len(words) if words else 0.0), len(words)


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
        return {"expected": None, "detected": None, "confidence": None, "action": action, "english_words": None}
    text = " ".join(sentences)
    code, confidence = identify(text)
    record = {"expected": expected, "detected": code, "confidence": round(confidence, 4), "action": action,
              "english_words": None}
    if code == expected:
        return record
    if code is None:
        # Undecided: no warning for text that looks like the expected English (a short "Stir."), the
        # same warning as for a detected language for text that does not (romanised Hindi).
        if expected != "en":
            return record
        share, n_words = english_share(text)
        record["english_words"] = round(share, 4)
        if not n_words or share >= ENGLISH_MIN_SHARE:
            return record
        why = "too little text" if confidence == 0.0 else f"no language more probable than {confidence:.2f}"
        what = (f"the text's language could not be identified ({why}) and it does not "
                f"look like English ({share:.0%} of its {n_words} words are common English words, under "
                f"{ENGLISH_MIN_SHARE:.0%}): the extractors and key-clip models were trained on English cooking "
                "transcripts")
    else:
        what = (f"the text looks like {language_name(code)} (probability {confidence:.2f}), not "
                f"{language_name(expected)}: the extractors and key-clip models were trained on English cooking "
                "transcripts")
    if action == "error":
        raise InputError(path, f"{what}; translate the subtitles, or set procedures.other_language to warn to extract anyway")
    record["warning"] = f"{path}: {what}, so expect few or no key clips (procedures.other_language: error refuses such files)"
    log.warning("%s", record["warning"])
    return record
