"""The cooking lexicon, rebuilt the paper's way from YouCook2's imperative step captions.

Paper (Sec. 5): verbs that start imperative recipe sentences, kept when their frequency is above
a threshold (> 5) and WordNet has a verb synset for them, minus a small manual stop list. The
captions are ``youcook2/split/<youtube id>.txt`` (one imperative step a line); the benchmark's
own videos are excluded so that the lexicon never sees the test captions.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterable

from cookproc.core.errors import InputError

#: Words that start many captions and have a verb synset but name no cooking action.
STOP_LIST = (
    "go",        # "go over the ...": movement/narration, the paper's own example
    "be",        # copula
    "have",      # possession / auxiliary
    "do",        # auxiliary / pro-verb
    "repeat",    # refers back to a step
    "continue",  # aspectual
    "start",     # aspectual
    "begin",     # aspectual
    "try",       # narration
)
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")


def first_word(caption: str) -> str | None:
    """The caption's first word, lower-cased, or None when it starts with no letter."""
    match = _WORD.match(caption.strip().lower())
    return match.group(0) if match else None


def count_first_words(caption_dir: str | Path, exclude_videos: Iterable[str]) -> tuple[Counter, int, int]:
    """First-word counts over captions of every video not excluded; (counts, videos, captions)."""
    caption_dir = Path(caption_dir)
    excluded = set(exclude_videos)
    files = sorted(caption_dir.glob("*.txt"))
    if not files:
        raise InputError(caption_dir, "no caption files (*.txt) found")
    counts, n_videos, n_captions = Counter(), 0, 0
    for path in files:
        if path.stem in excluded:
            continue
        n_videos += 1
        for line in path.read_text(encoding="utf-8").splitlines():
            word = first_word(line)
            if word:
                counts[word] += 1
                n_captions += 1
    return counts, n_videos, n_captions


def build_lexicon(counts: Counter, *, min_count: int = 6, stop_list: Iterable[str] = STOP_LIST,
                  has_verb_synset=None) -> list[str]:
    """Words counted at least ``min_count`` times (paper: frequency > 5), with a WordNet verb
    synset, not in the stop list; sorted by falling frequency, then alphabetically."""
    if has_verb_synset is None:
        from cookproc.data.wordnet import has_verb_synset
    stop = set(stop_list)
    kept = [w for w, n in counts.items() if n >= min_count and w not in stop and has_verb_synset(w)]
    return sorted(kept, key=lambda w: (-counts[w], w))


def overlap_report(ours: Iterable[str], upstream: Iterable[str]) -> dict[str, float]:
    ours_s, up_s = set(ours), {w for w in upstream if w}
    both = ours_s & up_s
    return {
        "rebuilt": len(ours_s), "upstream": len(up_s), "both": len(both),
        "rebuilt_in_upstream": len(both) / len(ours_s) if ours_s else 0.0,
        "upstream_in_rebuilt": len(both) / len(up_s) if up_s else 0.0,
        "jaccard": len(both) / len(ours_s | up_s) if ours_s | up_s else 0.0,
    }
