"""Kiddon segmenter, outputs: role assignment, the two tuple layouts, upstream's match-back, tables."""
import pytest

from cookproc.kiddon.model import Model
from cookproc.kiddon.outputs import (FRAMES, FRAMES_KEY, clip_tuples, frames_table, key_clips, keyclips_table,
                                     segment_clips, tuples_table, upstream_matched)
from cookproc.kiddon.roles import DOBJ, OARG, PARG, Argument, assign_roles
from cookproc.kiddon.segmenter import Segmenter
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIP_KEY, KEYCLIPS, TUPLES


def test_roles_of_put_the_pan_in_the_oven():
    assert assign_roles(["the pan", "in the oven", "for 10 minutes"]) == [
        Argument(DOBJ, "the pan"), Argument(PARG, "the oven", "in"), Argument(PARG, "10 minutes", "for")]


@pytest.mark.parametrize("chunks, expected", [
    # The longest plain chunk is the object; lists are printed with commas, as upstream writes them.
    (["now", "the salt and pepper"], [(DOBJ, "the salt, pepper", None), (OARG, "now", None)]),
    (["it", "the big bowl"], [(DOBJ, "the big bowl", None), (OARG, "it", None)]),
    (["the dough", "really nice and smooth"], [(DOBJ, "the dough", None), (OARG, "really nice, smooth", None)]),
    (["gently", "what you want"], [(OARG, "gently", None), (OARG, "what you want", None)]),
    (["10 minutes", "the rice"], [(DOBJ, "the rice", None), (OARG, "10 minutes", None)]),  # a duration
    (["about 10 minutes"], [(PARG, "10 minutes", "about")]),  # prepositions come first
    (["to taste"], [(PARG, "taste", "to")]),  # "taste" reads as a noun
    (["to boil", "the water"], [(DOBJ, "the water", None), (OARG, "to boil", None)]),
    (["until golden brown"], [(PARG, "golden brown", "until")]),
])
def test_role_assignment(chunks, expected):
    assert [(a.role, a.text, a.prep) for a in assign_roles(chunks)] == expected


def test_upstream_match_back_misses_sentences_merged_after_an_amount():
    assert upstream_matched(["add 2 cups.", "stir it.", "serve?", "add salt."]) == [False, False, True, True]
    assert upstream_matched(["add salt", "stir it."]) == [False, False]  # no final period: merged


MODEL = Model(verb_counts={"chop": 3, "mix": 2, "add": 4, "put": 2, "stir": 2})
CLIPS = [
    ("vid1", 0, "chop and mix the onions."),
    ("vid1", 1, "we 're going to add salt."),
    ("vid1", 2, "add 2 cups."),
    ("vid1", 3, "stir it."),
    ("vid2", 0, "put the pan in the oven for 10 minutes."),
]


@pytest.fixture(scope="module")
def rows():
    return segment_clips(CLIPS, MODEL, Segmenter())


def test_frame_rows(rows):
    first = [(r["clip_idx"], r["frame_idx"], r["arg_idx"], r["role"], r["text"], r["prep"]) for r in rows
             if r["video_id"] == "vid1" and r["clip_idx"] == 0]
    assert first == [(0, 0, 0, "PRED", "chop", None), (0, 0, 1, DOBJ, "the onions", None),
                     (0, 1, 0, "PRED", "mix", None)]
    assert {(r["video_id"], r["clip_idx"]) for r in rows} == {("vid1", 0), ("vid1", 2), ("vid1", 3), ("vid2", 0)}
    assert {r["clip_idx"]: r["upstream_matched"] for r in rows if r["video_id"] == "vid1"} == {
        0: True, 2: False, 3: False}


def test_layouts_and_key_clips(rows):
    keys = [(v, c) for v, c, _ in CLIPS]
    every = clip_tuples(rows, keys, "all")
    paper = clip_tuples(rows, keys, "first-frame")
    assert every[("vid1", 0)] == (["chop", "mix"], ["the onions"])
    assert paper[("vid1", 0)] == (["chop"], ["the onions"])  # first frame only
    assert every[("vid1", 2)] == (["add"], ["2 cups"])
    assert paper[("vid1", 2)] == ([], [])  # merged with the next line upstream: no SENT match
    assert every[("vid1", 1)] == paper[("vid1", 1)] == ([], [])  # skipped sentence
    assert every[("vid2", 0)] == (["put"], ["the pan", "the oven", "10 minutes"])
    assert key_clips(rows, keys) == {("vid1", 0): True, ("vid1", 1): False, ("vid1", 2): True,
                                     ("vid1", 3): True, ("vid2", 0): True}
    with pytest.raises(ValueError, match="layout"):
        clip_tuples(rows, keys, "paper")
    with pytest.raises(KeyError, match="not among the benchmark clips"):
        clip_tuples(rows, keys[:3], "all")


def test_tables_match_the_shared_schemas(rows, tmp_path):
    keys = [(v, c) for v, c, _ in CLIPS]
    write_parquet(frames_table(rows), tmp_path / "frames.parquet", FRAMES, sort_keys=FRAMES_KEY)
    write_parquet(keyclips_table(key_clips(rows, keys), "kiddon"), tmp_path / "k.parquet", KEYCLIPS, sort_keys=CLIP_KEY)
    write_parquet(tuples_table(clip_tuples(rows, keys, "all"), "kiddon"), tmp_path / "t.parquet", TUPLES,
                  sort_keys=CLIP_KEY)
    keyclips = read_parquet(tmp_path / "k.parquet", KEYCLIPS).to_pylist()
    assert len(keyclips) == len(CLIPS) and {r["system"] for r in keyclips} == {"kiddon"}
    assert all(r["score"] is None and r["fold"] is None for r in keyclips)
    assert read_parquet(tmp_path / "t.parquet", TUPLES).num_rows == len(CLIPS)
    assert read_parquet(tmp_path / "frames.parquet", FRAMES).num_rows == len(rows)
