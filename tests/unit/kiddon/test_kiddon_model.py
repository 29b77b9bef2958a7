"""Kiddon segmenter, model and training: M-step counts by hand, scores, hard EM, determinism."""
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from cookproc.core.errors import InputError
from cookproc.kiddon.training_text import read_lexicon_words, read_transcripts
from cookproc.kiddon.model import Model, bigram_events, m_step
from cookproc.kiddon.segmenter import Segmenter, Settings, training_sentences, train

THREE_SENTENCES = ["chop the onions .", "chop and mix the carrots .", "add salt ."]
LEXICON = ["chop", "mix", "add", "salt"]


def always_verb(word):
    return True


def test_bigram_events_reset_on_and_and_read_numbers():
    assert bigram_events("add", "2 cups and salt") == [
        ("PREDadd", "NUM#"), ("NUM#", "cups"), ("PREDadd", "salt"), ("salt", "END")]
    assert bigram_events("add", "salt , pepper") == [("PREDadd", "salt"), ("PREDadd", "pepper"), ("pepper", "END")]


def test_m_step_counts_on_three_sentences_by_hand():
    training_text = training_sentences([THREE_SENTENCES])
    model, history = train(training_text, LEXICON, always_verb, iterations=1)
    # E-step under the lexicon model (counts 1 + frequency: chop 3, mix 2, add 2, salt 2; N = 9):
    #   chop(the onions) | chop(the carrots) mix() | add(salt)   ("salt" cannot follow PRED "add";
    #   with "mix" a noun, the chunk "and mix the carrots" starts with "and": rejected)
    assert history[0].log_likelihood == pytest.approx(2 * math.log(3 / 9) + 2 * math.log(2 / 9))
    assert model.verb_counts == {"add": 1, "chop": 2, "mix": 1}
    assert model.n_sentences == 3 and model.total_verbs == 4
    assert model.p_predicates == pytest.approx(3 / 7)
    assert model.arg_counts == {"add": [0, 1, 0, 0], "chop": [0, 2, 0, 0], "mix": [1, 0, 0, 0]}
    assert model.bigram_counts == {
        "PREDadd": {"salt": 1}, "PREDchop": {"the": 2}, "carrots": {"END": 1}, "onions": {"END": 1},
        "salt": {"END": 1}, "the": {"carrots": 1, "onions": 1}}
    # Vocabulary: chop the onions . mix carrots add salt + END ("and" is never scored).
    assert model.vocabulary_size == 9
    assert (history[0].n_sentences, history[0].n_parsed, history[0].active_verbs) == (3, 3, 3)

    # Scores derived from those counts (K = 9 + 1 outcomes per bigram context).
    expected = (math.log(2 / 4) + math.log(3 / 6)  # count(chop)/N, P(1 argument | chop)
                + math.log(3 / 12) + math.log(2 / 12) + math.log(2 / 11))  # PREDchop>the>onions>END
    assert model.frame_logprob("chop", ["the onions"]) == pytest.approx(expected)
    assert model.arg_count_logprob("stir", 2) == pytest.approx(math.log(1 / 4))  # unseen verb
    assert model.bigram_logprob("unseen", "x") == pytest.approx(math.log(1 / 10))  # unseen context
    assert model.count_logprob(2) == pytest.approx(math.log(4 / 7) + math.log(3 / 7))


def test_m_step_weights_and_refuses_an_empty_labelling():
    model = m_step([(3, [("add", ["salt"])])], n_sentences=5, vocabulary_size=4, iteration=1)
    assert model.verb_counts == {"add": 3} and model.bigram_counts["PREDadd"] == {"salt": 3}
    with pytest.raises(ValueError, match="no sentence"):
        m_step([], n_sentences=5, vocabulary_size=4, iteration=1)


def synthetic_training_text(n=240, seed=0):
    """Imperative and chatty sentences over a few ambiguous words (salt, oil, pan are verbs too)."""
    rng = random.Random(seed)
    verbs = ["add", "chop", "stir", "mix", "heat", "pour", "salt", "oil", "cut", "put"]
    things = ["the onions", "salt", "the oil", "some water", "the pan", "two carrots", "it", "the sauce"]
    places = ["in the pan", "into the bowl", "on top", "for 10 minutes", "until soft"]
    patterns = ["{v} {t} {p} .", "{v} {t} and {w} {u} .", "now {v} {t} .", "then {v} {t} , {w} {u} {p} .",
                "so this is {t} .", "{v} and {w} {t} .", "{t} {p} ."]
    lines = [rng.choice(patterns).format(v=rng.choice(verbs), w=rng.choice(verbs), t=rng.choice(things),
                                         u=rng.choice(things), p=rng.choice(places)) for _ in range(n)]
    return training_sentences([lines[i:i + 20] for i in range(0, n, 20)]), sorted(set(verbs))


def assert_objective_never_decreases(history):
    objectives = [h.objective for h in history[1:]]  # iteration 1 scores verbs only: no objective
    assert history[0].objective is None and None not in objectives
    for before, after in zip(objectives, objectives[1:]):
        assert after >= before - 1e-9 * abs(before), objectives


def test_hard_em_objective_never_decreases_after_iteration_2():
    training_text, lexicon = synthetic_training_text()
    model, history = train(training_text, lexicon, always_verb, iterations=8)
    assert len(history) == 8 and history[-1].n_parsed > 100
    assert_objective_never_decreases(history)
    assert history[-1].objective > history[1].objective  # it did learn something


def test_recorded_iterations_after_a_fixed_point_are_exact():
    training_text, lexicon = synthetic_training_text()
    model, history = train(training_text, lexicon, always_verb, iterations=12)
    assert model.iteration == 12
    last, before = history[-1], history[-2]
    assert (last.log_likelihood, last.objective, last.n_predicates) == (
        before.log_likelihood, before.objective, before.n_predicates)
    # One more E-step and M-step by hand gives the same parameters: a true fixed point.
    segmenter = Segmenter()
    labelled = []
    for tokens in sorted(training_text):
        frames = segmenter.parse(tokens, model).frames
        if frames:
            labelled.append((training_text[tokens], frames))
    again = m_step(labelled, model.n_sentences, model.vocabulary_size, iteration=13)
    assert again.same_parameters(model)


@pytest.mark.slow
@pytest.mark.mirror
def test_hard_em_objective_never_decreases_on_real_transcripts(mirror):
    youcook2 = mirror / "youcook2"
    documents = read_transcripts(youcook2 / "transcript")[:80]
    lexicon = read_lexicon_words(youcook2 / "1.2.cooking_vocab.strict_filtered.unsorted.lst")
    from cookproc.data.wordnet import has_verb_synset

    _, history = train(training_sentences(documents), lexicon, has_verb_synset, iterations=15)
    assert_objective_never_decreases(history)
    assert history[-1].candidate_verbs <= history[0].candidate_verbs  # verbs only drop out


def test_model_json_round_trip_and_bad_files(tmp_path):
    training_text, lexicon = synthetic_training_text(n=60)
    model, _ = train(training_text, lexicon, always_verb, iterations=2, settings=Settings(max_candidates=9))
    text = model.to_json()
    again = Model.from_json(text)
    assert again.to_json() == text and Settings.from_dict(again.settings).max_candidates == 9
    with pytest.raises(InputError, match="model.json: expected a model"):
        Model.from_json('{"format": "other"}', path="model.json")
    with pytest.raises(InputError, match="not JSON"):
        Model.from_json("{", path="model.json")
    with pytest.raises(ValueError, match="unknown segmenter settings"):
        Settings.from_dict({"ignore_wrods": []})


def test_best_labelling_and_ties_keep_the_first_enumerated():
    class FixedSpace(Segmenter):
        def __init__(self, space):
            super().__init__()
            self.space = space

        def hypotheses(self, tokens, verbs):
            return self.space

    model = Model(verb_counts={"stir": 2, "mix": 2, "add": 1})
    stir, mix, add = (("stir", ()),), (("mix", ()),), (("add", ()),)
    assert FixedSpace([stir, mix]).parse(("x",), model).frames == stir
    assert FixedSpace([mix, stir]).parse(("x",), model).frames == mix
    assert FixedSpace([add, mix]).parse(("x",), model).frames == mix  # higher count wins
    skipped = Segmenter().parse(("we", "add", "salt"), model)
    assert (skipped.frames, skipped.score, skipped.skipped) == ((), None, "starts with PRP")


TRAIN_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_kiddon_model import always_verb, synthetic_training_text
from cookproc.kiddon.segmenter import train
training_text, lexicon = synthetic_training_text()
model, _ = train(training_text, lexicon, always_verb, iterations=4)
sys.stdout.write(model.to_json())
"""


@pytest.mark.slow
def test_training_is_deterministic_across_hash_seeds():
    training_text, lexicon = synthetic_training_text()
    first, _ = train(training_text, lexicon, always_verb, iterations=4)
    second, _ = train(training_text, lexicon, always_verb, iterations=4)
    assert first.to_json() == second.to_json()
    env = dict(os.environ, PYTHONHASHSEED="12345" if os.environ.get("PYTHONHASHSEED") != "12345" else "54321")
    script = TRAIN_SCRIPT.format(tests=str(Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == first.to_json()
