"""Supervised key-clip classifier and tuple extractor: fold hygiene, no test-fold gold, selection, gains."""
import numpy as np
import pandas as pd
import pytest

from cookproc.learn.keyclip_crossval import cross_validate
from cookproc.learn.folds import clip_folds, make_folds, split_indices
from cookproc.supervised import extract
from cookproc.supervised import tuples as T
from cookproc.supervised.keyclips import logreg_fit_predict

LEXICON = frozenset({"add", "chop", "put", "stir", "pour"})
INGREDIENTS = ["salt", "onion", "garlic", "butter", "flour", "sugar", "rice", "carrot"]
VERBS = ["add", "chop", "put", "stir", "pour"]
PARAMS = dict(max_ngram=2, max_chunk_words=4, max_verbs=2, prior_verbs=2, max_args=2, arg_match=75, seed=0, max_iter=15,
              learning_rate=0.2, max_leaf_nodes=7, smoothing=2.0, thresholds=[0.3, 0.5, 0.7])


def lemma(word):
    return {"adding": "add", "chopped": "chop", "stirring": "stir"}.get(word, word)


def toy_clips(n_recipes=10, videos=2, per_video=8, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_recipes):
        for v in range(videos):
            for c in range(per_video):
                key = bool(rng.random() < 0.5)
                if key:
                    verb, obj = VERBS[rng.integers(len(VERBS))], INGREDIENTS[rng.integers(len(INGREDIENTS))]
                    sentence = f"now {verb} the {obj} to the pan"
                    gold_v, gold_a = [verb], [obj, "pan"]
                else:
                    sentence = f"hello friends welcome back number {int(rng.integers(100))}"
                    gold_v, gold_a = [], []
                rows.append({"video_id": f"v{r:02d}{v}", "recipe": f"recipe{r}", "clip_idx": c,
                             "start_s": 5.0 * c, "end_s": 5.0 * c + 5, "sentence": sentence, "is_key": key,
                             "gold_verbs": gold_v, "gold_args": gold_a})
    return pd.DataFrame(rows).sort_values(["video_id", "clip_idx"]).reset_index(drop=True)


def run_tuples(clips):
    folds = make_folds(clips, 4, 0, 0.25)
    fold, inner = clip_folds(folds, clips)
    tsm = [[] for _ in range(len(clips))]
    setups = extract.build_setups(clips, {}, tsm, LEXICON, lemma, PARAMS)
    preds, _ = extract.run(clips, fold, inner, setups, PARAMS)
    return preds, fold


def test_folds_never_share_a_recipe_between_training_and_test():
    clips = toy_clips()
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)
    recipes = clips["recipe"].to_numpy()
    for f in range(4):
        train, val, test = split_indices(fold, inner, f)
        assert not set(recipes[test]) & (set(recipes[train]) | set(recipes[val]))
        assert len(train) and len(val) and len(test)


def test_tuple_extractor_learns_and_never_reads_test_fold_gold():
    clips = toy_clips()
    preds, fold = run_tuples(clips)
    key = clips["is_key"].to_numpy()
    # It learns the pattern: the gold verb and object of annotated clips are found out of fold.
    verbs_hit = np.mean([set(g) <= set(p) for g, p, k in zip(clips["gold_verbs"], preds["verbs"], key) if k])
    args_hit = np.mean([g[0] in p for g, p, k in zip(clips["gold_args"], preds["arguments"], key) if k])
    assert verbs_hit > 0.9 and args_hit > 0.5
    # Poison the gold of fold 0: its own predictions must not move (other folds' models may).
    poisoned = clips.copy()
    in0 = fold == 0
    poisoned.loc[in0, "gold_verbs"] = pd.Series([["explode"]] * int(in0.sum()), index=poisoned.index[in0])
    poisoned.loc[in0, "gold_args"] = pd.Series([["zebra", "moon"]] * int(in0.sum()), index=poisoned.index[in0])
    poisoned.loc[in0, "is_key"] = ~poisoned.loc[in0, "is_key"]
    again, _ = run_tuples(poisoned)
    for field in ("verbs", "arguments"):
        assert [preds[field][i] for i in np.flatnonzero(in0)] == [again[field][i] for i in np.flatnonzero(in0)]
    # ... while the poison does reach the models of the other folds (the check can fail).
    changed = [preds["arguments"][i] != again["arguments"][i] or preds["verbs"][i] != again["verbs"][i]
               for i in np.flatnonzero(~in0)]
    assert any(changed)


def test_tuple_extractor_is_deterministic():
    clips = toy_clips(n_recipes=8)
    a, _ = run_tuples(clips)
    b, _ = run_tuples(clips)
    assert a == b


def test_keyclip_classifier_never_reads_test_fold_labels():
    clips = toy_clips()
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)
    rng = np.random.default_rng(1)
    dense = rng.normal(size=(len(clips), 5))
    sentences = clips["sentence"].tolist()
    labels = clips["is_key"].to_numpy().astype(bool)
    result = cross_validate(fold, inner, labels, logreg_fit_predict(dense, sentences, labels, C=1.0, ngram_max=1, min_df=1))
    assert np.mean(result.is_key == labels) > 0.9  # the words separate the classes
    poisoned = labels.copy()
    poisoned[fold == 0] = ~poisoned[fold == 0]
    again = cross_validate(fold, inner, poisoned, logreg_fit_predict(dense, sentences, poisoned, C=1.0, ngram_max=1, min_df=1))
    np.testing.assert_array_equal(result.score[fold == 0], again.score[fold == 0])
    assert not np.array_equal(result.score[fold != 0], again.score[fold != 0])


def test_rates_leave_out_the_candidates_own_video_and_unlabelled_clips():
    df = pd.DataFrame({"clip": [0, 1, 2, 3], "text": ["salt"] * 4})
    labels = np.array([True, True, False, True])
    group = np.array([0, 0, 1, 2])
    rates = T.rate_features(df, labels, np.array([0, 1, 2]), group, ("text",), smoothing=0.0)
    # clip 0: other videos' labelled salt = clip 2 only (negative); clip 3 is not a training clip.
    assert rates["rate_text"].tolist() == [0.0, 0.0, 1.0, 2 / 3]
    assert np.allclose(rates["count_text"], np.log1p([1, 1, 2, 3]))


def test_select_keeps_the_best_then_thresholds_and_skips_overlaps():
    df = pd.DataFrame({"clip": [0, 0, 0, 1, 1], "text": ["olive oil", "oil", "pan", "salt", "pepper"]})
    prob = np.array([0.9, 0.8, 0.6, 0.1, 0.05])
    out = T.select(df, prob, np.array([0, 1]), threshold=0.5, max_items=3, dedupe_overlap=True)
    assert out == {0: ["olive oil", "pan"], 1: ["salt"]}
    out = T.select(df, prob, np.array([0]), threshold=0.5, max_items=3, dedupe_overlap=False)
    assert out == {0: ["olive oil", "oil", "pan"]}


def test_gains_split_by_presence_in_the_sentence():
    clips = pd.DataFrame({"sentence": ["then add it to the pan", "and the onions"],
                          "gold_verbs": [["add"], ["chop"]], "gold_args": [["garlic", "pan"], ["onions"]]})
    ours = {"verbs": [["add"], ["chop"]], "arguments": [["garlic", "pan"], ["onions"]]}
    base = {"verbs": [["add"], []], "arguments": [["pan"], []]}
    gains = extract.gain_by_presence(clips, ours, base, lemma).set_index(["field", "present"])
    assert gains.loc[("verbs", False), "gain"] == 1 and gains.loc[("verbs", True), "gain"] == 0
    assert gains.loc[("verbs", False), "share_of_gain"] == pytest.approx(1.0)
    assert gains.loc[("arguments", False), "gain"] == 1  # garlic: coreference ("it")
    assert gains.loc[("arguments", True), "gain"] == 1  # onions
    assert gains.loc[("arguments", False), "share_of_gain"] == pytest.approx(0.5)


def test_regression_candidates_cover_windows_and_C_and_read_each_folds_own_vectors():
    from cookproc.learn.keyclip_crossval import nested_cross_validate, candidates_with_heads
    from cookproc.learn.finetuned_vectors import FoldVectors
    from cookproc.supervised.keyclips import regression_candidates

    clips = toy_clips()
    labels = clips["is_key"].to_numpy()
    fold, inner = clip_folds(make_folds(clips, 3, 0, 0.25), clips)
    rng = np.random.default_rng(0)
    # Only fold 0's encoder gives informative vectors: a fold reading another fold's would show.
    finetuned = {f: FoldVectors(((labels[:, None] * 2.0 if f == 0 else 0.0) + rng.normal(size=(len(clips), 3))),
                            np.zeros(len(clips))) for f in range(3)}
    sentences = ["same words"] * len(clips)

    def design(embeddings, window):
        return np.hstack([embeddings] * (window + 1))

    fits = regression_candidates(design, sentences, labels, windows=[0, 2], Cs=[0.1, 1.0], ngram_max=1, min_df=1,
                                 finetuned=finetuned, fold=fold)
    assert [s for s, _ in fits] == [{"context_window": 0, "C": 0.1}, {"context_window": 0, "C": 1.0},
                                    {"context_window": 2, "C": 0.1}, {"context_window": 2, "C": 1.0}]
    result = nested_cross_validate(fold, inner, labels, candidates_with_heads(fits, fold, None, [0.0]), ["f1"],
                                   clips["recipe"].to_numpy(), "f1")
    for f in range(3):
        assert result.info[f]["dense_dim"] == 3 * (result.info[f]["selected"]["context_window"] + 1)
    auc = {f: (lambda s, y: (s[y][:, None] > s[~y][None, :]).mean())(result.score[fold == f], labels[fold == f])
           for f in range(3)}
    assert auc[0] > 0.9 and max(auc[1], auc[2]) < 0.75
    with pytest.raises(ValueError, match="either frozen or per-fold finetuned vectors"):
        regression_candidates(design, sentences, labels, windows=[0], Cs=[1.0], ngram_max=1, min_df=1)
