"""BIO <-> spans, upstream's chunking quirks, constrained Viterbi."""
import numpy as np
import pytest

from cookproc.srl.bio import OverlapError, allennlp_chunks, bio_to_spans, spans_to_bio, viterbi_decode


def test_spans_round_trip():
    spans = [("ARG0", 0, 1), ("V", 1, 2), ("ARG1", 2, 4)]
    tags = spans_to_bio(5, spans)
    assert tags == ["B-ARG0", "B-V", "B-ARG1", "I-ARG1", "O"]
    assert bio_to_spans(tags) == spans


def test_overlapping_spans_are_refused():
    with pytest.raises(OverlapError):
        spans_to_bio(4, [("ARG1", 0, 3), ("ARGM-TMP", 2, 4)])


def test_stray_inside_tag_after_outside_opens_a_span():
    # CoNLL convention: I-X after O (or after another role) starts a new X span.
    assert bio_to_spans(["O", "I-ARG1", "I-ARG1", "B-V"]) == [("ARG1", 1, 3), ("V", 3, 4)]
    assert bio_to_spans(["B-ARG0", "I-ARG1"]) == [("ARG0", 0, 1), ("ARG1", 1, 2)]


def test_allennlp_chunks_reproduce_upstream_quirks():
    words = ["a", "b", "c", "d", "e"]
    # I- after O continues with the *previous* chunk's type; I-X after B-Y extends Y.
    tags = ["B-ARG0", "O", "I-ARG1", "B-V", "I-ARG1"]
    assert allennlp_chunks(tags, words) == [("ARG0", 0, 1), ("ARG0", 2, 3), ("V", 3, 5)]
    # A leading stray I- has the empty type (upstream's filter then drops it).
    assert allennlp_chunks(["I-ARG1", "B-V"], ["x", "y"]) == [("", 0, 1), ("V", 1, 2)]


def test_viterbi_respects_bio_and_forced_predicate():
    labels = ["O", "B-ARG1", "I-ARG1", "B-V"]
    lp = np.log(np.array([
        [0.1, 0.1, 0.7, 0.1],   # I-ARG1 is best but cannot start a sentence
        [0.1, 0.1, 0.7, 0.1],
        [0.1, 0.1, 0.1, 0.7],
    ]))
    path = viterbi_decode(lp, labels)
    assert [labels[i] for i in path] == ["B-ARG1", "I-ARG1", "B-V"]
    # Forcing word 0 to B-V and banning B-V elsewhere.
    path = viterbi_decode(lp, labels, forced={0: 3}, banned=[3])
    tags = [labels[i] for i in path]
    assert tags[0] == "B-V" and "B-V" not in tags[1:]
    assert bio_to_spans(tags)  # decodes cleanly
    assert not any(t.startswith("I-") and tags[k - 1] == "O" for k, t in enumerate(tags) if k)
