"""The paper's scoring protocol (docs/protocol.md §3), to the letter, and fast.

Key clips: binary accuracy / precision / recall / F1 over all clips (positive class = key).

Tuples, per field (verbs, arguments) and matching mode, macro-averaged over the *counted* clips:
for each counted clip P_c = TP_c/|pred set| (0 if empty), R_c = TP_c/|gold set| (0 if empty);
P = mean P_c, R = mean R_c, F1 = 2PR/(P+R). Exact: TP = |gold ∩ pred|. Fuzzy / partial fuzzy:
TP = (maximum-weight one-to-one assignment of an integer similarity 0..100)/100.

The similarities equal fuzzywuzzy 0.18's ``fuzz.ratio`` / ``fuzz.partial_ratio`` on its pure-Python
difflib backend (the backend that reproduces the paper; python-Levenshtein and rapidfuzz shift
partial scores): same decorator semantics (equal strings → 100, an empty string → 0), same
matching blocks (autojunk included), Python's round-half-even. They are computed by
``cookproc.evaluation._fuzz``, difflib's algorithm transcribed to C and compiled by ``pip install -e .``
(tests/test_metrics.py and bench/scorer_speed.py check it against fuzzywuzzy). Where that module
was not built (e.g. a conda job without a compiler), the same functions run on
``cydifflib.SequenceMatcher``, a compiled re-implementation of difflib: the same numbers, slower,
with a warning. Pairs are cached, and the assignment is solved by SciPy's C implementation of the
Hungarian problem. Any exact solver gives the same optimal total, which is all that is scored.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from cydifflib import SequenceMatcher
from scipy.optimize import linear_sum_assignment

log = logging.getLogger(__name__)

MODES = ("exact", "fuzzy", "partial")
FIELDS = ("verbs", "arguments")
COUNTINGS = ("oracle", "predicted", "predicted-masked")


def _intr(value: float) -> int:
    # fuzzywuzzy.utils.intr: int(round(n)), i.e. round-half-even on the float.
    return int(round(value))


# difflib's autojunk heuristic kicks in for a second sequence of this length or more; below it,
# matching is plain longest-common-block recursion and the shortcuts below are exact.
_AUTOJUNK_LENGTH = 200


def difflib_ratio(a: str, b: str) -> int:
    """fuzzywuzzy 0.18 ``fuzz.ratio`` with the difflib backend, on cydifflib (the reference
    implementation of cookproc.evaluation._fuzz.ratio)."""
    if a == b:
        return 100
    if not a or not b:
        return 0
    return _intr(100 * SequenceMatcher(None, a, b).ratio())


def difflib_partial_ratio(a: str, b: str) -> int:
    """fuzzywuzzy 0.18 ``fuzz.partial_ratio`` with the difflib backend, on cydifflib (the reference
    implementation of cookproc.evaluation._fuzz.partial_ratio)."""
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
    from cookproc.evaluation._fuzz import partial_ratio as fuzz_partial_ratio, ratio as fuzz_ratio
    COMPILED = True
except ImportError:  # not built: same numbers from cydifflib, several times slower
    fuzz_ratio, fuzz_partial_ratio, COMPILED = difflib_ratio, difflib_partial_ratio, False
    log.warning("cookproc.evaluation._fuzz is not compiled (run `pip install -e .` with a C compiler): fuzzy "
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


def true_positives(gold: frozenset[str], pred: frozenset[str], mode: str,
                   cache: SimilarityCache | None = None) -> float:
    """TP of one clip: exact intersection size, or the optimal assignment's total similarity / 100."""
    if mode == "exact":
        return float(len(gold & pred))
    if not gold or not pred:
        return 0.0
    # Sorted so the profit matrix (and so any tie among optimal assignments) is reproducible.
    profit = (cache or SimilarityCache()).matrix(mode, sorted(gold), sorted(pred))
    if len(profit) == 1:  # one gold item: the best single match is the optimal assignment
        return max(profit[0]) / 100
    if len(profit[0]) == 1:
        return max(row[0] for row in profit) / 100
    matrix = np.array(profit, dtype=np.int64)
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return int(matrix[rows, cols].sum()) / 100


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    n_clips: int

    def as_percent(self) -> "PRF":
        return PRF(self.precision * 100, self.recall * 100, self.f1 * 100, self.n_clips)


def f1_of(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


@dataclass(frozen=True)
class ClipScores:
    """Per-clip precision and recall of the counted clips (positions in the benchmark's clip order)."""

    positions: list[int]
    precision: list[float]
    recall: list[float]

    def aggregate(self) -> PRF:
        total = len(self.positions)
        if total == 0:
            return PRF(0.0, 0.0, 0.0, 0)
        # Summed in clip order, like upstream's running sums, so the means are the same floats.
        precision, recall = sum(self.precision) / total, sum(self.recall) / total
        return PRF(precision, recall, f1_of(precision, recall), total)


def clip_scores(gold_sets: Sequence[frozenset[str]], pred_sets: Sequence[frozenset[str]],
                counted: Iterable[bool], mode: str, cache: SimilarityCache | None = None) -> ClipScores:
    """P_c and R_c of every counted clip."""
    if mode not in MODES:
        raise ValueError(f"unknown matching mode {mode!r}; expected one of {MODES}")
    if len(gold_sets) != len(pred_sets):
        raise ValueError(f"{len(gold_sets)} gold clips but {len(pred_sets)} predicted clips")
    cache = cache or SimilarityCache()
    out = ClipScores([], [], [])
    for position, (gold, pred, count) in enumerate(zip(gold_sets, pred_sets, counted, strict=True)):
        if not count:
            continue
        tp = true_positives(gold, pred, mode, cache)
        out.positions.append(position)
        out.precision.append(tp / len(pred) if pred else 0.0)
        out.recall.append(tp / len(gold) if gold else 0.0)
    return out


def score_clips(gold_sets: Sequence[frozenset[str]], pred_sets: Sequence[frozenset[str]],
                counted: Iterable[bool], mode: str, cache: SimilarityCache | None = None) -> PRF:
    """Macro-averaged P/R/F1 over the counted clips (fractions, not percent)."""
    return clip_scores(gold_sets, pred_sets, counted, mode, cache).aggregate()


def counted_clips(gold_sets: Sequence[frozenset[str]], predicted_key: Sequence[bool] | None) -> np.ndarray:
    """Oracle (``predicted_key`` None): clips with gold items. Predicted: gold items OR predicted key."""
    has_gold = np.fromiter((bool(g) for g in gold_sets), dtype=bool, count=len(gold_sets))
    if predicted_key is None:
        return has_gold
    return has_gold | np.asarray(predicted_key, dtype=bool)


def mask_predictions(pred_sets: Sequence[frozenset[str]], predicted_key: Sequence[bool]) -> list[frozenset[str]]:
    """The stricter variant: a clip predicted non-key predicts nothing."""
    return [p if k else frozenset() for p, k in zip(pred_sets, predicted_key, strict=True)]


@dataclass(frozen=True)
class KeyClipScore:
    accuracy: float
    precision: float
    recall: float
    f1: float
    n_clips: int


def score_keyclips(gold: Sequence[bool], pred: Sequence[bool]) -> KeyClipScore:
    """Binary accuracy/precision/recall/F1 (as scikit-learn computes them; 0 where undefined)."""
    gold = np.asarray(gold, dtype=bool)
    pred = np.asarray(pred, dtype=bool)
    if gold.shape != pred.shape:
        raise ValueError(f"{gold.size} gold flags but {pred.size} predictions")
    tp = int(np.sum(gold & pred))
    fp = int(np.sum(~gold & pred))
    fn = int(np.sum(gold & ~pred))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    accuracy = float(np.mean(gold == pred)) if gold.size else 0.0
    return KeyClipScore(accuracy, precision, recall, f1_of(precision, recall), int(gold.size))


def score_table5_cells(gold: dict[str, Sequence[frozenset[str]]], pred: dict[str, Sequence[frozenset[str]]],
                       predicted_key: Sequence[bool] | None, *, masked: bool = False,
                       cache: SimilarityCache | None = None) -> list[dict]:
    """The 2 fields × 3 modes of one Table 5 block, as rows of fractions (with their per-clip
    scores under ``"clips"``).

    ``gold`` and ``pred`` map field → per-clip sets (same clip order). ``predicted_key`` None gives
    the oracle block; otherwise the predicted-key-clips block, with predictions emptied on clips
    predicted non-key when ``masked``.
    """
    cache = cache or SimilarityCache()
    rows = []
    for field in FIELDS:
        pred_sets = pred[field]
        if masked:
            if predicted_key is None:
                raise ValueError("the masked variant needs predicted key clips")
            pred_sets = mask_predictions(pred_sets, predicted_key)
        counted = counted_clips(gold[field], predicted_key)
        for mode in SIMILARITIES:
            cache.prefill(mode, ((g, p) for gs, ps, c in zip(gold[field], pred_sets, counted) if c
                                 for g in gs for p in ps))
        for mode in MODES:
            per_clip = clip_scores(gold[field], pred_sets, counted, mode, cache)
            score = per_clip.aggregate()
            rows.append({"field": field, "mode": mode, "n_clips": score.n_clips,
                         "precision": score.precision, "recall": score.recall, "f1": score.f1,
                         "clips": per_clip})
    return rows
