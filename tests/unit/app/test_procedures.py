"""Procedures from a user's subtitles: clip cutting, the extractor interface, the procedure
document and its schema. The workflow target: tests/workflow/test_procedures_workflow.py."""
import copy
import dataclasses
import json
from fractions import Fraction

import jsonschema
import pytest

from cookproc.app.clips import Clip
from cookproc.app.cues import SubtitleError
from cookproc.app.documents import (DOCUMENT_SCHEMA, ClipExtraction, DocumentError, ProcedureTuple, procedure_document,
                                    to_json, to_markdown, write_procedure)
from cookproc.app.extractors import MODELS, parse_to_extraction, make_extractor, parse_model
from cookproc.app.procedures import ProcedureSettings, procedure_documents
from cookproc.app.subtitles import read_clips_and_segmentation
from cookproc.app.video_probe import video_info
from cookproc.core.errors import InputError
from cookproc.srl.parses import Chunk

LEXICON = frozenset({"chop", "add", "stir", "heat"})


def lemma(word):  # a stand-in for WordNet's verb lemmatiser, so the unit tests need no corpus
    return {"chopped": "chop", "adding": "add", "going": "go"}.get(word, word)


def frame(*chunks):
    """A frame from (role, text[, score]) chunks, one word each."""
    return [Chunk(c[0], c[1], i, i + 1, c[2] if len(c) > 2 else None) for i, c in enumerate(chunks)]


def test_heuristics_keep_frames_with_an_argument_and_a_lexicon_verb():
    parse = [
        frame(("ARG0", "we"), ("V", "going"), ("ARG1", "to chop it")),        # "go" not in the lexicon
        frame(("V", "chopped"), ("ARG1", "the onions"), ("ARGM-LOC", "on the board")),
        frame(("ARG0", "i"), ("V", "stir"), ("ARGM-NEG", "not")),              # nothing left but V
        frame(("V", "adding"), ("ARG1", "salt"), ("ARGM-DIS", "so")),
    ]
    ext = parse_to_extraction(parse, heuristics=True, lexicon=LEXICON, lemma=lemma)
    assert ext.is_key and ext.key_score is None
    assert ext.verbs == ["chop", "add"]                       # lemmas, as the paper outputs
    assert ext.args == ["the onions", "on the board", "salt"]
    assert ext.tuples == [ProcedureTuple("chop", ("the onions", "on the board")), ProcedureTuple("add", ("salt",))]


def test_without_heuristics_every_frame_is_a_tuple():
    parse = [frame(("ARG0", "we"), ("V", "going"), ("ARG1", "to chop it")), frame(("V", "stir"))]
    ext = parse_to_extraction(parse, heuristics=False)
    assert ext.is_key and ext.verbs == ["going", "stir"] and ext.args == ["we", "to chop it"]
    assert ext.tuples == [ProcedureTuple("going", ("we", "to chop it")), ProcedureTuple("stir", ())]
    assert parse_to_extraction([], heuristics=False) == ClipExtraction(False, None, [], [], [])


def test_key_score_is_the_best_kept_predicate_probability():
    parse = [frame(("V", "chop", 0.6), ("ARG1", "it", 0.9)), frame(("V", "add", 0.8), ("ARG1", "salt", 0.7)),
              frame(("V", "sing", 0.99), ("ARG1", "a song", 0.99))]  # dropped by the lexicon
    ext = parse_to_extraction(parse, heuristics=True, lexicon=LEXICON, lemma=lemma)
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
    with pytest.raises(ValueError, match="procedures.tagger_model is not set"):
        make_extractor("srl", srl_backend="tagger")
    broken = make_extractor("srl", labeller=lambda texts: [])
    with pytest.raises(RuntimeError, match="returned 0 results for 1 sentences"):
        broken.extract(["one"])


def test_extractor_labels_in_chunks_and_reports_progress():
    calls, reported = [], []

    def labeller(texts):
        calls.append(len(texts))
        return [[frame(("V", "add"), ("ARG1", t))] for t in texts]

    extractor = make_extractor("srl", labeller=labeller)
    out = extractor.extract([f"add {i}" for i in range(600)], progress=lambda done, total: reported.append((done, total)))
    assert calls == [256, 256, 88] and reported == [(256, 600), (256, 600), (88, 600)]
    assert [e.args for e in out[:2]] == [["add 0"], ["add 1"]] and out[-1].args == ["add 599"]
    assert all(e.key_probability is None for e in out)  # SRL decides by rule: no probability


def test_model_names():
    assert parse_model("srl-heur-spacy") == ("srl-heur", "spacy") and parse_model("srl-tagger") == ("srl", "tagger")
    assert set(MODELS) == {"srl-heur-spacy", "srl-heur-tagger", "srl-spacy", "srl-tagger"}
    # A path is not an extractor (a trained key-clip selector is given as keyclip_model): refused, not
    # run by something else.
    with pytest.raises(ValueError, match="not a built-in extractor .* a trained selector is given with --keyclips"):
        parse_model("results/models/keyclips.pt")
    with pytest.raises(ValueError, match="--model 'neural': unknown model; expected one of srl-heur-spacy"):
        parse_model("neural")


SETTINGS = {"segmentation": "auto", "max_clip_s": 15.0, "drop_sound_tags": True, "srl_backend": "spacy",
            "tagger_model": None, "lowercase": True, "lexicon": "lexicon.lst", "lexicon_size": 4,
            "keyclip_model": None}


def soup_document():
    clips = [Clip(0.0, 4.0, "Hi, I'm *Sam*.", [3]), Clip(4.0, None, "Chop the onions_finely | fast.", [7])]
    exts = [ClipExtraction(False, None, [], []),
            ClipExtraction(True, 0.75, ["chop"], ["the onions"], [ProcedureTuple("chop", ("the onions",))])]
    return clips, exts, procedure_document("soup", clips, exts, source="data/user/soup.srt", video=None,
                                           extractor="srl-heur-spacy", settings=SETTINGS, segmentation="sentence")


def test_document_and_markdown():
    clips, exts, doc = soup_document()
    assert doc["n_clips"] == 2 and doc["n_key_clips"] == 1 and doc["timed"] and doc["segmentation"] == "sentence"
    assert doc["clips"][1] == {
        "clip_idx": 1, "start_s": 4.0, "end_s": None, "start": "00:00:04.0", "end": "--",
        "sentence": "Chop the onions_finely | fast.", "source_lines": [7], "is_key": True, "key_probability": None,
        "key_score": 0.75, "verbs": ["chop"], "args": ["the onions"],
        "tuples": [{"verb": "chop", "args": ["the onions"]}], "step": None}
    md = to_markdown(doc)
    assert "1. **00:00:04.0–end** chop (the onions) (key score 0.75)" in md
    assert "*Chop the onions\\_finely \\| fast.*" in md and "Sam" not in md  # only key clips are steps
    with pytest.raises(ValueError, match="2 clips but 1 extractions"):
        procedure_document("x", clips, exts[:1], source="", video=None, extractor="", settings={},
                           segmentation="cue")
    # A key probability, when an extractor has one, is what the step shows.
    exts[1] = ClipExtraction(True, 0.75, ["chop"], [], [ProcedureTuple("chop", ())], key_probability=0.875)
    doc = procedure_document("soup", clips, exts, source="s.srt", video=None, extractor="x", settings=SETTINGS,
                             segmentation="sentence")
    assert "chop (key probability 0.88)" in to_markdown(doc)


def test_the_schema_is_valid_and_every_document_follows_it():
    schema = json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    _, _, doc = soup_document()
    jsonschema.validate(json.loads(to_json(doc)), schema)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["clips"][0].update(key_probability=1.5), r"at clips/0/key_probability: 1\.5 is greater than"),
    (lambda d: d["clips"][1].pop("tuples"), r"at clips/1: 'tuples' is a required property"),
    (lambda d: d.update(extra=1), r"Additional properties are not allowed \('extra'"),
    (lambda d: d["clips"][1].update(start_s=-1.0), r"at clips/1/start_s: -1\.0 is less than the minimum"),
    (lambda d: d.update(n_key_clips=2), r"n_key_clips is 2 but 1 clips are key"),
    (lambda d: d["clips"][1].update(start_s=None), r"clips/1: start_s None in a document with timed=True"),
    (lambda d: d["clips"].reverse(), r"clips/0 has clip_idx 1"),
])
def test_a_document_against_the_schema_is_never_written(tmp_path, change, message):
    _, _, doc = soup_document()
    bad = copy.deepcopy(doc)
    change(bad)
    for fmt in ("json", "md"):
        out = tmp_path / f"soup.{fmt}"
        with pytest.raises(DocumentError, match=message):
            write_procedure(bad, out, fmt)
        assert not out.exists() and list(tmp_path.iterdir()) == []  # no temporary file left either
    write_procedure(doc, tmp_path / "soup.json", "json")
    assert json.loads((tmp_path / "soup.json").read_text(encoding="utf-8")) == doc


# ----------------------------------------------------------------------------- clip cutting
PANCAKE_CUES = ["so today we are making pancakes", "first whisk the eggs and the milk in a bowl",
                "then add the flour and a pinch of salt", "mix everything until smooth", "heat a pan over medium heat",
                "melt some butter in the pan", "pour a ladle of batter into the pan", "cook it for two minutes",
                "flip the pancake and cook the other side", "serve with maple syrup"]


def srt(cues, seconds=4):
    return "\n".join(f"{i + 1}\n00:00:{i * seconds:02d},000 --> 00:00:{(i + 1) * seconds:02d},000\n{text}\n"
                     for i, text in enumerate(cues))


def test_unpunctuated_captions_are_one_clip_per_cue(tmp_path):
    # The case: an ASR-style .srt of a pancake recipe, 10 cues without punctuation.
    path = tmp_path / "pancakes.srt"
    path.write_text(srt(PANCAKE_CUES), encoding="utf-8")
    clips, used = read_clips_and_segmentation(path)
    assert used == "cue" and [c.sentence for c in clips] == PANCAKE_CUES
    assert [(c.start_s, c.end_s) for c in clips] == [(4.0 * i, 4.0 * i + 4) for i in range(10)]
    # The old behaviour stays available: sentence segmentation merges them into 15-second runs.
    clips, used = read_clips_and_segmentation(path, segmentation="sentence")
    assert used == "sentence" and [c.start_s for c in clips] == [0.0, 16.0, 32.0]


def test_punctuated_subtitles_are_one_clip_per_sentence(tmp_path):
    cues = ["First whisk the eggs", "and the milk. Then add", "the flour.", "Mix until smooth!"]
    path = tmp_path / "p.srt"
    path.write_text(srt(cues), encoding="utf-8")
    clips, used = read_clips_and_segmentation(path)
    assert used == "sentence"
    assert [c.sentence for c in clips] == ["First whisk the eggs and the milk.", "Then add the flour.",
                                           "Mix until smooth!"]
    # One stray sentence end in a long unpunctuated file does not make it punctuated.
    path.write_text(srt(PANCAKE_CUES[:9] + ["serve with maple syrup. enjoy"]), encoding="utf-8")
    assert read_clips_and_segmentation(path)[1] == "cue"


def test_untimed_transcripts_are_one_clip_per_line(tmp_path):
    # The layout of the upstream youcook2/transcript/ files: one sentence a line, no times.
    path = tmp_path / "vid.txt"
    path.write_text("hi guys .\n\nchop the onions .\nadd the salt .\n", encoding="utf-8")
    clips, used = read_clips_and_segmentation(path, segmentation="sentence")
    assert used == "cue" and [(c.start_s, c.end_s, c.sentence, c.lines) for c in clips] == [
        (None, None, "hi guys .", [1]), (None, None, "chop the onions .", [3]), (None, None, "add the salt .", [4])]
    path.write_text("chop the onions .\n[00:05] add the salt .\n", encoding="utf-8")
    with pytest.raises(SubtitleError, match=r"vid\.txt, line 2: this line has a time but line 1 has none"):
        read_clips_and_segmentation(path)
    path.write_text("[00:01] chop the onions .\nadd the salt .\n", encoding="utf-8")
    with pytest.raises(SubtitleError, match=r"vid\.txt, line 2: expected '\[HH:MM:SS\] sentence' .*\(as on line 1\)"):
        read_clips_and_segmentation(path)


def test_untimed_documents_list_steps_by_line(tmp_path):
    path = tmp_path / "vid.txt"
    path.write_text("hi guys .\nchop the onions .\n", encoding="utf-8")

    def labeller(texts):
        return [[frame(("V", "chop"), ("ARG1", "the onions"))] if "chop" in t else [] for t in texts]

    settings = ProcedureSettings.from_config({"segmentation": "auto", "max_clip_s": 15.0, "drop_sound_tags": True,
                                              "extractor": "srl", "srl_backend": "spacy", "tagger_model": None,
                                              "device": "cpu", "lowercase": True, "unrelated": 1})
    (tmp_path / "l.lst").write_text("chop\n\nadd\n", encoding="utf-8")
    [doc] = procedure_documents([path], settings, lexicon=tmp_path / "l.lst",
                                extractor=make_extractor("srl", labeller=labeller))
    assert doc["timed"] is False and doc["segmentation"] == "cue" and doc["name"] == "vid"
    assert doc["settings"]["lexicon_size"] == 2  # blank lines are no words
    assert [c["start"] for c in doc["clips"]] == ["--", "--"]
    assert "1. **line 2** chop (the onions)" in to_markdown(doc)


# ----------------------------------------------------------------------------- issue 37: hostile and foreign input
def render_html(markdown_text):
    """The HTML a Markdown viewer makes of it: CommonMark with raw HTML allowed (markdown-it-py)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown_text)


def visible_text(html_text):
    """What a reader sees of rendered HTML: tags removed, entities decoded."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[click](javascript:alert(1))",
           "![x](http://e.vil/x.png)", "`code` **bold** _it_ ~~gone~~ | a | b |", "&lt;b&gt; &amp;",
           "line\n<script>alert(2)</script>\n# heading", "<!-- hidden -->", "<http://e.vil>", "\\*not em\\*"]


def test_markdown_escapes_every_user_string():
    clips = [Clip(float(i), float(i + 1), text, [i + 1]) for i, text in enumerate(HOSTILE)]
    exts = [ClipExtraction(True, None, [text], [text], [ProcedureTuple(text, (text, "ok"))]) for text in HOSTILE]
    doc = procedure_document("<b>name</b> [x](y)", clips, exts, source="a`b`<i>.vtt", video=None,
                             extractor="srl-heur-spacy", settings=SETTINGS, segmentation="cue")
    html_text = render_html(to_markdown(doc))
    for tag in ("<script", "<img", "<a ", "<b>", "<i>", "<h1>heading", "<!--", "<del", "<table", "<code"):
        assert tag not in html_text, tag
    shown = visible_text(html_text)
    for text in HOSTILE:  # every string is shown as it is (a line break as a space)
        assert text.replace("\n", " ") in shown, text
    assert "Procedure: <b>name</b> [x](y)" in shown and "From a`b`<i>.vtt" in shown
    # The raw Markdown has no unescaped tag opener either.
    assert "<script" not in to_markdown(doc).replace("\\<script", "")


def test_hostile_cues_render_no_html(tmp_path):
    # The cases: encoded and raw tags in a cue, through the reader, the extractor and the Markdown.
    vtt = ("WEBVTT\n\n00:01.000 --> 00:03.000\n&lt;script&gt;alert(1)&lt;/script&gt; Chop the onions.\n\n"
           "00:03.000 --> 00:05.000\n<img src=x onerror=alert(1)>Add the salt &amp; pepper.\n\n"
           "00:05.000 --> 00:07.000\nAdd [about two cups](javascript:alert(1)) of flour &lt;3\n")
    path = tmp_path / "evil.vtt"
    path.write_text(vtt, encoding="utf-8")
    (tmp_path / "l.lst").write_text("chop\nadd\n", encoding="utf-8")

    def labeller(texts):  # every sentence whole as the argument, so user text reaches the tuples too
        return [[frame(("V", "add"), ("ARG1", t))] for t in texts]

    settings = ProcedureSettings.from_config({"segmentation": "cue", "max_clip_s": 15.0, "drop_sound_tags": True,
                                              "extractor": "srl", "srl_backend": "spacy", "tagger_model": None,
                                              "device": "cpu", "lowercase": False})
    [doc] = procedure_documents([path], settings, lexicon=tmp_path / "l.lst",
                                extractor=make_extractor("srl", labeller=labeller, lowercase=False))
    assert [c["sentence"] for c in doc["clips"]] == ["alert(1) Chop the onions.", "Add the salt & pepper.",
                                                     "Add [about two cups](javascript:alert(1)) of flour <3"]
    html_text = render_html(to_markdown(doc))
    assert "<script" not in html_text and "<img" not in html_text and "<a " not in html_text
    assert "Add [about two cups](javascript:alert(1)) of flour <3" in visible_text(html_text)


CHINESE_SRT = ("1\n00:00:01,000 --> 00:00:06,000\n把洋葱切碎。加入黄油，搅拌至融化。\n\n"
               "2\n00:00:06,000 --> 00:00:09,000\n现在我们把面粉和鸡蛋混合在一起！\n")


def test_documents_record_what_reading_found_and_warn_in_markdown(tmp_path):
    path = tmp_path / "zh.srt"
    path.write_text(CHINESE_SRT, encoding="utf-8")
    (tmp_path / "l.lst").write_text("chop\n", encoding="utf-8")
    settings = ProcedureSettings.from_config({"segmentation": "auto", "max_clip_s": 15.0, "drop_sound_tags": True,
                                              "extractor": "srl", "srl_backend": "spacy", "tagger_model": None,
                                              "device": "cpu", "lowercase": True})
    [doc] = procedure_documents([path], settings, lexicon=tmp_path / "l.lst",
                                extractor=make_extractor("srl", labeller=lambda texts: [[] for _ in texts]))
    assert doc["n_clips"] == 3 and doc["n_key_clips"] == 0  # cut at 。 and ！, not one merged clip
    assert doc["input"]["language"]["detected"] == "zh" and doc["input"]["language"]["action"] == "warn"
    assert doc["input"]["rolling_captions"]["applied"] is False
    assert doc["settings"]["other_language"] == "warn" and doc["settings"]["max_sentence_chars"] == 2000
    [warning] = doc["input"]["warnings"]
    assert warning.startswith(f"{path}: the text looks like Chinese (zh)")
    jsonschema.validate(json.loads(to_json(doc)), json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8")))
    md = to_markdown(doc)
    assert "> Note: " in md and "looks like Chinese (zh)" in visible_text(render_html(md))
    # Refusing: the message names the language, before any model or lexicon is loaded.
    refuse = dataclasses.replace(settings, other_language="error", keyclip_model="no/such/model")
    with pytest.raises(InputError, match=r"zh\.srt: the text looks like Chinese \(zh\) \(probability [01]\.\d\d\), "
                                         r"not English \(en\)"):
        procedure_documents([path], refuse, lexicon=tmp_path / "missing.lst")


# ----------------------------------------------------------------------------- a user's video and subtitles
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


def test_video_info(tmp_path):
    write_tiny_video(tmp_path / "v.mp4", seconds=2)
    info = video_info(tmp_path / "v.mp4")
    assert info["duration_s"] == pytest.approx(2.0, abs=0.3) and (info["width"], info["height"]) == (64, 48)
    (tmp_path / "bad.mp4").write_bytes(b"not a video")
    with pytest.raises(ValueError, match=r"bad\.mp4: cannot read the video"):
        video_info(tmp_path / "bad.mp4")


@pytest.mark.parametrize("settings, message", [
    ({"step_model": "s", "keyclip_model": "k"}, "procedures.step_model and procedures.keyclip_model both decide"),
    ({"tuple_model": "t", "keyclip_model": None, "step_model": None}, "procedures.tuple_model gives verbs"),
    ({"srl_backend": "tagger", "tagger_model": None, "keyclip_model": None, "tuple_model": None, "step_model": None},
     "procedures.srl_backend is 'tagger' but procedures.tagger_model is not set"),
])
def test_settings_that_contradict_each_other_end_a_job_in_one_line(tmp_path, capsys, settings, message):
    """Issue 55 (no traceback for bad input, across the project): config settings the schema accepts
    one by one but not together are a ConfigError, so a job (procedures_extract, corpus_shard) ends
    with one line, not a traceback."""
    from snakemake.iocontainers import Namedlist

    from cookproc.app.procedures import ProcedureSettings, load_extractor
    from cookproc.core.config_schema import validate_config
    from cookproc.core.errors import ConfigError
    from cookproc.core.logs import script_logging

    section = {**validate_config({})["procedures"], **settings}

    class Job:
        rule = "procedures_extract"
        log, input, output = Namedlist([str(tmp_path / "job.log")]), Namedlist(fromdict={}), Namedlist([])
        params, wildcards, config = Namedlist(fromdict={}), Namedlist(fromdict={}), {}

    with pytest.raises(ConfigError, match=message):
        load_extractor(ProcedureSettings.from_config(section), frozenset(LEXICON))
    with pytest.raises(SystemExit) as exit_, script_logging(Job()):
        load_extractor(ProcedureSettings.from_config(section), frozenset(LEXICON))
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"rule procedures_extract: error: {message}") and err.count("\n") == 1, err
    assert "Traceback" not in (tmp_path / "job.log").read_text()
