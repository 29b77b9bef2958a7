"""String similarities of the scoring protocol: fuzzywuzzy 0.18's ``fuzz.ratio`` and
``fuzz.partial_ratio`` on its pure-Python difflib backend (the backend that reproduces the paper;
python-Levenshtein and rapidfuzz shift partial scores), to the letter: same decorator semantics
(equal strings → 100, an empty string → 0), same matching blocks (autojunk included), Python's
round-half-even.

They are computed by ``cookproc.scoring._fuzz``, difflib's algorithm transcribed to C and compiled
by ``pip install -e .`` (tests/unit/scoring/test_metrics.py and bench/scorer_speed.py check it against
fuzzywuzzy). Where that module was not built (e.g. a conda job without a compiler), the same
functions run on ``cydifflib.SequenceMatcher``, a compiled re-implementation of difflib: the same
numbers, slower, with a warning. :class:`SimilarityCache` memoises pairs.

Used by the scorer (:mod:`cookproc.scoring.metrics`) and by the stages that match strings as the
scorer does (visual and supervised tuples, Table 2's statistics).
"""
from __future__ import annotations

import logging
from typing import Iterable, Sequence

from cydifflib import SequenceMatcher

log = logging.getLogger(__name__)


def _intr(value: float) -> int:
    # fuzzywuzzy.utils.intr: int(round(n)), i.e. round-half-even on the float.
    return int(round(value))


# difflib's autojunk heuristic kicks in for a second sequence of this length or more; below it,
# matching is plain longest-common-block recursion and the shortcuts below are exact.
_AUTOJUNK_LENGTH = 200


def difflib_ratio(a: str, b: str) -> int:
    """fuzzywuzzy 0.18 ``fuzz.ratio`` with the difflib backend, on cydifflib (the reference
    implementation of cookproc.scoring._fuzz.ratio)."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return _intr(100 * SequenceMatcher(None, a, b).ratio())


def difflib_partial_ratio(a: str, b: str) -> int:
    """fuzzywuzzy 0.18 ``fuzz.partial_ratio`` with the difflib backend, on cydifflib (the reference
    implementation of cookproc.scoring._fuzz.partial_ratio)."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    if len(longer) < _AUTOJUNK_LENGTH and shorter in longer:
        # The longest block is then the whole shorter string, its window equals it: ratio 1.0.
        return 100
    # Each matching block anchors a window of the longer string as long as the shorter one; the
    # best window's ratio is the score (fuzzywuzzy's heuristic, including its early exit).
    best = 0.0
    seen = set()
    window_matcher = SequenceMatcher(None, shorter, shorter)
    for block in SequenceMatcher(None, shorter, longer).get_matching_blocks():
        long_start = max(block[1] - block[0], 0)
        if long_start in seen:  # same window, same ratio
            continue
        seen.add(long_start)
        window_matcher.set_seq2(longer[long_start:long_start + len(shorter)])
        ratio = window_matcher.ratio()
        if ratio > 0.995:
            return 100
        if ratio > best:
            best = ratio
    return _intr(100 * best)


try:
    from cookproc.scoring._fuzz import partial_ratio as fuzz_partial_ratio, ratio as fuzz_ratio
    COMPILED = True
except ImportError:  # not built: same numbers from cydifflib, several times slower
    fuzz_ratio, fuzz_partial_ratio, COMPILED = difflib_ratio, difflib_partial_ratio, False
    log.warning("cookproc.scoring._fuzz is not compiled (run `pip install -e .` with a C compiler): fuzzy "
                "similarities fall back to cydifflib, with the same results but slower")

SIMILARITIES = {"fuzzy": fuzz_ratio, "partial": fuzz_partial_ratio}


def _similarities(mode: str, pairs: list[tuple[str, str]]) -> list[int]:
    function = SIMILARITIES[mode]
    return [function(g, p) for g, p in pairs]


class SimilarityCache:
    """Pairwise similarities memoised per mode: the same (gold, pred) pairs recur across clips,
    key-clip sources and systems, and difflib is the cost of scoring."""

    def __init__(self, workers: int = 1) -> None:
        self._cache: dict[str, dict[tuple[str, str], int]] = {mode: {} for mode in SIMILARITIES}
        self.workers = workers

    def prefill(self, mode: str, pairs: Iterable[tuple[str, str]]) -> None:
        """Compute the missing pairs up front, in ``workers`` processes when more than one (the
        similarities are pure functions, so the result is the same whatever the split)."""
        cache, function = self._cache[mode], SIMILARITIES[mode]
        todo = sorted({pair for pair in pairs if pair not in cache and pair[0] != pair[1]})
        if self.workers <= 1 or len(todo) < 2000:
            for g, p in todo:
                cache[(g, p)] = function(g, p)
            return
        from concurrent.futures import ProcessPoolExecutor

        chunk = -(-len(todo) // (4 * self.workers))
        with ProcessPoolExecutor(self.workers) as pool:
            batches = [todo[i:i + chunk] for i in range(0, len(todo), chunk)]
            for batch, values in zip(batches, pool.map(_similarities, [mode] * len(batches), batches)):
                cache.update(zip(batch, values))

    def matrix(self, mode: str, gold: Sequence[str], pred: Sequence[str]) -> list[list[int]]:
        cache, function = self._cache[mode], SIMILARITIES[mode]
        out = []
        for g in gold:
            row = []
            for p in pred:
                value = cache.get((g, p))
                if value is None:
                    value = cache[(g, p)] = function(g, p)
                row.append(value)
            out.append(row)
        return out

    def __len__(self) -> int:
        return sum(len(c) for c in self._cache.values())
