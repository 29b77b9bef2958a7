"""SRL parses -> the paper's SRL baselines (key clips for Table 4, tuples for Table 5).

``with_heuristics`` reproduces upstream's ``srl_evaluator.py`` + ``utils.py`` step by step:
1. role filter (``filter_arguments``): keep a chunk iff its role is ``V``, or it contains ``ARG``
   and is not ``ARG0``, not an ``R-`` reference and not one of ``EXCLUDED_ROLES``;
2. a frame left with at most one chunk is dropped;
3. lexicon filter (``filter_by_vocab``): walk the frame's chunks in order; at the first ``V`` chunk
   whose ``WordNetLemmatizer().lemmatize(text, 'v')`` is in the lexicon, replace its text by the
   lemma and keep the frame; frames without such a ``V`` are dropped;
4. verbs = the text of every ``V`` chunk of the kept frames; arguments = every kept chunk whose
   role starts with ``ARG`` (so ``C-ARG1`` counts for step 2 but is not output); key clip iff a
   frame is kept.
``without_heuristics``: every frame's ``V`` is a verb, every chunk whose role starts with ``ARG``
an argument, and a clip is key iff it has a predicate. The verb is the V chunk's WordNet verb
lemma by default (``verb_form="lemma"``), the raw text with ``verb_form="text"``: upstream's code
for this row is not published, and on our spaCy parses the lemma reproduces the paper's verbs
exact P/R/F1 (19.2/55.7/28.6 vs 19.4/54.7/28.6) where the raw text does not (16.3/48.0/24.3).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from cookproc.srl.parses import Chunk

#: Modifier roles upstream's filter drops (its ``excluded_types``; ARGM-PNC covers EWT's ARGM-PRP,
#: which the training data maps to ARGM-PNC).
EXCLUDED_ROLES = frozenset({"ARGM-CAU", "ARGM-DIS", "ARGM-MOD", "ARGM-NEG", "ARGM-EXT", "ARGM-PNC", "ARGM-REC"})


def keep_role(role: str) -> bool:
    """Upstream's role filter for one chunk."""
    if role == "V":
        return True
    return role != "ARG0" and "ARG" in role and "R-" not in role and role not in EXCLUDED_ROLES


def filter_roles(frame: Sequence[Chunk]) -> list[Chunk] | None:
    kept = [c for c in frame if keep_role(c.role)]
    return kept if len(kept) > 1 else None


def filter_lexicon(frame: Sequence[Chunk], lexicon: Mapping | frozenset | set, lemma) -> list[Chunk] | None:
    for i, chunk in enumerate(frame):
        if chunk.role == "V":
            lem = lemma(chunk.text)
            if lem in lexicon:
                out = list(frame)
                out[i] = Chunk(chunk.role, lem, chunk.start, chunk.end, chunk.score)
                return out
    return None


def verbs_and_args(parses: Iterable[Sequence[Chunk]]) -> tuple[list[str], list[str]]:
    verbs, args = [], []
    for frame in parses:
        verbs.extend(c.text for c in frame if c.role == "V")
        args.extend(c.text for c in frame if c.role.startswith("ARG"))
    return verbs, args


def with_heuristics(parses: Sequence[Sequence[Chunk]], lexicon, lemma=None) -> tuple[bool, list[str], list[str]]:
    """(is_key, verbs, args) of one clip under upstream's heuristics."""
    if lemma is None:
        from cookproc.data.wordnet import verb_lemma as lemma
    kept = []
    for frame in parses:
        filtered = filter_roles(frame)
        if filtered is None:
            continue
        filtered = filter_lexicon(filtered, lexicon, lemma)
        if filtered is not None:
            kept.append(filtered)
    verbs, args = verbs_and_args(kept)
    return bool(kept), verbs, args


VERB_FORMS = ("lemma", "text")


def without_heuristics(parses: Sequence[Sequence[Chunk]], *, verb_form: str = "lemma",
                       lemma=None) -> tuple[bool, list[str], list[str]]:
    if verb_form not in VERB_FORMS:
        raise ValueError(f"unknown verb form {verb_form!r}; expected one of {VERB_FORMS}")
    verbs, args = verbs_and_args(parses)
    if verb_form == "lemma":
        if lemma is None:
            from cookproc.data.wordnet import verb_lemma as lemma
        verbs = [lemma(v) for v in verbs]
    return bool(parses), verbs, args


def system_rows(system: str, clips: Sequence[tuple[str, int]], parses: Mapping[tuple[str, int], list],
                *, heuristics: bool, lexicon=frozenset(), verb_form: str = "lemma") -> tuple[list[dict], list[dict]]:
    """KEYCLIPS rows and TUPLES rows, one per clip in ``clips`` (clips without parses: no predicate)."""
    keyclips, tuples = [], []
    for video_id, clip_idx in clips:
        parse = parses.get((video_id, clip_idx), [])
        if heuristics:
            key, verbs, args = with_heuristics(parse, lexicon)
        else:
            key, verbs, args = without_heuristics(parse, verb_form=verb_form)
        keyclips.append({"system": system, "video_id": video_id, "clip_idx": int(clip_idx), "is_key": key,
                         "score": None, "fold": None})
        tuples.append({"system": system, "video_id": video_id, "clip_idx": int(clip_idx), "verbs": verbs,
                       "args": args})
    return keyclips, tuples


def read_lexicon_lines(path) -> frozenset[str]:
    """Upstream's ``read_vocab``: every line stripped (one word a line; a blank line gives "", as upstream's)."""
    with open(path, encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle)
