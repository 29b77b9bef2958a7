"""Per-clip agreement of our SRL w/ heuristics with upstream's (``youcook2/srl_pred.json``)."""
from __future__ import annotations

from typing import Sequence


def verb_agreement(ours: Sequence[Sequence[str]], theirs: Sequence[Sequence[str]]) -> dict[str, float]:
    """Agreement of per-clip verb sets (same clip order): key flags, equal sets, overlap P/R/F1.

    ``key_agreement``: share of clips where both or neither output a verb; ``kappa``: Cohen's kappa of
    those key flags; ``equal_sets``: share of clips (either side non-empty) whose verb sets are equal;
    ``micro_*``: our verbs vs theirs as set items pooled over clips.
    """
    if len(ours) != len(theirs):
        raise ValueError(f"{len(ours)} clips vs {len(theirs)} clips")
    n = len(ours)
    both = neither = either = equal = tp = n_ours = n_theirs = 0
    for a, b in zip(ours, theirs):
        sa, sb = set(a), set(b)
        both += bool(sa) and bool(sb)
        neither += not sa and not sb
        if sa or sb:
            either += 1
            equal += sa == sb
        tp += len(sa & sb)
        n_ours += len(sa)
        n_theirs += len(sb)
    key_ours = sum(bool(set(a)) for a in ours) / n if n else 0.0
    key_theirs = sum(bool(set(b)) for b in theirs) / n if n else 0.0
    observed = (both + neither) / n if n else 0.0
    expected = key_ours * key_theirs + (1 - key_ours) * (1 - key_theirs)
    p = tp / n_ours if n_ours else 0.0
    r = tp / n_theirs if n_theirs else 0.0
    return {
        "clips": n, "key_ours": key_ours, "key_upstream": key_theirs, "key_agreement": observed,
        "kappa": (observed - expected) / (1 - expected) if expected < 1 else 1.0,
        "clips_with_verbs": either, "equal_sets": equal / either if either else 0.0,
        "micro_precision": p, "micro_recall": r, "micro_f1": 2 * p * r / (p + r) if p + r else 0.0,
    }
