"""Kiddon segmenter, hypothesis space: chunking, the E-step's constraint checks, enumeration."""
from cookproc.kiddon.search import (argument_chunk, argument_has_noun, coordination_is_clean, extract_frames,
                                    frames_are_wellformed, pred_follows_preposition, valid_labellings,
                                    verbs_are_coordinated)
from cookproc.kiddon.text import CAND, CC, COMMA, DT, IN, NN, PRED, base_tags, candidate_tags, tokenize

VERBS = frozenset({"chop", "mix", "put", "add", "salt", "pan", "oven", "cook", "stir", "heat", "pepper"})


def prepared(sentence):
    words = [w.lower() for w in tokenize(sentence)]
    return words, candidate_tags(words, base_tags(words), VERBS)


def labelled(sentence, preds):
    """Words and tags with the candidates at positions ``preds`` as PRED, the others NN."""
    words, tags = prepared(sentence)
    return words, [(PRED if i in preds else NN) if t == CAND else t for i, t in enumerate(tags)]


def test_chop_and_mix_the_onions_gives_the_object_to_chop():
    words, tags = labelled("chop and mix the onions", {0, 2})
    assert extract_frames(words, tags) == [("chop", ["the onions"]), ("mix", [])]
    # The only well-formed labelling: with "mix" as a noun, "and mix the onions" starts with "and".
    assert valid_labellings(*prepared("chop and mix the onions")) == [
        (("chop", ("the onions",)), ("mix", ()))]


def test_put_the_pan_in_the_oven_chunks():
    words, tags = labelled("put the pan in the oven for 10 minutes", {0})
    assert extract_frames(words, tags) == [("put", ["the pan", "in the oven", "for 10 minutes"])]


def test_chunks_before_the_first_predicate_join_its_frame():
    words, tags = labelled("now add the salt and pepper .", {1})
    assert extract_frames(words, tags) == [("add", ["now", "the salt and pepper"])]


def test_argument_chunk_rules():
    def chunk(sentence, start, preds=()):
        words, tags = labelled(sentence, set(preds))
        return argument_chunk(words, tags, start)

    assert chunk("add the boiling water", 1, [0]) == ("the boiling water", 4)  # VBG before a noun
    assert chunk("add salt boiling the water", 1, [0]) == ("salt", 2)  # VBG before a determiner stops
    assert chunk("cook until it is golden in the pan", 1, [0]) == ("until it is golden in the pan", 8)
    assert chunk("cook for 2 to 3 minutes", 1, [0]) == ("for 2 to 3 minutes", 6)  # TO after a number
    assert chunk("add a cup of flour", 1, [0]) == ("a cup of flour", 5)  # "of" continues
    assert chunk("add salt and stir", 1, [0, 3]) == ("salt", 3)  # the conjunction is dropped
    assert chunk("add salt , and stir", 1, [0, 4]) == ("salt", 4)  # ... with the comma before it
    assert chunk("add salt , stir", 1, [0, 3]) == ("salt", 3)  # a trailing comma is dropped
    assert chunk("add salt .", 1, [0]) == ("salt", 3)  # a final period is dropped
    assert chunk("add gently the salt", 1, [0]) == ("gently", 2)  # a lone adverb
    assert chunk("add and stir", 1, [0, 2]) == (None, 2)  # nothing but the conjunction


def test_a_pred_needs_coordination_or_a_base_verb_after_plain_words():
    words, tags = labelled("add salt pepper", {0, 2})
    assert not verbs_are_coordinated(words, tags)  # "pepper" is no verb on its own
    words, tags = labelled("heat the oil stir it", {0, 3})
    assert verbs_are_coordinated(words, tags)  # "stir" is
    words, tags = labelled("add salt and pepper", {0, 3})
    assert verbs_are_coordinated(words, tags)  # "and" coordinates
    words, tags = labelled("mix , the salt", {0})
    assert not verbs_are_coordinated(words, tags)  # "PRED ," not followed by a PRED
    words, tags = labelled("mix , stir the salt", {0, 2})
    assert verbs_are_coordinated(words, tags)


def test_coordination_must_be_clean():
    assert coordination_is_clean([PRED, DT, NN, CC, PRED])  # add the onions and stir
    assert not coordination_is_clean([PRED, NN, COMMA, NN, CC, PRED])  # add salt , pepper and stir
    assert coordination_is_clean([PRED, NN, CC, NN])  # add salt and pepper
    assert not coordination_is_clean([PRED, CC, DT, NN])  # add and the salt
    assert coordination_is_clean([PRED, NN, CC])  # a final conjunction is not checked


def test_no_pred_after_a_preposition_or_a_pred():
    assert pred_follows_preposition([NN, IN, PRED])
    assert pred_follows_preposition([PRED, PRED])
    assert not pred_follows_preposition([PRED, DT, NN, CC, PRED])
    # Enumeration prunes them: "add salt" cannot make "salt" a second PRED.
    assert valid_labellings(*prepared("add salt")) == [(("add", ("salt",)),)]


def test_argument_lists_and_nouns():
    assert not frames_are_wellformed([("add", ["and salt"])])
    assert not frames_are_wellformed([("add", ["salt , and pepper"])])  # "a , and b" is not a list
    assert frames_are_wellformed([("add", ["salt , pepper , and oil"])])
    # Only frames before the last need noun-like arguments and "and" in comma lists.
    assert frames_are_wellformed([("add", ["the"])])
    assert not frames_are_wellformed([("add", ["the"]), ("stir", [])])
    assert not frames_are_wellformed([("add", ["salt , pepper"]), ("stir", [])])
    assert argument_has_noun("quickly") and argument_has_noun("in the pan") and not argument_has_noun("in the")


def test_enumeration_order_and_forced_first_pred():
    words, tags = prepared("heat the oil , add the onions and cook until soft .")
    found = valid_labellings(words, tags)
    # "heat" (first word) is always PRED; NN before PRED at each later candidate.
    assert found == [
        (("heat", ("the oil",)), ("add", ("the onions and cook", "until soft"))),
        (("heat", ("the oil",)), ("add", ("the onions",)), ("cook", ("until soft",))),
    ]
