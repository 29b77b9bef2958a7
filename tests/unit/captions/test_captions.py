"""The caption stage's pieces: the people's split, the words of a step as people write them, the
captions' alignment, the boosted trees kept as arrays, the step text, the step model's decoding and
pair features."""
from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from cookproc.captions.align import align_video, alignment_quality, monotonic_alignment
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


@pytest.mark.parametrize("sentence,verbs,nouns,text", [
    # The verb's own object and one place; the subject of the sentence is never written.
    ("when you see bubbles flip the pancake", ["flip"], ["bubble", "pancake"], "flip the pancake"),
    ("first whisk two eggs with the milk in a large bowl", ["whisk"], ["egg", "milk", "bowl"],
     "whisk two eggs with the milk in a large bowl"),
    # One place a step, after its own verb's objects; a time is no place.
    ("heat a pan over medium heat and melt some butter", ["heat", "melt"], ["pan", "heat", "butter"],
     "heat a pan over medium heat and melt some butter"),
    ("cook the other side for another minute", ["cook"], ["side", "minute"], "cook the other side"),
    # A verb the narration says another way writes the objects of the sentence's action.
    ("now throw my chopped onions in", ["add"], ["onion"], "add the chopped onions"),
    # Only chosen nouns are written ("a pinch of" is not), and a mis-tagged imperative still has a clause.
    ("add the flour and a pinch of salt", ["add"], ["flour", "salt"], "add the flour and salt"),
    ("season it with salt and pepper", ["season"], ["salt", "pepper"], "season with salt and pepper"),
    ("give it a good stir", ["stir"], [], "stir"),
])
def test_a_step_text_is_its_verbs_then_their_own_objects_then_one_place(sentence, verbs, nouns, text):
    from cookproc.captions.step_text import write_step

    [said] = transcript_words([sentence])
    written, written_nouns = write_step(verbs, nouns, said.clauses, said.phrases)
    assert written == text
    assert set(written_nouns) <= set(nouns) and set(written_nouns) <= set(said.nouns)  # one list, all said
    assert written.split()[0] == verbs[0]


def test_a_noun_said_in_the_step_s_run_follows_its_objects():
    from cookproc.captions.step_text import write_step

    own, before = transcript_words(["now add it to the pot", "here are the diced tomatoes"])
    text, nouns = write_step(["add"], ["tomato", "pot"], own.clauses, own.phrases + before.phrases)
    assert (text, nouns) == ("add the diced tomatoes to the pot", ("tomato", "pot"))
    assert write_step([], ["tomato"], own.clauses, own.phrases) == ("", ())


def _video(sentences):
    from cookproc.captions.features import VideoText

    words = transcript_words(sentences)
    return VideoText("v", sentences, words, np.zeros((len(sentences), 2)),
                     word_verbs=[frozenset(w.verbs) for w in words])


def _model(**settings):
    from cookproc.captions.model import StepModel, StepModelSettings

    values = {"also_verb_threshold": 0.1, "said_verb_share": 0.5, "support_threshold": 0.05, "suppression_window": 1, "max_verbs": 2,
              "run_window": 1, "max_nouns": 5} | settings
    return StepModel(StepModelSettings(*[None] * 15, **values, seed=0), *[None] * 9, verb_threshold=0.25,
                     step_threshold=0.3, noun_threshold=0.3)


def test_steps_are_decided_first_then_their_words_from_their_own_sentences():
    from cookproc.captions.model import VideoProbabilities

    video = _video(["hi guys welcome back", "chop the onions", "now add the onions to the pan and stir", "keep it moving",
                    "when you see bubbles stir again", "and add the garlic too", "thanks for watching"])
    scored = VideoProbabilities(
        pairs=[(0, "welcome"), (1, "chop"), (2, "add"), (2, "stir"), (3, "stir"), (4, "see"), (4, "stir"),
               (5, "add"), (6, "serve"), (6, "thank")],
        scores=np.array([0.2, 0.8, 0.9, 0.12, 0.6, 0.4, 0.65, 0.7, 0.06, 0.3]),
        verbs=["add", "chop", "see", "serve", "stir", "thank", "welcome"],
        verb_probability=np.array([0.9, 0.6, 0.05, 0.3, 0.7, 0.05, 0.02]),
        nouns=["bubble", "garlic", "guy", "onion", "pan"], noun_probability=np.array([0.4, 0.5, 0.1, 0.8, 0.6]))
    steps = _model().decode(video, scored)
    # "add" heads a step each time the narration gives it; sentence 3 scores "stir" without saying it, and
    # its neighbour says it and scores it better: one step; the greeting and the sign-off (verbs the video model rejects) are no steps; "serve",
    # likely in the video but given by no sentence strongly enough, gets a step at its best sentence
    # (0.06 >= the support threshold). Sentence 2 says "stir", which scores enough there to join its step.
    assert steps.verbs == {1: ["chop"], 2: ["add", "stir"], 4: ["stir"], 5: ["add"], 6: ["serve"]}
    assert steps.texts[1] == "chop the onions" and steps.nouns[1] == ("onion",)
    assert steps.texts[2] == "add the onions to the pan and stir" and steps.nouns[2] == ("onion", "pan")
    assert steps.texts[4] == "stir" and steps.nouns[4] == ()  # "bubbles" belongs to "see", not to the step
    assert steps.texts[5] == "add the garlic" and steps.texts[6] == "serve"
    assert steps.runs == {1: (0, 1), 2: (2, 3), 4: (4, 4), 5: (5, 5), 6: (6, 6)}
    assert steps.key_probability.tolist() == [0.2, 0.8, 0.9, 0.6, 0.65, 0.7, 0.3]
    assert 6 not in _model(support_threshold=0.1).decode(video, scored).verbs  # not given: no step
    fewer = _model().decode(video, scored, step_threshold=0.75)
    assert fewer.verbs == {1: ["chop"], 2: ["add", "stir"], 6: ["serve"]}


def test_steps_are_checked_in_time_against_the_captions_segments(tmp_path):
    import pandas as pd

    from cookproc.captions.benchmark import sentence_times, time_scores
    from cookproc.core.errors import InputError
    from cookproc.data.captions import read_caption_segments

    path = tmp_path / "urlsegmentcaption.txt"
    path.write_text("https://www.youtube.com/watch?v=vid1\t10\t20\tchop the onions\n"
                    "cc\t60\t81\tplace the dough\n"  # as five lines of the pinned file: no video named
                    "https://www.youtube.com/watch?v=vid1\t30\t40\tfry the onions\n", encoding="utf-8")
    assert read_caption_segments(path) == (
        {"vid1": [(10.0, 20.0, "chop the onions"), (30.0, 40.0, "fry the onions")]}, [2])
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


def test_the_mirror_s_caption_segments_are_read_and_the_five_without_a_video_named(mirror):
    from cookproc.data.captions import read_caption_segments

    segments, no_video = read_caption_segments(mirror / "youcook2/urlsegmentcaption.txt")
    assert no_video == [12664, 12665, 12666, 12667, 12668]
    assert sum(map(len, segments.values())) == 13829 - 5 and "zMrDtnzoSiw" in segments
