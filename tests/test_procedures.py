"""Procedures from a user's subtitles: the extractor interface, the outputs, the workflow target."""
import json
from fractions import Fraction

import pytest

from cookproc.procedures import (ClipExtraction, ProcedureTuple, frames_to_extraction, make_extractor,
                                 procedure_document, to_markdown, video_info)
from cookproc.srl.frames import Chunk
from cookproc.subtitles import Clip
from fixtures import make_workdir, run_snakemake

LEXICON = frozenset({"chop", "add", "stir", "heat"})


def lemma(word):  # a stand-in for WordNet's verb lemmatiser, so the unit tests need no corpus
    return {"chopped": "chop", "adding": "add", "going": "go"}.get(word, word)


def frame(*chunks):
    """A frame from (role, text[, score]) chunks, one word each."""
    return [Chunk(c[0], c[1], i, i + 1, c[2] if len(c) > 2 else None) for i, c in enumerate(chunks)]


def test_heuristics_keep_frames_with_an_argument_and_a_lexicon_verb():
    frames = [
        frame(("ARG0", "we"), ("V", "going"), ("ARG1", "to chop it")),        # "go" not in the lexicon
        frame(("V", "chopped"), ("ARG1", "the onions"), ("ARGM-LOC", "on the board")),
        frame(("ARG0", "i"), ("V", "stir"), ("ARGM-NEG", "not")),              # nothing left but V
        frame(("V", "adding"), ("ARG1", "salt"), ("ARGM-DIS", "so")),
    ]
    ext = frames_to_extraction(frames, heuristics=True, lexicon=LEXICON, lemma=lemma)
    assert ext.is_key and ext.key_score is None
    assert ext.verbs == ["chop", "add"]                       # lemmas, as the paper outputs
    assert ext.args == ["the onions", "on the board", "salt"]
    assert ext.tuples == [ProcedureTuple("chop", ("the onions", "on the board")), ProcedureTuple("add", ("salt",))]


def test_without_heuristics_every_frame_is_a_tuple():
    frames = [frame(("ARG0", "we"), ("V", "going"), ("ARG1", "to chop it")), frame(("V", "stir"))]
    ext = frames_to_extraction(frames, heuristics=False)
    assert ext.is_key and ext.verbs == ["going", "stir"] and ext.args == ["we", "to chop it"]
    assert ext.tuples == [ProcedureTuple("going", ("we", "to chop it")), ProcedureTuple("stir", ())]
    assert frames_to_extraction([], heuristics=False) == ClipExtraction(False, None, [], [], [])


def test_key_score_is_the_best_kept_predicate_probability():
    frames = [frame(("V", "chop", 0.6), ("ARG1", "it", 0.9)), frame(("V", "add", 0.8), ("ARG1", "salt", 0.7)),
              frame(("V", "sing", 0.99), ("ARG1", "a song", 0.99))]  # dropped by the lexicon
    ext = frames_to_extraction(frames, heuristics=True, lexicon=LEXICON, lemma=lemma)
    assert ext.key_score == 0.8


def test_extractor_lowercases_and_checks_its_backend():
    seen = []

    def labeller(texts):
        seen.extend(texts)
        return [[frame(("V", "add"), ("ARG1", "salt"))] if "add" in t else [] for t in texts]

    extractor = make_extractor("srl-heur", lexicon=LEXICON, labeller=labeller)
    out = extractor.extract(["Add Salt.", "Hello there."])
    assert seen == ["add salt.", "hello there."]
    assert [e.is_key for e in out] == [True, False] and extractor.name == "srl-heur-spacy"
    with pytest.raises(ValueError, match="unknown extractor 'kiddon'"):
        make_extractor("kiddon", labeller=labeller)
    with pytest.raises(ValueError, match="needs a non-empty cooking lexicon"):
        make_extractor("srl-heur", labeller=labeller)
    with pytest.raises(ValueError, match="user.tagger_model is not set"):
        make_extractor("srl", srl_backend="tagger")
    broken = make_extractor("srl", labeller=lambda texts: [])
    with pytest.raises(RuntimeError, match="returned 0 results for 1 sentences"):
        broken.extract(["one"])


def test_document_and_markdown():
    clips = [Clip(0.0, 4.0, "Hi, I'm *Sam*.", [3]), Clip(4.0, None, "Chop the onions_finely | fast.", [7])]
    exts = [ClipExtraction(False, None, [], []),
            ClipExtraction(True, 0.75, ["chop"], ["the onions"], [ProcedureTuple("chop", ("the onions",))])]
    doc = procedure_document("soup", clips, exts, source="data/user/soup.srt", video=None, extractor="srl-heur-spacy",
                             settings={"segmentation": "sentence"})
    assert doc["n_clips"] == 2 and doc["n_key_clips"] == 1
    assert doc["clips"][1] == {
        "clip_idx": 1, "start_s": 4.0, "end_s": None, "start": "00:00:04.0", "end": "--",
        "sentence": "Chop the onions_finely | fast.", "source_lines": [7], "is_key": True, "key_score": 0.75,
        "verbs": ["chop"], "args": ["the onions"], "tuples": [{"verb": "chop", "args": ["the onions"]}]}
    md = to_markdown(doc)
    assert "1. **00:00:04.0–end** chop (the onions) (key score 0.75)" in md
    assert "*Chop the onions\\_finely \\| fast.*" in md and "Sam" not in md  # only key clips are steps
    with pytest.raises(ValueError, match="2 clips but 1 extractions"):
        procedure_document("x", clips, exts[:1], source="", video=None, extractor="", settings={})


# ----------------------------------------------------------------------------- workflow target
def write_tiny_video(path, seconds=12, fps=5):
    """A 64x48 H.264 (or MPEG-4) video of ``seconds`` seconds, generated with PyAV."""
    import av
    import numpy as np

    with av.open(str(path), "w") as container:
        codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.time_base = Fraction(1, fps)
        for i in range(seconds * fps):
            image = np.full((48, 64, 3), (i * 4) % 256, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts = i
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


SOUP_VTT = """WEBVTT

00:00:00.500 --> 00:00:02.000
Hi everyone, welcome back!

00:00:02.000 --> 00:00:04.000
<c.yellow>Chop</c> the onions

00:00:04.000 --> 00:00:05.500
and the garlic.

00:00:05.500 --> 00:00:07.500
[Music]

00:00:07.500 --> 00:00:10.000
Heat the oil in a large pot. Then add the tomatoes.
"""


@pytest.mark.slow
def test_user_target_end_to_end(tmp_path, tiny_upstream):
    workdir = make_workdir(tmp_path / "run", tiny_upstream)
    user = workdir / "data" / "user"
    user.mkdir(parents=True)
    (user / "soup.vtt").write_text(SOUP_VTT, encoding="utf-8")
    write_tiny_video(user / "soup.mp4")
    (user / "broken.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nok.\n\n2\n00:00:0x,000 --> 00:00:03,000\nbad\n")

    run_snakemake(workdir, "results/procedures/soup.json")
    doc = json.loads((workdir / "results/procedures/soup.json").read_text(encoding="utf-8"))
    assert doc["video"]["duration_s"] == pytest.approx(12.0, abs=0.3)
    assert doc["extractor"] == "srl-heur-spacy"
    clips = doc["clips"]
    assert [c["sentence"] for c in clips] == ["Hi everyone, welcome back!", "Chop the onions and the garlic.",
                                              "Heat the oil in a large pot.", "Then add the tomatoes."]
    assert [c["start_s"] for c in clips[:3]] == [0.5, 2.0, 7.5]
    assert clips[-1]["end_s"] == doc["video"]["duration_s"]  # the last clip runs to the video's end
    assert [c["is_key"] for c in clips] == [False, True, True, True]
    assert [c["verbs"] for c in clips] == [[], ["chop"], ["heat"], ["add"]]
    assert "the oil" in clips[2]["args"] and clips[2]["tuples"][0]["verb"] == "heat"
    md = (workdir / "results/procedures/soup.md").read_text(encoding="utf-8")
    assert md.count("\n1. ") == 1 and "\n3. **00:00:" in md and "*Chop the onions and the garlic.*" in md
    log = (workdir / "logs/user/user_procedures/soup.log").read_text(encoding="utf-8")
    assert "[1/3] read 4 clips" in log and "[3/3] wrote" in log

    proc = run_snakemake(workdir, "results/procedures/broken.json", check=False)
    assert proc.returncode != 0 and not (workdir / "results/procedures/broken.json").exists()
    log = (workdir / "logs/user/user_procedures/broken.log").read_text(encoding="utf-8")
    assert "data/user/broken.srt, line 6: cue 2: bad timing '00:00:0x,000 --> 00:00:03,000'" in log

    proc = run_snakemake(workdir, "results/procedures/nothing.json", check=False)
    assert proc.returncode != 0
    assert "expected exactly one subtitle or transcript file of data/user/nothing.vtt" in proc.stdout + proc.stderr


def test_video_info(tmp_path):
    write_tiny_video(tmp_path / "v.mp4", seconds=2)
    info = video_info(tmp_path / "v.mp4")
    assert info["duration_s"] == pytest.approx(2.0, abs=0.3) and (info["width"], info["height"]) == (64, 48)
    (tmp_path / "bad.mp4").write_bytes(b"not a video")
    with pytest.raises(ValueError, match=r"bad\.mp4: cannot read the video"):
        video_info(tmp_path / "bad.mp4")
