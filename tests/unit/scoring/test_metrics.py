"""The scorer on hand-worked clips, and its similarities against fuzzywuzzy itself."""
import difflib
import itertools
import random

import numpy as np
import pytest

from cookproc.scoring import similarity
from cookproc.scoring.metrics import (counted_clips, mask_predictions, score_clips, score_keyclips, score_table5_cells,
                                      true_positives)
from cookproc.scoring.similarity import SimilarityCache, fuzz_partial_ratio, fuzz_ratio

S = frozenset


def test_fuzzywuzzy_reference_uses_difflib_backend():
    # The paper's numbers come from the pure-Python backend; if python-Levenshtein were installed,
    # fuzzywuzzy would silently switch and the equivalence test below would compare the wrong thing.
    with pytest.warns(UserWarning):
        import importlib

        import fuzzywuzzy.fuzz as fuzz
        importlib.reload(fuzz)
    assert fuzz.SequenceMatcher is difflib.SequenceMatcher


def _random_phrases(n, seed):
    rng = random.Random(seed)
    words = ["add", "the", "onions", "onion", "chopped", "garlic", "into", "pan", "a", "salt", "and", "pepper",
             "oven", "for 10 minutes", "stir", "well", "mix", "bowl", "big", "tomato sauce"]
    out = ["", "a", "aa", "add", "add the onions"]
    for _ in range(n):
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))))
    # Long strings exercise difflib's autojunk heuristic (sequences of 200+ characters).
    out.append(" ".join(rng.choice(words) for _ in range(60)))
    out.append(" ".join(rng.choice(words) for _ in range(70)))
    return out


def _random_strings(n, seed):
    """Character soup over small alphabets (many repeated blocks and ties), lengths around difflib's
    autojunk limit of 200, non-ASCII and astral code points, and substrings of each other."""
    rng = random.Random(seed)
    alphabets = ["ab", "abc ", "abcdefghij klmnop", "a\u00e9\U0001F600b "]
    lengths = [0, 1, 2, 3, 5, 10, 30, 80, 199, 200, 201, 250, 400]
    pairs = []
    for trial in range(n):
        alphabet = rng.choice(alphabets)
        la = rng.choice(lengths) if trial % 10 == 0 else rng.randint(0, 40)
        lb = rng.choice(lengths) if trial % 7 == 0 else rng.randint(0, 60)
        a = "".join(rng.choice(alphabet) for _ in range(la))
        b = "".join(rng.choice(alphabet) for _ in range(lb))
        if trial % 3 == 0 and b:
            start = rng.randint(0, len(b))
            a = b[start:start + rng.randint(0, 30)] + a[:rng.randint(0, 5)]
        pairs.append((a, b))
    return pairs


def test_scorer_uses_the_compiled_similarities():
    # `pip install -e .` builds cookproc.scoring._fuzz; without it the scorer is several times slower.
    from cookproc.scoring import _fuzz

    assert similarity.COMPILED and fuzz_ratio is _fuzz.ratio and fuzz_partial_ratio is _fuzz.partial_ratio


@pytest.mark.parametrize("implementation", ["compiled", "cydifflib"])
def test_similarities_equal_fuzzywuzzy_0_18(implementation):
    from fuzzywuzzy import fuzz

    ratio, partial = ((fuzz_ratio, fuzz_partial_ratio) if implementation == "compiled"
                      else (similarity.difflib_ratio, similarity.difflib_partial_ratio))
    phrases = _random_phrases(120, seed=1)
    pairs = list(itertools.product(phrases[:40], phrases)) + [(b, a) for a, b in zip(phrases, phrases[1:])]
    pairs += _random_strings(3000, seed=2)
    for a, b in pairs:
        assert ratio(a, b) == fuzz.ratio(a, b), (a, b)
        assert partial(a, b) == fuzz.partial_ratio(a, b), (a, b)


def test_compiled_similarities_refuse_non_strings():
    with pytest.raises(TypeError):
        fuzz_ratio("onion", None)
    with pytest.raises(TypeError):
        fuzz_partial_ratio(b"onion", "onion")


def test_similarity_edge_cases():
    assert fuzz_ratio("", "") == 100 and fuzz_partial_ratio("", "") == 100  # equal strings first
    assert fuzz_ratio("add", "") == 0 and fuzz_partial_ratio("", "add") == 0
    assert fuzz_ratio("onion", "onions") == 91  # 2*5/11 = 0.909
    assert fuzz_partial_ratio("onion", "chopped onions") == 100


def test_exact_true_positives_are_set_intersections():
    assert true_positives(S({"add", "mix"}), S({"add", "stir"}), "exact") == 1.0
    assert true_positives(S(), S({"add"}), "exact") == 0.0


def test_fuzzy_uses_the_optimal_one_to_one_assignment_not_greedy():
    gold = S({"onion", "onions"})
    pred = S({"onion", "red onions"})
    # Greedy takes onion-onion (100) then onions-"red onions" (75); that is also optimal here, so
    # check against brute force over all one-to-one matchings on random sets instead.
    rng = random.Random(3)
    phrases = _random_phrases(30, seed=4)[5:]
    for _ in range(30):
        g = S(rng.sample(phrases, rng.randint(1, 4)))
        p = S(rng.sample(phrases, rng.randint(1, 4)))
        for mode, fn in (("fuzzy", fuzz_ratio), ("partial", fuzz_partial_ratio)):
            gl, pl = sorted(g), sorted(p)
            k = min(len(gl), len(pl))
            best = max(sum(fn(gl[i], pl[j]) for i, j in zip(rows, cols))
                       for rows in itertools.combinations(range(len(gl)), k)
                       for cols in itertools.permutations(range(len(pl)), k))
            assert true_positives(g, p, mode) == best / 100
    assert true_positives(gold, pred, "fuzzy") == (100 + fuzz_ratio("onions", "red onions")) / 100


def test_hungarian_beats_greedy_on_a_hand_built_case():
    gold, pred = S({"ab", "oil"}), S({"add oil", "olive oil"})
    assert [fuzz_ratio(g, p) for g in ("ab", "oil") for p in ("add oil", "olive oil")] == [22, 0, 60, 50]
    # Greedy takes oil/add oil (60) first, leaving ab/olive oil (0): 60. Optimal: 22 + 50 = 72.
    assert true_positives(gold, pred, "fuzzy") == 0.72


def test_macro_average_over_counted_clips_by_hand():
    gold = [S({"add", "mix"}), S({"chop"}), S(), S({"bake"})]
    pred = [S({"add"}), S({"chop", "cut"}), S({"stir"}), S()]
    counted = counted_clips(gold, None)
    assert counted.tolist() == [True, True, False, True]
    score = score_clips(gold, pred, counted, "exact")
    # clip 1: P 1, R 1/2; clip 2: P 1/2, R 1; clip 4: P 0 (empty pred), R 0
    assert score.n_clips == 3
    assert score.precision == pytest.approx((1 + 0.5 + 0) / 3)
    assert score.recall == pytest.approx((0.5 + 1 + 0) / 3)
    # F1 of the averaged P and R (not the average of per-clip F1s)
    assert score.f1 == pytest.approx(2 * 0.5 * 0.5 / 1.0)


def test_predicted_key_clips_count_gold_or_predicted_and_masking_empties():
    gold = [S({"add"}), S(), S()]
    pred = [S({"add"}), S({"stir"}), S({"mix"})]
    key = [False, True, False]
    counted = counted_clips(gold, key)
    assert counted.tolist() == [True, True, False]
    unmasked = score_clips(gold, pred, counted, "exact")
    assert (unmasked.precision, unmasked.recall, unmasked.n_clips) == (0.5, 0.5, 2)
    masked = score_clips(gold, mask_predictions(pred, key), counted, "exact")
    assert (masked.precision, masked.recall) == (0.0, 0.0)


def test_duplicates_in_predictions_count_once():
    assert score_clips([S({"add"})], [S(["add", "add"])], [True], "exact").precision == 1.0


def test_table5_cells_layout_and_values():
    gold = {"verbs": [S({"add"}), S({"stir"})], "arguments": [S({"salt"}), S()]}
    pred = {"verbs": [S({"add"}), S({"mix"})], "arguments": [S({"salts"}), S({"pan"})]}
    rows = score_table5_cells(gold, pred, None, cache=SimilarityCache())
    assert [(r["field"], r["mode"]) for r in rows] == [(f, m) for f in ("verbs", "arguments")
                                                       for m in ("exact", "fuzzy", "partial")]
    args_fuzzy = rows[4]
    assert args_fuzzy["n_clips"] == 1 and args_fuzzy["precision"] == fuzz_ratio("salt", "salts") / 100
    with pytest.raises(ValueError, match="masked"):
        score_table5_cells(gold, pred, None, masked=True)


def test_keyclip_scores_match_scikit_learn():
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    rng = np.random.default_rng(0)
    gold, pred = rng.random(500) < 0.3, rng.random(500) < 0.4
    score = score_keyclips(gold, pred)
    assert score.accuracy == pytest.approx(accuracy_score(gold, pred))
    assert score.precision == pytest.approx(precision_score(gold, pred))
    assert score.recall == pytest.approx(recall_score(gold, pred))
    assert score.f1 == pytest.approx(f1_score(gold, pred))
    none = score_keyclips([True, False], [False, False])
    assert (none.precision, none.recall, none.f1, none.accuracy) == (0.0, 0.0, 0.0, 0.5)


def test_cache_reuses_pairs():
    cache = SimilarityCache()
    cache.matrix("fuzzy", ["a", "b"], ["c"])
    cache.matrix("fuzzy", ["a"], ["c"])
    assert len(cache) == 2
