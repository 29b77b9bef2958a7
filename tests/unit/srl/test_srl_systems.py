"""Upstream's SRL heuristics (role filter, empty-frame drop, lexicon lemma filter) and the importer."""
import json

import pytest

from cookproc.core.errors import InputError
from cookproc.srl.allennlp import read_allennlp
from cookproc.srl.baselines import filter_roles, keep_role, system_rows, with_heuristics, without_heuristics
from cookproc.srl.parses import Chunk


def frame(*chunks):
    return [Chunk(role, text, i, i + 1) for i, (role, text) in enumerate(chunks)]


def lemma(word):  # a stand-in for WordNet's lemmatizer
    return {"chopped": "chop", "adding": "add", "is": "be"}.get(word, word)


@pytest.mark.parametrize("role,kept", [
    ("V", True), ("ARG1", True), ("ARG2", True), ("ARGM-TMP", True), ("ARGM-LOC", True), ("C-ARG1", True),
    ("ARGM-PRT", True), ("ARGM-PRR", True), ("ARG0", False), ("R-ARG1", False), ("R-ARGM-LOC", False),
    ("ARGM-MOD", False), ("ARGM-NEG", False), ("ARGM-DIS", False), ("ARGM-CAU", False), ("ARGM-EXT", False),
    ("ARGM-PNC", False), ("ARGM-REC", False), ("", False),
])
def test_role_filter_matches_upstream(role, kept):
    assert keep_role(role) is kept


def test_frame_left_with_only_its_verb_is_dropped():
    assert filter_roles(frame(("ARG0", "we"), ("V", "chopped"), ("ARGM-MOD", "will"))) is None
    assert [c.role for c in filter_roles(frame(("ARG0", "we"), ("V", "chopped"), ("ARG1", "it")))] == ["V", "ARG1"]


def test_lexicon_filter_outputs_the_lemma_and_args():
    parse = [
        frame(("ARG0", "we"), ("V", "chopped"), ("ARG1", "the onions"), ("C-ARG1", "finely")),
        frame(("ARG1", "it"), ("V", "is"), ("ARG2", "done")),          # 'be' not in the lexicon
        frame(("V", "adding"), ("ARGM-NEG", "not")),                   # only V left after the filter
    ]
    key, verbs, args = with_heuristics(parse, {"chop", "add"}, lemma)
    assert key and verbs == ["chop"] and args == ["the onions"]  # C-ARG1 kept for the frame, not output
    assert with_heuristics(parse[1:], {"chop", "add"}, lemma) == (False, [], [])


def test_without_heuristics_keeps_every_predicate():
    parse = [frame(("ARG0", "we"), ("V", "chopped"), ("ARGM-MOD", "will")), frame(("V", "is"))]
    assert without_heuristics(parse, verb_form="text") == (True, ["chopped", "is"], ["we", "will"])
    assert without_heuristics(parse, lemma=lemma)[1] == ["chop", "be"]
    assert without_heuristics([]) == (False, [], [])


def test_system_rows_cover_every_clip():
    parses = {("v1", 0): [frame(("V", "chopped"), ("ARG1", "it"))]}
    keys, tuples = system_rows("srl-heur-x", [("v1", 0), ("v1", 1)], parses, heuristics=True, lexicon={"chop"})
    assert [k["is_key"] for k in keys] == [True, False]
    assert tuples[0]["verbs"] == ["chop"] and tuples[1]["verbs"] == [] and tuples[1]["args"] == []


SAMPLE = {  # an AllenNLP predictor output (bert-base-srl-2019.06.17 style)
    "words": ["now", "add", "the", "chopped", "onions", "in", "the", "pan", "."],
    "verbs": [
        {"verb": "add", "description": "...",
         "tags": ["B-ARGM-TMP", "B-V", "B-ARG1", "I-ARG1", "I-ARG1", "B-ARG2", "I-ARG2", "I-ARG2", "O"]},
        {"verb": "chopped", "description": "...", "tags": ["O", "O", "O", "B-V", "B-ARG1", "O", "O", "O", "O"]},
    ],
}


def test_importer_reads_named_and_positional_lines(tmp_path):
    clips = [("vid", 0), ("vid", 1)]
    path = tmp_path / "allennlp.jsonl"
    path.write_text(json.dumps(SAMPLE) + "\n" + json.dumps({"words": ["hi", "."], "verbs": []}) + "\n")
    frames = read_allennlp(path, clips)
    add = frames[("vid", 0)][0]
    assert [(c.role, c.text) for c in add] == [("ARGM-TMP", "now"), ("V", "add"), ("ARG1", "the chopped onions"),
                                               ("ARG2", "in the pan")]
    assert frames[("vid", 1)] == []
    key, verbs, args = with_heuristics(frames[("vid", 0)], {"add", "chop"}, lemma)
    assert verbs == ["add", "chop"] and args == ["now", "the chopped onions", "in the pan", "onions"]
    named = tmp_path / "named.jsonl"
    named.write_text(json.dumps({**SAMPLE, "video_id": "vid", "clip_idx": 1}) + "\n")
    assert list(read_allennlp(named, clips)) == [("vid", 1)]


def test_importer_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    bad = dict(SAMPLE, verbs=[{"verb": "add", "tags": ["B-V"]}])
    path.write_text(json.dumps({**bad, "video_id": "vid", "clip_idx": 0}) + "\n")
    with pytest.raises(InputError, match="line 1"):
        read_allennlp(path, [("vid", 0), ("vid", 1)])
    path.write_text(json.dumps(SAMPLE) + "\n")
    with pytest.raises(InputError, match="1 lines without video_id"):
        read_allennlp(path, [("vid", 0), ("vid", 1)])
