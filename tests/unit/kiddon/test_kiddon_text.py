"""Kiddon segmenter, text side: tokens, the original sentence splitter, word classes, ignore rules."""
import pytest

from cookproc.kiddon.text import (CAND, CC, CD, COMMA, DT, IN, NN, OPEN, PRP, PUNCT, RB, TO, VBG, WH,
                                  base_tags, candidate_tags, ignore_reason, is_base_verb, split_sentences,
                                  tokenize, word_class)

VERBS = frozenset({"chop", "mix", "put", "add", "salt", "pan", "oven", "cook", "stir"})


def tags_of(sentence, verbs=VERBS, **options):
    words = [w.lower() for w in tokenize(sentence)]
    return candidate_tags(words, base_tags(words, **options), verbs)


def test_tokenize_peels_punctuation_and_keeps_contractions():
    assert tokenize("now, add 2 cups.") == ["now", ",", "add", "2", "cups", "."]
    assert tokenize("we 're (almost) done?") == ["we", "'re", "(", "almost", ")", "done", "?"]
    assert tokenize("at 5 p.m. add 1.5 cups... ok") == ["at", "5", "p.m.", "add", "1.5", "cups", "...", "ok"]
    assert tokenize("a *very* good") == ["a", "very", "good"]


def test_sentences_split_at_periods_except_after_amounts():
    tokens = tokenize("add 2 cups. stir it. then serve?")
    # "cups ." does not end a sentence upstream: the first two lines merge.
    assert [tokens[a:b] for a, b in split_sentences(tokens)] == [
        ["add", "2", "cups", ".", "stir", "it", "."], ["then", "serve", "?"]]
    tokens = tokenize("chop the onions. . add salt; mix")
    # A sentence that is only a period is dropped; ";" ends a sentence.
    assert [tokens[a:b] for a, b in split_sentences(tokens)] == [
        ["chop", "the", "onions", "."], ["add", "salt", ";"], ["mix"]]


def test_word_classes():
    expected = {"in": IN, "to": TO, "finely": RB, "through": RB, "then": RB, "we": PRP, "and": CC,
                "how": WH, "cooking": VBG, "the": DT, "10": CD, "two": CD, ",": COMMA, "?": PUNCT,
                "salt": OPEN, "pudding": OPEN, "apply": OPEN, "i": OPEN}
    assert {w: word_class(w) for w in expected} == expected


def test_base_verbs_read_as_verbs_on_their_own():
    assert [w for w in ("add", "mix", "stir", "chop", "salt", "pepper", "oil", "added") if is_base_verb(w)] == [
        "add", "mix", "stir", "chop"]


def test_tags_chop_and_mix_the_onions():
    assert tags_of("chop and mix the onions") == [CAND, CC, CAND, DT, NN]


def test_tags_put_the_pan_in_the_oven():
    # "pan" and "oven" are verbs of the model but follow a determiner: nouns.
    assert tags_of("put the pan in the oven for 10 minutes") == [CAND, DT, NN, IN, DT, NN, IN, CD, NN]


def test_tags_we_re_going_to_add_salt():
    # A candidate stays one after "to" (the E-step then refuses PRED there), unlike after "in".
    assert tags_of("we 're going to add salt") == [PRP, NN, VBG, TO, CAND, CAND]
    assert tags_of("cook in salt") == [CAND, IN, NN]


def test_closed_class_words_after_determiners_are_nouns_and_switches():
    assert tags_of("the in then") == [DT, NN, RB]
    assert tags_of("then i stir", then_is_conjunction=True, lowercase_i_is_pronoun=True) == [CC, PRP, CAND]
    assert tags_of("then i stir") == [RB, NN, CAND]


@pytest.mark.parametrize("sentence, reason", [
    ("we 're going to add salt", "starts with PRP"),
    ("the salt goes in", "starts with DT"),
    (", add salt", "starts with ,"),
    ("add salt , it will be fine", "contains 'will'"),
    ("stir , do not burn it", "contains 'not'"),
    ("mail me @ home", "contains @"),
    ("add what I said", "contains 'I'"),
    ("add salt", None),
    ("now i add salt", None),  # ASR's lowercase "i" is not the capital-I rule
])
def test_ignore_rules(sentence, reason):
    tokens = tokenize(sentence)
    assert ignore_reason(tokens, tags_of(sentence)) == reason


def test_ignore_rules_options():
    tokens = tokenize("now i add salt")
    assert ignore_reason(tokens, tags_of("now i add salt"), ignore_words=("i",)) == "contains 'i'"
    assert ignore_reason(tokenize("add what I said"), tags_of("add what I said"), ignore_capital_i=False) is None
    # More candidate verbs than allowed (the search is exhaustive).
    sentence = "add salt , stir , chop , mix"
    assert ignore_reason(tokenize(sentence), tags_of(sentence), max_candidates=3) == "5 candidate verbs"
    assert ignore_reason(tokenize(sentence), tags_of(sentence), max_candidates=5) is None
