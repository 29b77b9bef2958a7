"""A dependency-parse SRL backend on spaCy: no training, fast, and a floor for the tagger.

Each predicate's dependents become chunks (their projective subtree span) with a PropBank role
chosen from the dependency label, the preposition and the word: subjects ARG0 (passive ones
ARG1), objects and clausal complements ARG1, datives and predicative complements ARG2, verb
particles ARGM-PRT, negation ARGM-NEG, modals ARGM-MOD, prepositional phrases by their
preposition (place/direction/time/manner/purpose), adverbs ARGM-TMP/ARGM-DIS/ARGM-MNR by word.
Non-modal auxiliaries, punctuation, conjunctions and conjoined clauses are not arguments.
"""
from __future__ import annotations

from typing import Sequence

from cookproc.srl import syntax
from cookproc.srl.parses import Chunk

SUBJECT = {"nsubj": "ARG0", "csubj": "ARG0", "expl": "ARG0", "nsubjpass": "ARG1", "csubjpass": "ARG1",
           "agent": "ARG0"}
OBJECT = {"dobj": "ARG1", "obj": "ARG1", "ccomp": "ARG1", "xcomp": "ARG1", "dative": "ARG2",
          "attr": "ARG2", "acomp": "ARG2", "oprd": "ARG2", "prt": "ARGM-PRT", "neg": "ARGM-NEG"}
PREPOSITION = {
    **{p: "ARGM-LOC" for p in ("in", "on", "at", "inside", "over", "under", "onto", "into", "within",
                               "beside", "near", "across", "around", "through", "between", "above", "below",
                               "underneath", "along", "behind", "outside", "throughout")},
    **{p: "ARGM-DIR" for p in ("to", "from", "toward", "towards", "out", "off", "up", "down", "away")},
    **{p: "ARGM-TMP" for p in ("for", "until", "till", "after", "before", "during", "since", "by")},
    **{p: "ARGM-MNR" for p in ("with", "without", "like", "as", "using")},
    **{p: "ARGM-CAU" for p in ("because", "due")},
}
TEMPORAL_ADVERBS = {"then", "now", "first", "next", "later", "again", "already", "soon", "finally", "once",
                    "today", "tonight", "always", "never", "sometimes", "often", "still", "yet", "afterwards",
                    "meanwhile", "immediately", "overnight", "currently", "ever", "before", "after"}
DISCOURSE_ADVERBS = {"so", "well", "also", "too", "just", "really", "actually", "basically", "okay", "ok",
                     "alright", "anyway", "however", "obviously", "though", "even", "only", "right"}


def _role(parsed: syntax.ParsedSentence, dep: int, children: dict[int, list[int]]) -> str | None:
    label, word, tag = parsed.deps[dep], parsed.words[dep].lower(), parsed.tags[dep]
    if label in SUBJECT:
        return SUBJECT[label]
    if label in OBJECT:
        return OBJECT[label]
    if label == "aux" and tag == "MD":
        return "ARGM-MOD"
    if label == "prep":
        return PREPOSITION.get(word, "ARG2")
    if label in ("advmod", "npadvmod"):
        if word in TEMPORAL_ADVERBS or label == "npadvmod":
            return "ARGM-TMP"
        if word in DISCOURSE_ADVERBS:
            return "ARGM-DIS"
        return "ARGM-MNR"
    if label in ("intj", "discourse"):
        return "ARGM-DIS"
    if label == "advcl":
        marks = [parsed.words[c].lower() for c in children.get(dep, []) if parsed.deps[c] in ("mark", "aux")]
        if "to" in marks or "so" in marks:
            return "ARGM-PNC"
        if any(m in ("when", "while", "until", "after", "before", "once", "as") for m in marks):
            return "ARGM-TMP"
        if "if" in marks:
            return "ARGM-ADV"
        return "ARGM-ADV"
    return None


def parse_of(parsed: syntax.ParsedSentence, predicates: Sequence[int]) -> list[list[Chunk]]:
    """One frame per predicate: V plus its labelled dependents' subtree spans."""
    heads = parsed.heads
    children: dict[int, list[int]] = {}
    for i, h in enumerate(heads):
        if h != i:
            children.setdefault(h, []).append(i)
    paths = syntax._paths(heads)
    left = syntax._left_edges(paths)
    right = list(range(len(heads)))
    for j, path in enumerate(paths):
        for a in path:
            right[a] = max(right[a], j)
    parses = []
    for p in predicates:
        spans = [("V", p, p + 1)]
        for dep in children.get(p, []):
            role = _role(parsed, dep, children)
            if role is None:
                continue
            start, end = left[dep], right[dep] + 1
            if start <= p < end:  # non-projective oddity: never let an argument swallow the predicate
                continue
            spans.append((role, start, end))
        spans.sort(key=lambda s: (s[1], s[2]))
        parses.append([Chunk(r, " ".join(parsed.words[s:e]), s, e) for r, s, e in spans])
    return parses
