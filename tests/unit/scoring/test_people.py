"""Scoring procedures against people (cookproc.scoring.people, cookproc.evaluation.people)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cookproc.data.step_words import StepWords
from cookproc.evaluation.people import (ConstantWords, bootstrap_intervals, constant_prior, normalised_system,
                                        system_steps, table_row)
from cookproc.scoring.people import idf_weights, macro, order_tau, score_video, unseen_weight, video_scores


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
    rng = np.random.default_rng(0)
    scores = pd.DataFrame({"video_id": [f"v{i}" for i in range(50)], "n_steps": 3,
                           **{c: rng.uniform(size=50) for c in ("verbs_precision", "verbs_recall", "verbs_f1",
                                                                "idf_verbs_precision", "idf_verbs_recall",
                                                                "idf_verbs_f1", "nouns_precision", "nouns_recall",
                                                                "nouns_f1", "pairs_precision", "pairs_recall",
                                                                "pairs_f1")},
                           "order_tau": [np.nan] * 10 + list(rng.uniform(-1, 1, size=40))})
    first = bootstrap_intervals(scores, resamples=500, seed=7, confidence=0.95)
    assert first == bootstrap_intervals(scores, resamples=500, seed=7, confidence=0.95)
    row = table_row("x", scores, resamples=500, seed=7, confidence=0.95)
    assert row["verbs_f1_low"] < row["verbs_f1"] < row["verbs_f1_high"]
    assert row["order_videos"] == 40 and row["order_tau_low"] < row["order_tau"] < row["order_tau_high"]


def test_a_system_s_steps_are_its_key_clips_words():
    procedures = pd.DataFrame({
        "video_id": ["v", "v", "v"], "clip_idx": [0, 1, 2], "is_key": [False, True, True],
        "verbs": [["say"], ["Chopped"], ["put in"]], "args": [[], ["the red onions"], ["the pan"]],
        "step_verbs": [[], ["chop"], ["add"]], "step_nouns": [[], ["onion"], ["pan"]],
        "step_text": [None, "chop the red onions", "add to the pan"]})
    assert system_steps(procedures, normalised=False)["v"] == [words(["chop"], ["onion"]), words(["put"], ["pan"])]
    assert system_steps(procedures, normalised=True)["v"] == [words(["chop"], ["onion"]), words(["add"], ["pan"])]
    assert normalised_system("steps-captions") and not normalised_system("srl-heur-spacy")
