"""Scoring procedures against people (cookproc.scoring.people, cookproc.evaluation.people)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cookproc.data.step_words import StepWords
from cookproc.evaluation.people import (ConstantWords, bootstrap_intervals, constant_prior, normalised_system,
                                        paired_differences, table_row)
from cookproc.evaluation.people_steps import (ScoredStep, nearest_training_videos, procedure_steps,
                                              retrieval_floor_steps, steps_by_video)
from cookproc.scoring.people import (VIDEO_COLUMNS, idf_weights, macro, order_tau, score_video, shares_pair,
                                     step_alignment, unseen_weight, video_scores)


def words(verbs, nouns=()):
    return StepWords(tuple(verbs), tuple(nouns))


CAPTIONS = [words(["chop"], ["onion"]), words(["add", "stir"], ["onion", "pan"]), words(["serve"])]


def test_sets_of_verbs_nouns_and_pairs_are_scored_per_video():
    steps = [words(["chop"], ["onion"]), words(["take"], ["pan"])]
    scores = score_video(steps, CAPTIONS, idf={}, unseen=1.0)
    assert scores["verbs_precision"] == 0.5 and scores["verbs_recall"] == 0.25
    assert scores["verbs_f1"] == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert scores["nouns_precision"] == scores["nouns_recall"] == 1.0
    # Pairs within one step: (chop, onion) is a caption's; (take, pan) is not; the captions have 5.
    assert scores["pairs_precision"] == 0.5 and scores["pairs_recall"] == 0.2


def test_idf_weights_count_a_verb_less_the_more_training_videos_use_it():
    train = {"a": [words(["add", "chop"])], "b": [words(["add"])], "c": [words(["add", "knead"])]}
    idf = idf_weights(train)
    assert idf["add"] == pytest.approx(math.log(4 / 4)) and idf["knead"] == pytest.approx(math.log(4 / 2))
    scores = score_video([words(["add", "knead"])], [words(["add", "chop"])], idf, unseen_weight(3))
    assert scores["idf_verbs_precision"] == 0.0  # "add" weighs nothing: all of the matched weight
    assert scores["verbs_precision"] == 0.5


def test_order_is_kendall_tau_of_the_matched_verbs_first_steps():
    captions = [words(["chop"]), words(["fry"]), words(["serve"])]
    assert order_tau([words(["chop"]), words(["fry"]), words(["serve"])], captions) == pytest.approx(1.0)
    assert order_tau([words(["serve"]), words(["fry"]), words(["chop"])], captions) == pytest.approx(-1.0)
    assert math.isnan(order_tau([words(["chop", "fry"])], captions))  # one step: no order on our side
    assert math.isnan(order_tau([words(["chop"])], captions))  # one matched verb


def test_a_video_without_a_procedure_scores_zero_and_undefined_kinds_are_left_out():
    captions = {"v1": CAPTIONS, "v2": [words(["mix"])]}
    scores = video_scores({"v1": [words(["chop"])]}, captions, {}, 1.0)
    assert list(scores["video_id"]) == ["v1", "v2"] and scores.loc[1, "verbs_f1"] == 0.0
    assert math.isnan(scores.loc[1, "nouns_f1"])  # v2's captions name no noun
    means = macro(scores)
    assert means["nouns_f1"] == pytest.approx(100 * scores.loc[0, "nouns_f1"])  # the mean of v1 alone


def test_the_constant_prior_chooses_each_k_on_the_training_videos():
    train = {f"t{i}": [words(["add", "mix"] + (["bake"] if i % 3 == 0 else []), ["salt"])] for i in range(9)}
    prior, k = constant_prior(train, idf_weights(train), unseen_weight(9), max_k=5)
    assert prior.verbs == ("add", "mix") and k["verbs"] == 2  # "bake" (3 of 9 videos) would cost precision
    assert prior.nouns == ("salt",) and prior.pairs[:2] == (("add", "salt"), ("mix", "salt"))
    assert isinstance(prior, ConstantWords)


def test_bootstrap_intervals_are_deterministic_and_cover_the_mean():
    scores = random_scores(np.random.default_rng(0))
    first = bootstrap_intervals(scores, resamples=500, seed=7, confidence=0.95)
    assert first == bootstrap_intervals(scores, resamples=500, seed=7, confidence=0.95)
    row = table_row("x", scores, resamples=500, seed=7, confidence=0.95)
    assert row["verbs_f1_low"] < row["verbs_f1"] < row["verbs_f1_high"]
    assert row["order_videos"] == 40 and row["order_tau_low"] < row["order_tau"] < row["order_tau_high"]


def random_scores(rng, n=50):
    return pd.DataFrame({"video_id": [f"v{i:02d}" for i in range(n)], "n_steps": 3, "n_captions": 4,
                         **{c: rng.uniform(size=n) for c in VIDEO_COLUMNS if c != "order_tau"},
                         "order_tau": [np.nan] * (n // 5) + list(rng.uniform(-1, 1, size=n - n // 5))})


def test_a_system_s_steps_are_its_key_clips_words_and_texts():
    procedures = pd.DataFrame({
        "video_id": ["v", "v", "v"], "clip_idx": [0, 1, 2], "is_key": [False, True, True],
        "sentence": ["hi", "we chopped the red onions", "put in the pan"],
        "verbs": [["say"], ["Chopped"], ["put in"]], "args": [[], ["the red onions"], ["the pan"]],
        "step_verbs": [[], ["chop"], ["add"]], "step_nouns": [[], ["onion"], ["pan"]],
        "step_text": [None, "chop the red onions", "add to the pan"]})
    own = steps_by_video(procedure_steps(procedures, normalised=False))["v"]
    assert own == [ScoredStep(("chop",), ("onion",), "we chopped the red onions"),
                   ScoredStep(("put",), ("pan",), "put in the pan")]
    model = procedure_steps(procedures, normalised=True)
    assert list(model["clip_idx"]) == [1, 2] and list(model["step_idx"]) == [0, 1]
    assert steps_by_video(model)["v"] == [ScoredStep(("chop",), ("onion",), "chop the red onions"),
                                          ScoredStep(("add",), ("pan",), "add to the pan")]
    assert normalised_system("steps-captions") and not normalised_system("srl-heur-spacy")


def test_steps_align_one_to_one_in_order_with_the_most_matches():
    captions = [words(["chop"], ["onion"]), words(["add"], ["onion"]), words(["stir"]), words(["add"], ["salt"])]
    # "add" heads two steps and matches both "add" captions; the "stir" step after them cannot match
    # the earlier "stir" caption without crossing.
    steps = [words(["chop"]), words(["add"], ["onion"]), words(["add"], ["salt"]), words(["stir"])]
    assert step_alignment(steps, captions) == [(0, 0), (1, 1), (2, 3)]
    scores = score_video(steps, captions, idf={}, unseen=1.0)
    assert scores["steps_precision"] == 0.75 and scores["steps_recall"] == 0.75
    # Strict: a shared verb and a shared head noun.
    assert step_alignment(steps, captions, shares_pair) == [(1, 1), (2, 3)]
    assert scores["strict_steps_precision"] == 0.5 and scores["strict_steps_recall"] == 0.5
    # As sets, the same verbs are all matched: the set scores cannot see a lost or repeated step.
    assert scores["verbs_f1"] == 1.0
    one_step = score_video([words(["chop", "add", "stir"], ["onion", "salt"])], captions, {}, 1.0)
    assert one_step["verbs_f1"] == 1.0 and one_step["steps_recall"] == 0.25 and one_step["steps_precision"] == 1.0
    assert score_video([], captions, {}, 1.0)["steps_f1"] == 0.0


def test_the_retrieval_floor_copies_the_captions_of_the_nearest_training_transcript():
    train = {"t1": "heat the oil and fry the chicken wings until crispy", "t2": "knead the dough and bake the bread"}
    test = {"x": "today we fry chicken wings in hot oil", "y": "bake a loaf of bread from dough"}
    nearest = nearest_training_videos(train, test, min_df=1)
    assert nearest == {"x": "t1", "y": "t2"}
    captions = pd.DataFrame({"video_id": ["t1", "t1", "t2"], "caption_idx": [0, 1, 0],
                             "caption": ["heat oil", "fry the chicken", "knead the dough"],
                             "verbs": [["heat"], ["fry"], ["knead"]], "nouns": [["oil"], ["chicken"], ["dough"]]})
    steps = steps_by_video(retrieval_floor_steps(nearest, captions))
    assert steps["x"] == [ScoredStep(("heat",), ("oil",), "heat oil"), ScoredStep(("fry",), ("chicken",), "fry the chicken")]
    assert steps["y"] == [ScoredStep(("knead",), ("dough",), "knead the dough")]


def test_paired_differences_share_the_resamples_and_tau_uses_the_videos_both_define():
    rng = np.random.default_rng(1)
    a, b = random_scores(rng), random_scores(rng)
    b["order_tau"] = [np.nan] * 30 + list(rng.uniform(-1, 1, size=20))
    better = a.assign(steps_f1=np.minimum(a["steps_f1"] + 0.2, 1.0))
    rows = paired_differences({"a": a, "b": b, "better": better}, [("better", "a"), ("a", "b")], resamples=400,
                              seed=3, confidence=0.95).set_index(["system_a", "system_b", "metric"])
    gain = rows.loc[("better", "a", "steps_f1")]
    assert gain["difference"] == pytest.approx(100 * (better["steps_f1"] - a["steps_f1"]).mean())
    assert 0 < gain["ci_low"] <= gain["difference"] <= gain["ci_high"]  # paired: a sure gain stays above 0
    same = rows.loc[("better", "a", "verbs_f1")]
    assert same["difference"] == same["ci_low"] == same["ci_high"] == 0.0
    tau = rows.loc[("a", "b", "order_tau")]
    both = a["order_tau"].notna() & b["order_tau"].notna()
    assert tau["n_videos"] == both.sum() == 20
    assert tau["value_a"] == pytest.approx(a.loc[both, "order_tau"].mean())
    with pytest.raises(ValueError, match="different videos"):
        paired_differences({"a": a, "b": b.iloc[1:]}, [("a", "b")], resamples=10, seed=0, confidence=0.9)
