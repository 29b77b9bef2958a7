"""Nested selection (cookproc.learn.selection, keyclip_crossval.nested_cross_validate): each outer fold
chooses its candidate on its own inner-validation recipes, never on its test recipes."""
import numpy as np
import pytest
import torch

from cookproc.learn.keyclip_crossval import Candidate, candidates_with_heads, cross_validate, nested_cross_validate
from cookproc.learn.folds import clip_folds, make_folds
from cookproc.learn.selection import (candidate_grid, choose, crossfit_value, decision_measure,
                                         validation_halves)
from cookproc.learn.thresholds import best_threshold

torch.set_num_threads(1)


def test_validation_halves_keep_recipes_whole_balanced_and_independent_of_clip_order():
    recipes = np.array(["a"] * 6 + ["b"] * 5 + ["c"] * 3 + ["d"] * 2)
    halves = validation_halves(recipes)
    for recipe in "abcd":
        assert len(set(halves[recipes == recipe].tolist())) == 1  # a recipe is never split
    sizes = sorted(np.bincount(halves, minlength=2).tolist())
    assert sizes == [8, 8]  # 6 + 2 against 5 + 3
    order = np.random.default_rng(0).permutation(len(recipes))
    assert np.array_equal(validation_halves(recipes[order]), halves[order])
    with pytest.raises(ValueError, match="at least 2 inner-validation recipes, got 1.*set the candidate sets to null"):
        validation_halves(["a", "a"])


def test_decision_measure_is_f1_accuracy_or_their_mean():
    labels = np.array([1, 1, 0, 0, 0], bool)
    predicted = np.array([1, 0, 1, 0, 0], bool)
    assert decision_measure(labels, predicted, "f1") == pytest.approx(0.5)  # tp 1, 2 gold, 2 predicted
    assert decision_measure(labels, predicted, "accuracy") == pytest.approx(0.6)
    assert decision_measure(labels, predicted, "f1_accuracy") == pytest.approx(0.55)
    with pytest.raises(ValueError, match="selection objective must be one of"):
        decision_measure(labels, predicted, "auc")


def test_crossfit_value_cuts_each_half_at_the_other_halfs_threshold():
    # Half 0 separates at 0.5; half 1 at 0.8. Each half's own threshold would be perfect on it;
    # cross-fitted, half 1 is cut at half 0's threshold and loses its 0.6-0.7 non-key clips.
    labels = np.array([1, 1, 0, 0, 1, 1, 0, 0], bool)
    scores = np.array([0.9, 0.6, 0.4, 0.1, 0.95, 0.85, 0.7, 0.6])
    halves = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    t0 = best_threshold(labels[halves == 0], scores[halves == 0], "f1")
    t1 = best_threshold(labels[halves == 1], scores[halves == 1], "f1")
    predicted = np.where(halves == 0, scores >= t1, scores >= t0)
    assert crossfit_value(labels, scores, halves, "f1", "f1") == pytest.approx(decision_measure(labels, predicted, "f1"))
    assert crossfit_value(labels, scores, halves, "f1", "f1") < 1.0  # not the in-sample 1.0


def test_candidate_grid_is_the_product_in_declared_order():
    grid = candidate_grid({"context_window": [0, 1], "head_weight": [0.5, 0.0]})
    assert grid == [{"context_window": 0, "head_weight": 0.5}, {"context_window": 0, "head_weight": 0.0},
                    {"context_window": 1, "head_weight": 0.5}, {"context_window": 1, "head_weight": 0.0}]
    with pytest.raises(ValueError, match="'lexical' is empty"):
        candidate_grid({"lexical": []})
    with pytest.raises(ValueError, match="repeats a value"):
        candidate_grid({"head_weight": [0.5, 0.5]})


def test_choose_prefers_informative_scores_and_breaks_ties_by_declared_order():
    rng = np.random.default_rng(0)
    labels = rng.random(400) < 0.4
    recipes = np.repeat([f"r{i}" for i in range(8)], 50)
    informative = labels + rng.normal(0, 0.3, 400)
    noise = rng.normal(0, 1, 400)
    choice = choose(labels, recipes, [({"name": "noise"}, noise), ({"name": "informative"}, informative)],
                    ["f1", "calibrated_f1_accuracy"], "f1_accuracy")
    assert choice.index == 1
    assert len(choice.table) == 4 and {row["threshold_metric"] for row in choice.table} == {"f1", "calibrated_f1_accuracy"}
    assert choice.value == max(row["value"] for row in choice.table)
    same = choose(labels, recipes, [({"name": "first"}, informative), ({"name": "second"}, informative.copy())],
                  ["f1"], "f1")
    assert same.index == 0


def _three_folds():
    fold = np.repeat([0, 1, 2], 40)
    inner = np.tile(np.r_[np.zeros(20, bool), np.ones(20, bool)], 3)
    recipes = np.array([f"recipe{i // 10}" for i in range(120)])  # 10 clips a recipe, inside one fold
    labels = np.tile([True, False], 60)
    return fold, inner, recipes, labels


def test_nested_cross_validation_never_looks_at_the_test_fold():
    fold, inner, recipes, labels = _three_folds()
    calls = []

    # Candidate "val-good" separates the inner-validation clips and fails on the test fold; candidate
    # "test-good" is the reverse. Choosing on test scores would pick "test-good" every time.
    def fit(train, val, test):
        calls.append(sorted(set(fold[test].tolist())))
        good_val, bad_val = labels[val].astype(float), 1.0 - labels[val]
        good_test, bad_test = labels[test].astype(float), 1.0 - labels[test]
        return [Candidate({"name": "test-good"}, bad_val, good_test, {"fitted": "test-good"}),
                Candidate({"name": "val-good"}, good_val, bad_test, {"fitted": "val-good"})]

    result = nested_cross_validate(fold, inner, labels, fit, ["f1"], recipes, "f1")
    assert calls == [[0], [1], [2]]
    for f in range(3):
        assert result.info[f]["selected"] == {"name": "val-good", "threshold_metric": "f1"}
        assert result.info[f]["fitted"] == "val-good"  # the chosen candidate's own info
        assert result.info[f]["selection_value"] == 1.0
        assert len(result.info[f]["candidates"]) == 2
    assert not result.is_key[labels].any()  # the chosen candidate fails on test clips, as built
    with pytest.raises(ValueError, match="needs the clips' recipes"):
        nested_cross_validate(fold, inner, labels, fit, ["f1"])
    one_inner_recipe = np.where(inner, "the only validation recipe", recipes)
    with pytest.raises(ValueError, match="fold 0: nested selection .* got 1"):
        nested_cross_validate(fold, inner, labels, fit, ["f1"], one_inner_recipe)


def test_one_candidate_is_plain_cross_validation_with_nothing_recorded():
    fold, inner, recipes, labels = _three_folds()
    rng = np.random.default_rng(3)
    scores = labels + rng.normal(0, 0.8, len(labels))

    def fit_predict(train, val, test):
        return scores[val], scores[test], {"n": len(train)}

    plain = cross_validate(fold, inner, labels, fit_predict, "calibrated_f1_accuracy")
    nested = nested_cross_validate(fold, inner, labels, lambda tr, va, te: [Candidate({}, *fit_predict(tr, va, te))],
                                   ["calibrated_f1_accuracy"], recipes)
    assert np.array_equal(plain.score, nested.score) and np.array_equal(plain.is_key, nested.is_key)
    assert plain.thresholds == nested.thresholds
    assert "selected" not in plain.info[0] and plain.info[0]["n"] == 40
    for f in range(3):
        val = (fold != f) & inner
        assert plain.thresholds[f] == best_threshold(labels[val], scores[val], "calibrated_f1_accuracy")


def test_candidates_with_heads_blend_each_model_at_every_weight():
    fold, inner, recipes, labels = _three_folds()
    heads = {f: f + np.arange(120) / 1000 for f in range(3)}  # a head of the wrong fold would show

    def model(value):
        def fit_predict(train, val, test):
            return np.full(len(val), value), np.full(len(test), value), {"model": value}
        return fit_predict

    fit = candidates_with_heads([({"m": 1}, model(0.2)), ({"m": 2}, model(0.6))], fold, heads, [0.0, 0.5])
    train, val, test = np.flatnonzero((fold != 1) & ~inner), np.flatnonzero((fold != 1) & inner), np.flatnonzero(fold == 1)
    out = fit(train, val, test)
    assert [c.settings for c in out] == [{"m": 1, "head_weight": 0.0}, {"m": 1, "head_weight": 0.5},
                                         {"m": 2, "head_weight": 0.0}, {"m": 2, "head_weight": 0.5}]
    assert np.array_equal(out[0].test, np.full(len(test), 0.2))
    assert np.allclose(out[3].test, 0.5 * 0.6 + 0.5 * heads[1][test])
    assert np.allclose(out[1].val, 0.5 * 0.2 + 0.5 * heads[1][val])
    no_heads = candidates_with_heads([({"m": 1}, model(0.2))], fold, None, [0.3])(train, val, test)
    assert [c.settings for c in no_heads] == [{"m": 1}]
    with pytest.raises(ValueError, match=r"head weight must be in \[0, 1\]"):
        candidates_with_heads([({"m": 1}, model(0.2))], fold, heads, [1.2])


def test_nested_neural_run_chooses_per_fold_and_one_candidate_equals_run_neural():
    from cookproc.learn.inputs import text_inputs
    from cookproc.keyclips.neural import CandidateGrid, NetCandidate, net_candidates, run_nested_neural, run_neural
    from cookproc.keyclips.train import KeyClipTrainConfig
    from test_keyclip_inputs import _toy_benchmark

    clips = _toy_benchmark(n_recipes=12)
    labels = clips["is_key"].to_numpy()
    folds = make_folds(clips, 3, 0, 0.3)
    fold, inner = clip_folds(folds, clips)
    assert all(len(set(clips["recipe"][(fold != f) & inner])) >= 2 for f in range(3))
    frozen = np.random.default_rng(1).normal(size=(len(clips), 8)).astype(np.float32)  # words carry the signal
    cfg = KeyClipTrainConfig(dim=8, hidden=8, dropout=0.1, learning_rate=1e-2, batch_size=32, max_epochs=40, patience=10)

    def text_input(vectors, window):
        return text_inputs(clips, vectors, context_window=window, layout=False)

    grid = CandidateGrid.from_config({"context_window": [0, 1], "lexical": [False, True]}, context_window=2,
                                     lexical=True, head_weight=0.0, threshold_metric="f1")
    nets = net_candidates("text", cfg, grid, text_input, frozen=frozen)
    assert [n.settings for n in nets] == [{"context_window": 0, "lexical": False}, {"context_window": 0, "lexical": True},
                                          {"context_window": 1, "lexical": False}, {"context_window": 1, "lexical": True}]
    assert [n.cfg.lexical for n in nets] == [False, True, False, True] and nets[2].text.shape[1] == 3 * 8
    assert len(net_candidates("visual", cfg, grid, text_input, frozen=frozen)) == 1
    result = run_nested_neural("text", clips, folds, nets, None, seed=5, head_weights=[0.0],
                               threshold_metrics=["f1", "calibrated_f1_accuracy"])
    for f in range(3):
        assert len(result.info[f]["candidates"]) == 8
        # Only the lexical features carry the key words: every fold chooses them.
        assert result.info[f]["selected"]["lexical"] is True
    assert (result.is_key == labels).mean() > 0.9
    single = run_nested_neural("text", clips, folds, nets[3:], None, seed=5, head_weights=[0.0],
                               threshold_metrics=["f1"])
    direct = run_neural("text", clips, folds, nets[3].text, None, nets[3].cfg, seed=5)
    assert np.array_equal(single.score, direct.score) and np.array_equal(single.is_key, direct.is_key)
    with pytest.raises(ValueError, match="either frozen or per-fold finetuned vectors"):
        net_candidates("text", cfg, grid, text_input)
    with pytest.raises(ValueError, match="no net candidates"):
        run_nested_neural("text", clips, folds, [], None, 5, [0.0], ["f1"])
    assert isinstance(nets[0], NetCandidate)
