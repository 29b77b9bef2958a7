"""The caption stage's pieces: the people's split, the words of a step as people write them, the
captions' alignment, the boosted trees kept as arrays, the step text, the step model's decoding and
pair features."""
from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from cookproc.captions.align import align_video, alignment_quality, monotonic_alignment
from cookproc.captions.step_text import step_text
from cookproc.data.captions import people_split, read_video_texts
from cookproc.data.step_words import Phrase, argument_nouns, caption_words, transcript_words, verb_lemma
from cookproc.learn.boosted_trees import fit_classifier, predict_proba, tree_arrays


def test_the_people_split_is_fixed_by_the_sha1_of_the_video_id():
    for video in ("vidExtra007", "vidExtra013", "abc", "zMrDtnzoSiw"):
        prefix = hashlib.sha1(video.encode("utf-8")).hexdigest()[0]
        assert people_split(video, in_benchmark=False) == ("test" if prefix in "0123" else "train")
        assert people_split(video, in_benchmark=True) == "train"  # a benchmark video is never a people's test video


def test_the_mirror_has_the_issue_s_315_test_videos(mirror):
    import pandas as pd

    texts = read_video_texts(mirror / "youcook2/transcript", mirror / "youcook2/split")
    benchmark = set(pd.read_csv(mirror / "youcook2/reviewed_0812.csv")["VideoUrl"].dropna().str.split("v=").str[-1])
    splits = [people_split(v, v in benchmark) for v in texts]
    assert len(texts) == 1736 and splits.count("test") == 315


def test_a_caption_s_imperative_verbs_and_head_nouns():
    chop, add, season, boiled = caption_words(["crush and chop the garlic", "add oil garlic and salt to a bowl",
                                               "season with salt and cover the pot", "boil the pasta in boiled water"])
    assert chop.verbs == ("crush", "chop") and chop.nouns == ("garlic",)
    assert add.verbs == ("add",) and add.nouns == ("garlic", "salt", "bowl")  # "oil" modifies "garlic" here
    assert season.verbs == ("season", "cover") and ("season", "pot") in season.pairs
    assert boiled.verbs == ("boil",)  # the participle "boiled" is an adjective, not a step's verb


def test_one_lemmatisation_for_captions_and_systems():
    [said] = transcript_words(["we 're going to throw the chopped onions in this pan"])
    assert {"throw", "chop"} <= set(said.verbs) and said.nouns == ("onion", "pan")
    assert Phrase("onion", "the chopped onions") in said.phrases and Phrase("pan", "this pan", "in") in said.phrases
    assert verb_lemma("Chopped") == "chop" and verb_lemma("put in") == "put"
    assert argument_nouns(["the tomato sauce", "chopped onions", "the sauce"]) == ("sauce", "onion")


def brute_force(score):
    n_captions, n_sentences = score.shape
    paths = (p for p in itertools.product(range(n_sentences), repeat=n_captions)
             if all(a <= b for a, b in zip(p, p[1:])))
    return max(sum(score[i, j] for i, j in enumerate(p)) for p in paths)


def test_the_monotonic_alignment_is_the_best_order_keeping_one():
    rng = np.random.default_rng(0)
    for _ in range(200):
        score = rng.integers(0, 4, size=(rng.integers(1, 5), rng.integers(1, 6))).astype(float)
        path = monotonic_alignment(score)
        assert all(a <= b for a, b in zip(path, path[1:]))
        assert sum(score[i, j] for i, j in enumerate(path)) == brute_force(score)


def test_an_alignment_follows_the_captions_words_and_is_checked_against_key_clips():
    captions = caption_words(["chop the onions", "fry the onions in oil"])
    sentences = transcript_words(["hello everyone", "first chop the onions", "then fry them in oil", "bye"])
    vectors = np.eye(4)  # uninformative vectors: the words decide
    path, _ = align_video(np.ones((2, 4)), vectors, captions, sentences, lexical_weight=1.0)
    assert path == [1, 2]
    quality = alignment_quality({"v": path}, {"v": np.array([False, True, False, True])})
    assert (quality["precision"], quality["recall"], quality["key_share"]) == (50.0, 50.0, 50.0)


def test_boosted_trees_kept_as_arrays_predict_as_scikit_learn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 5))
    X[::9, 2] = np.nan
    y = (X[:, 0] + np.nan_to_num(X[:, 2]) * X[:, 1] > 0.2).astype(int)
    model = fit_classifier(X, y, max_iter=40, learning_rate=0.1, max_leaf_nodes=15, seed=0)
    assert np.allclose(predict_proba(tree_arrays(model), X), model.predict_proba(X)[:, 1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("verbs,nouns,expected", [
    (["add"], ["onion", "pan"], "add the chopped onions in the pan"),
    (["stir", "cook"], ["onion"], "stir and cook the chopped onions"),
    (["mix"], [], "mix"),
    ([], ["onion"], ""),
])
def test_a_step_text_is_made_of_the_step_s_words_and_the_clip_s(verbs, nouns, expected):
    [said] = transcript_words(["now throw the chopped onions in my pan"])
    assert step_text(verbs, nouns, said.phrases) == expected


def _video(sentences, verbs, nouns):
    from cookproc.captions.features import VideoText
    from cookproc.data.step_words import StepWords

    return VideoText("v", sentences, [StepWords(tuple(v), tuple(n)) for v, n in zip(verbs, nouns)],
                     np.zeros((len(sentences), 2)), word_verbs=[frozenset(v) for v in verbs])


def test_each_chosen_verb_is_a_step_of_its_own_where_the_narration_supports_it_with_its_paired_nouns():
    from cookproc.captions.model import StepModel, VideoProbabilities

    video = _video(["so here we go", "add the onions and stir them in the pan", "that is it", "stir again",
                    "and mix"], [[], ["add", "stir"], [], ["stir"], ["mix"]], [[], ["onion", "pan"], [], [], []])
    scored = VideoProbabilities(
        pairs=[(1, "add"), (1, "stir"), (3, "stir"), (2, "chop"), (1, "mix"), (4, "mix")],
        scores=np.array([0.9, 0.8, 0.5, 0.3, 0.95, 0.2]), verbs=["add", "chop", "mix", "stir"],
        verb_probability=np.array([0.9, 0.1, 0.3, 0.6]), nouns=["onion", "pan"], noun_probability=np.array([0.8, 0.4]),
        verb_nouns=[("add", "onion"), ("add", "pan"), ("stir", "pan"), ("stir", "onion"), ("mix", "pan")],
        pair_probability=np.array([0.5, 0.1, 0.3, 0.2, 0.4]))
    model = StepModel(*[None] * 12, verb_threshold=0.25, pair_threshold=0.25)
    steps = model.decode(video, scored)
    # "add", likeliest, takes sentence 1; "stir" scores highest there too, so it goes to the nearest
    # free sentence that scores it at least half as high (3), not to 0 or 2, which say nothing of it;
    # "mix" scores below half its best everywhere else (0.2 < 0.95 / 2), so it joins "add"; "chop" is
    # not chosen.
    assert steps.verbs == {1: ["add", "mix"], 3: ["stir"]}
    assert steps.nouns == {1: ["onion", "pan"], 3: ["pan"]}
    assert [s.pairs for s in steps.step_words()] == [
        (("add", "onion"), ("add", "pan"), ("mix", "onion"), ("mix", "pan")), (("stir", "pan"),)]
    assert steps.key_probability.tolist() == [0.0, 0.95, 0.3, 0.5, 0.2]
    lower = model.decode(video, scored, pair_threshold=0.15)
    assert lower.nouns == {1: ["onion", "pan"], 3: ["pan", "onion"]}  # by falling probability
    every = model.decode(video, scored, verb_threshold=0.05)
    assert every.verbs == {1: ["add", "mix"], 2: ["chop"], 3: ["stir"]}


def test_a_pair_s_features_count_the_captions_and_where_the_narration_says_it():
    from cookproc.captions.features import PAIR_FEATURES, PairStatistics, pair_candidates

    video = _video(["add the onion", "now the pan", "stir the onion well"],
                   [["add"], [], ["stir"]], [["onion"], ["pan"], ["onion"]])
    statistics = PairStatistics({("add", "onion"): 3, ("stir", "pan"): 1}, {"add": 6, "stir": 2, "chop": 1},
                                {"onion": 4, "pan": 2}, 9)
    X, pairs = pair_candidates(video, [(0, "add"), (2, "stir"), (1, "chop")], np.array([0.7, 0.6, 0.2]),
                               ["add", "chop", "stir"], np.array([0.9, 0.1, 0.5]), ["onion", "pan"],
                               np.array([0.8, 0.2]), statistics, {("add", "onion"): 0.4}, top=2)
    assert pairs == [("add", "onion"), ("add", "pan"), ("stir", "onion"), ("stir", "pan")]  # "chop" is third
    row = dict(zip(PAIR_FEATURES, X[0]))
    assert row["pair_prior"] == pytest.approx(np.log(4 / 10))
    assert row["share_of_verb"] == pytest.approx(3.5 / 7) and row["share_of_noun"] == pytest.approx(3.5 / 5)
    assert row["neighbour_videos"] == 0.4 and row["same_sentence"] == 1 and row["within_two"] == 2
    assert row["verb_score_near_noun"] == 0.7 and row["noun_mentions"] == 2 and row["verb_mentions"] == 1
    pan = dict(zip(PAIR_FEATURES, X[1]))
    assert pan["same_sentence"] == 0 and pan["within_one"] == 1 and pan["nearest"] == pytest.approx(1 / 3)
    assert pan["neighbour_videos"] == 0.0 and pan["noun_from_verb_sentence"] == pytest.approx(1 / 3)


def test_a_saved_model_keeps_the_pair_counts_and_takes_the_verb_and_noun_counts_from_their_statistics():
    from types import SimpleNamespace

    from cookproc.captions.features import NounStatistics, PairStatistics, VerbStatistics
    from cookproc.captions.training import pair_statistics
    from cookproc.scoring.people import document_frequency

    videos = [SimpleNamespace(caption_verbs=lambda: {"add", "stir"}, caption_nouns=lambda: {"onion"},
                              caption_pairs=lambda: {("add", "onion")}),
              SimpleNamespace(caption_verbs=lambda: {"add"}, caption_nouns=lambda: {"onion", "pan"},
                              caption_pairs=lambda: {("add", "pan"), ("add", "onion")})]
    assert document_frequency([["b", "a", "b"], ["a"]]) == {"a": 2, "b": 1}  # a set counts once
    counted = pair_statistics(videos)
    assert counted.df == {("add", "onion"): 2, ("add", "pan"): 1}
    assert (counted.verb_df, counted.noun_df, counted.n_videos) == ({"add": 2, "stir": 1}, {"onion": 2, "pan": 1}, 2)
    verbs = VerbStatistics(["add"], counted.verb_df, 2, {}, {}, 0.5, 0.5)
    nouns = NounStatistics(counted.noun_df, 2, {}, 0.5)
    saved = PairStatistics.of(counted.df, verbs, nouns).to_dict()
    assert set(saved) == {"df"}
    assert PairStatistics.from_dict(saved, verbs, nouns) == counted
    with pytest.raises(ValueError, match="verb statistics of 2 videos, noun statistics of 3"):
        PairStatistics.of(counted.df, verbs, NounStatistics(counted.noun_df, 3, {}, 0.5))


def test_steps_are_checked_in_time_against_the_captions_segments(tmp_path):
    import pandas as pd

    from cookproc.captions.benchmark import sentence_times, time_scores
    from cookproc.core.errors import InputError
    from cookproc.data.captions import read_caption_segments

    path = tmp_path / "urlsegmentcaption.txt"
    path.write_text("https://www.youtube.com/watch?v=vid1\t10\t20\tchop the onions\n"
                    "https://www.youtube.com/watch?v=vid1\t30\t40\tfry the onions\n", encoding="utf-8")
    assert read_caption_segments(path) == {"vid1": [(10.0, 20.0, "chop the onions"), (30.0, 40.0, "fry the onions")]}
    clips = pd.DataFrame({"video_id": ["vid1"] * 5, "clip_idx": range(5), "start_s": [0.0, 12.0, 22.0, 31.0, 45.0],
                          "end_s": [12.0, 22.0, 31.0, 45.0, np.nan]})
    times = sentence_times(clips)
    assert times["vid1"].tolist() == [6.0, 17.0, 26.5, 38.0, 45.0]  # midpoints; the last clip's start
    segments = {"vid1": [(10.0, 20.0, ("chop",)), (30.0, 40.0, ("fry",))]}
    gold = {"vid1": np.array([False, True, False, True, False])}
    # Steps at sentence 1 (in the chop segment, shares its verb), 2 (between segments) and 3 (in the fry
    # segment with another verb).
    scores = time_scores({"vid1": {1: ["chop"], 2: ["add"], 3: ["stir"]}}, times, segments, gold)
    assert scores["time_steps"] == 3 and scores["segments"] == 2
    assert scores["steps_in_segments"] == pytest.approx(200 / 3) and scores["segments_with_step"] == 100.0
    assert scores["verb_shared_in_segment"] == 50.0
    assert scores["sentences_in_segments"] == 40.0 and scores["key_clips_in_segments"] == 100.0
    path.write_text("https://www.youtube.com/watch?v=vid1\t10\tten\tchop\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1"):
        read_caption_segments(path)
