"""The tuple extractor's clip-level verb classifier: cross-fitting, no held-out gold, candidates."""
import numpy as np
import pandas as pd
import pytest

from cookproc.learn.folds import clip_folds, make_folds, split_indices
from cookproc.supervised import extract
from cookproc.supervised.verbclf import VerbClassifier, add_classifier_candidates
from test_supervised import LEXICON, PARAMS, lemma, toy_clips

CLASSIFIER = dict(enabled=True, sentence_vectors=True, min_count=2, C=2.0, context_weight=0.5, candidates=2)


def unsaid_verb_clips(seed=0):
    """Toy clips where a third of the annotated clips name only an ingredient and the annotators
    wrote "take" (the verb is not in the sentence): "these are the carrots"."""
    clips = toy_clips(seed=seed)
    rng = np.random.default_rng(seed + 1)
    for i in np.flatnonzero(clips["is_key"].to_numpy()):
        if rng.random() < 1 / 3:
            obj = clips.at[i, "gold_args"][0]
            clips.at[i, "sentence"] = f"these are the {obj} we bought"
            clips.at[i, "gold_verbs"] = ["take"]
            clips.at[i, "gold_args"] = [obj]
    return clips


def classifier(clips, embeddings=None, **changes):
    settings = dict(min_count=2, C=2.0, context_weight=0.5, candidates=2) | changes
    return VerbClassifier(clips["sentence"].tolist(), clips["video_id"].to_numpy(), embeddings, **settings)


def fold_split(clips, f=0):
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)
    train, val, test = split_indices(fold, inner, f)
    has_gold = np.array([bool(g) for g in clips["gold_verbs"]])
    return fold, train[has_gold[train]], np.concatenate([val, test])


def gold_sets(clips):
    return [frozenset(v) for v in clips["gold_verbs"]]


def test_classifier_finds_verbs_the_sentence_does_not_say():
    clips = unsaid_verb_clips()
    fold, train, others = fold_split(clips)
    probs, verbs = classifier(clips).probabilities(gold_sets(clips), fold, train, others)
    assert probs.shape == (len(clips), len(verbs)) and "take" in verbs
    unsaid = [i for i in others if clips.at[i, "gold_verbs"] == ["take"]]
    assert len(unsaid) >= 3
    assert all(verbs[int(np.argmax(probs[i]))] == "take" for i in unsaid)
    # Clips outside the fold's training and held-out clips get no probabilities.
    outside = np.setdiff1d(np.arange(len(clips)), np.union1d(train, others))
    assert np.all(probs[outside] == 0)


def test_training_clips_are_scored_by_classifiers_that_never_saw_them():
    clips = unsaid_verb_clips()
    fold, train, others = fold_split(clips)
    gold = gold_sets(clips)
    probs, _ = classifier(clips).probabilities(gold, fold, train, others)
    # Flip the gold verbs of one training fold between two verbs: that fold's own rows do not move
    # (they come from classifiers fitted on the other training folds), the held-out rows do.
    part = train[fold[train] == fold[train][0]]
    swap = {"add": "chop", "chop": "add"}
    poisoned = [frozenset(swap.get(v, v) for v in g) if i in set(part) else g for i, g in enumerate(gold)]
    again, _ = classifier(clips).probabilities(poisoned, fold, train, others)
    np.testing.assert_array_equal(probs[part], again[part])
    assert not np.allclose(probs[others], again[others])


def test_held_out_gold_is_never_read():
    clips = unsaid_verb_clips()
    fold, train, others = fold_split(clips)
    gold = gold_sets(clips)
    rng = np.random.default_rng(3)
    embeddings = rng.normal(size=(len(clips), 4))
    probs, verbs = classifier(clips, embeddings).probabilities(gold, fold, train, others)
    poisoned = [frozenset({"explode"}) if i in set(others) else g for i, g in enumerate(gold)]
    again, verbs_again = classifier(clips, embeddings).probabilities(poisoned, fold, train, others)
    assert verbs == verbs_again
    np.testing.assert_array_equal(probs, again)


def test_classifier_candidates_join_with_their_features():
    cands = pd.DataFrame({"clip": [0, 0, 1], "text": ["add", "salt", "stir"], "pos": [0.1, 0.5, 0.2],
                          "n_words_clip": [1.5, 1.5, 2.0], "in_lexicon": [1.0, 0.0, 1.0], "prevword": ["a", "b", "c"]})
    probs = np.array([[0.6, 0.3, 0.1], [0.2, 0.1, 0.7], [0.9, 0.05, 0.05]])
    out = add_classifier_candidates(cands, probs, ["add", "chop", "stir"], np.array([0, 1]), top_k=2)
    got = {(c, t): (s, p) for c, t, s, p in zip(out["clip"], out["text"], out["src_classifier"], out["clf_p"])}
    # Clip 0 proposes add (already a candidate) and chop; clip 1 stir (present) and add; clip 2 nothing.
    assert got == {(0, "add"): (0.0, 0.6), (0, "salt"): (0.0, 0.0), (0, "chop"): (1.0, 0.3),
                   (1, "stir"): (0.0, 0.7), (1, "add"): (1.0, 0.2)}
    new = out[out["src_classifier"] > 0].set_index("text")
    assert new.loc["chop", "n_words_clip"] == 1.5 and new.loc["add", "prevword"] == ""
    assert np.allclose(out["clf_ratio"], out["clf_p"] / out["clf_max"])
    assert list(zip(out["clip"], out["text"])) == sorted(zip(out["clip"], out["text"]))


def run_extractor(clips, verb_classifier, embeddings):
    params = PARAMS | {"verb_classifier": verb_classifier, "prior_verbs": 0}  # no frequent-verb proposals
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)
    setups = extract.build_setups(clips, {}, [[] for _ in range(len(clips))], LEXICON, lemma, params, embeddings)
    preds, _ = extract.run(clips, fold, inner, setups, params)
    return preds["verbs"], fold


def test_extractor_recovers_unsaid_verbs_only_with_the_classifier():
    clips = unsaid_verb_clips()
    embeddings = np.random.default_rng(0).normal(size=(len(clips), 4))
    unsaid = [i for i, g in enumerate(clips["gold_verbs"]) if g == ["take"]]
    with_clf, fold = run_extractor(clips, CLASSIFIER, embeddings)
    without, _ = run_extractor(clips, CLASSIFIER | {"enabled": False}, None)
    assert np.mean(["take" in with_clf[i] for i in unsaid]) > 0.9
    assert not any("take" in without[i] for i in unsaid)  # no other source proposes it here
    # Poisoned held-out gold leaves that fold's predictions as they were.
    poisoned = clips.copy()
    in0 = np.flatnonzero(fold == 0)
    poisoned.loc[in0, "gold_verbs"] = pd.Series([["explode"]] * len(in0), index=poisoned.index[in0])
    again, _ = run_extractor(poisoned, CLASSIFIER, embeddings)
    assert [with_clf[i] for i in in0] == [again[i] for i in in0]


def test_sentence_vectors_must_be_given_when_configured():
    clips = toy_clips()
    with pytest.raises(ValueError, match="no sentence vectors"):
        extract.build_setups(clips, {}, [[] for _ in range(len(clips))], LEXICON, lemma,
                             PARAMS | {"verb_classifier": CLASSIFIER}, None)


def test_cross_fitting_parts_are_folds_or_else_halves_of_videos_or_clips():
    parts = VerbClassifier._cross_fit_parts
    fold = np.array([1, 1, 2, 3, 3])
    assert [m.tolist() for m in parts(fold, np.array(list("aabcc")))] == [
        [True, True, False, False, False], [False, False, True, False, False], [False, False, False, True, True]]
    halves = parts(np.zeros(5, int), np.array(list("aabcc")))  # one fold: videos a, c vs b
    assert [m.tolist() for m in halves] == [[True, True, False, True, True], [False, False, True, False, False]]
    halves = parts(np.zeros(3, int), np.array(list("aaa")))  # one video: alternate clips
    assert [m.tolist() for m in halves] == [[True, False, True], [False, True, False]]
    with pytest.raises(ValueError, match="at least two training clips"):
        parts(np.zeros(1, int), np.array(["a"]))


def test_nested_selection_keeps_the_classifier_where_inner_validation_needs_it_and_reads_no_test_gold():
    clips = unsaid_verb_clips()
    embeddings = np.random.default_rng(0).normal(size=(len(clips), 4))
    params = PARAMS | {"verb_classifier": CLASSIFIER, "prior_verbs": 0,
                       "selection": {"candidates": {"verb_classifier": [False, True],
                                                    "boosting": [{"max_iter": 15, "learning_rate": 0.2,
                                                                  "max_leaf_nodes": 7}]}}}
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)

    def run(data):
        setups = extract.build_setups(data, {}, [[] for _ in range(len(data))], LEXICON, lemma, params, embeddings)
        return extract.run(data, fold, inner, setups, params)

    preds, info = run(clips)
    for f, fold_info in info["verbs"].items():
        # Only the classifier proposes the unsaid "take": every fold keeps it, after comparing both.
        assert fold_info["selected"]["verb_classifier"] is True, f
        assert [row["verb_classifier"] for row in fold_info["candidates"]] == [False, True]
        assert fold_info["candidates"][1]["value"] > fold_info["candidates"][0]["value"]
    assert "selected" not in info["arguments"][0]  # one candidate: nothing to choose
    with_clf, _ = run_extractor(clips, CLASSIFIER, embeddings)
    assert preds["verbs"] == with_clf  # the chosen candidate is fitted exactly as without selection
    poisoned = clips.copy()
    in0 = np.flatnonzero(fold == 0)
    poisoned.loc[in0, "gold_verbs"] = pd.Series([["explode"]] * len(in0), index=poisoned.index[in0])
    again, info_again = run(poisoned)
    assert [preds["verbs"][i] for i in in0] == [again["verbs"][i] for i in in0]
    assert info_again["verbs"][0]["candidates"] == info["verbs"][0]["candidates"]
    with pytest.raises(ValueError, match="a boosting candidate needs exactly"):
        extract.model_candidates(params | {"selection": {"candidates": {"boosting": [{"max_iter": 5}]}}},
                                 extract.build_setups(clips, {}, [[] for _ in range(len(clips))], LEXICON, lemma,
                                                      params, embeddings)["verbs"])
