"""Procedures from a user's subtitles as the workflow target (rules/procedures.smk) on the tiny
fixture: the deployed models built on demand, the document and its Markdown, the SRL option, and bad
input answered with the file and line. The library's side: tests/unit/app/test_procedures.py."""
import json

import jsonschema
import pytest

from cookproc.app.documents import DOCUMENT_SCHEMA
from fixtures import make_workdir, run_snakemake
from test_procedures import SOUP_VTT, write_tiny_video


@pytest.mark.slow
def test_user_target_end_to_end(tmp_path, tiny_upstream):
    # The tuple extractor on spaCy's parses here (no tagger to train: quicker); a tagger-backed
    # artifact, the default, carries its tagger (test_tuple_deploy).
    workdir = make_workdir(tmp_path / "run", tiny_upstream, {"supervised": {"srl_backend": "spacy"}})
    user = workdir / "data" / "user"
    user.mkdir(parents=True)
    (user / "soup.vtt").write_text(SOUP_VTT, encoding="utf-8")
    write_tiny_video(user / "soup.mp4")
    (user / "broken.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nok.\n\n2\n00:00:0x,000 --> 00:00:03,000\nbad\n")

    run_snakemake(workdir, "results/procedures/soup.json")
    doc = json.loads((workdir / "results/procedures/soup.json").read_text(encoding="utf-8"))
    assert doc["video"]["duration_s"] == pytest.approx(12.0, abs=0.3)
    # By default the key clips come from the selector and the verbs and arguments from the text-only
    # supervised extractor, both trained on every benchmark recipe (here the fixture's), built on demand.
    assert doc["extractor"] == "keyclips-neural-text + tuples-supervised-text" and doc["segmentation"] == "sentence"
    assert doc["key_clips_by"] == "keyclips-neural-text"
    assert doc["settings"]["keyclip_model"] == "results/models/keyclips-neural-text"
    assert doc["settings"]["tuple_model"] == "results/models/tuples-supervised-text"
    jsonschema.validate(doc, json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8")))
    model = workdir / "results/models/keyclips-neural-text"
    meta = json.loads((model / "model.json").read_text(encoding="utf-8"))
    assert meta["format"] == "cookproc.keyclip-selector" and meta["training"]["n_clips"] > 0
    card = (model / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "| run | Acc | P | R | F1 |" in card and "| seed 0 |" in card and "recipes resampled" in card
    clips = doc["clips"]
    assert [c["sentence"] for c in clips] == ["Hi everyone, welcome back!", "Chop the onions and the garlic.",
                                              "Heat the oil in a large pot.", "Then add the tomatoes."]
    assert [c["start_s"] for c in clips[:3]] == [0.5, 2.0, 7.5]
    assert clips[-1]["end_s"] == doc["video"]["duration_s"]  # the last clip runs to the video's end
    threshold = meta["spec"]["threshold"]
    assert [c["is_key"] for c in clips] == [c["key_probability"] >= threshold for c in clips]
    for clip in clips:
        assert [t["verb"] for t in clip["tuples"]] == clip["verbs"]
        assert all(t["args"] == clip["args"] for t in clip["tuples"])
    tuples_model = workdir / "results/models/tuples-supervised-text"
    meta = json.loads((tuples_model / "model.json").read_text(encoding="utf-8"))
    assert meta["format"] == "cookproc.tuple-extractor" and meta["srl_backend"] == "spacy"
    assert not (tuples_model / "tagger.pt").exists()
    assert "| verbs (exact) |" in (tuples_model / "MODEL_CARD.md").read_text(encoding="utf-8")
    md = (workdir / "results/procedures/soup.md").read_text(encoding="utf-8")
    n_key = sum(c["is_key"] for c in clips)
    steps = [line for line in md.splitlines() if line[:1].isdigit()]  # key clips only, in order
    assert len(steps) == n_key and all("key probability" in line for line in steps)
    log = (workdir / "logs/procedures/procedures_extract/soup.log").read_text(encoding="utf-8")
    assert f"4 clips (sentence segmentation), {n_key} key clips by keyclips-neural-text + tuples-supervised-text" in log
    assert "[2/2] wrote" in log

    # The SRL option (no training): SRL with the paper's heuristics on spaCy gives the verbs and
    # arguments; the same selector, so the same key clips.
    # (A nested --config value is a string: "none" means no model.)
    run_snakemake(workdir, "results/procedures/soup.json", "--config", "procedures={tuple_model: none}")
    srl_doc = json.loads((workdir / "results/procedures/soup.json").read_text(encoding="utf-8"))
    assert srl_doc["extractor"] == "keyclips-neural-text + srl-heur-spacy"
    assert srl_doc["settings"]["tuple_model"] is None
    jsonschema.validate(srl_doc, json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8")))
    srl_clips = srl_doc["clips"]
    assert [c["key_probability"] for c in srl_clips] == [c["key_probability"] for c in clips]
    assert [c["verbs"] for c in srl_clips] == [[], ["chop"], ["heat"], ["add"]]
    assert "the oil" in srl_clips[2]["args"] and srl_clips[2]["tuples"][0]["verb"] == "heat"

    proc = run_snakemake(workdir, "results/procedures/broken.json", check=False)
    assert proc.returncode != 0 and not (workdir / "results/procedures/broken.json").exists()
    log = (workdir / "logs/procedures/procedures_extract/broken.log").read_text(encoding="utf-8")
    assert "data/user/broken.srt, line 6: cue 2: bad timing '00:00:0x,000 --> 00:00:03,000'" in log
    # Issue 46: the job's error is one line, in its log and Snakemake's output, with no traceback.
    (user / "nul.srt").write_text("1\n00:00:01,000 --> 00:00:02,000\nchop the on\x00ions\n")
    proc = run_snakemake(workdir, "results/procedures/nul.json", check=False)
    log = (workdir / "logs/procedures/procedures_extract/nul.log").read_text(encoding="utf-8")
    line = ("rule procedures_extract: error: data/user/nul.srt, line 3: cue 1: control character U+0000 in the "
            "text; remove it (NUL bytes usually mean a UTF-16 file: save it as UTF-8)")
    assert proc.returncode != 0 and log.splitlines()[-1] == line and f"\n{line}\n" in proc.stdout + proc.stderr
    assert "Traceback" not in log + proc.stdout + proc.stderr

    proc = run_snakemake(workdir, "results/procedures/nothing.json", check=False)
    assert proc.returncode != 0
    assert "expected exactly one subtitle or transcript file of data/user/nothing.vtt" in proc.stdout + proc.stderr

    # A name outside the allowed pattern: an error that states the pattern (not "No rule to produce").
    (user / "my soup.vtt").write_text(SOUP_VTT, encoding="utf-8")
    proc = run_snakemake(workdir, "results/procedures/my soup.json", "--dry-run", check=False)
    assert proc.returncode != 0
    assert "a name must match [A-Za-z0-9][A-Za-z0-9_.-]*" in proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("files, target, message", [
    ({"my soup.vtt": SOUP_VTT}, "results/procedures/my soup.json",
     "procedures for 'my soup': a name must match [A-Za-z0-9][A-Za-z0-9_.-]* (a letter or digit, then letters, digits, "
     "'_', '.' or '-'); rename the file in data/user and ask for results/procedures/<name>.json"),
    ({"soup.vtt": SOUP_VTT, "soup.srt": "1\n00:00:01,000 --> 00:00:02,000\nchop it.\n"}, "results/procedures/soup.json",
     "procedures for 'soup': expected exactly one subtitle or transcript file of data/user/soup.vtt, "
     "data/user/soup.srt, data/user/soup.txt; found data/user/soup.vtt, data/user/soup.srt; keep one"),
    ({}, "results/procedures/nothing.json",
     "procedures for 'nothing': expected exactly one subtitle or transcript file of data/user/nothing.vtt, "
     "data/user/nothing.srt, data/user/nothing.txt; found none"),
    ({}, "corpus_all", "corpus: missing-corpus: the corpus folder does not exist"),
])
def test_a_target_without_its_one_source_is_one_line_without_a_traceback(tmp_path, tiny_upstream, files, target,
                                                                         message):
    """Issue 55: results/procedures/<name>.json for a bad name, a name with both .srt and .vtt, or a
    missing source (and a missing corpus folder) stopped Snakemake with InputFunctionException and a
    traceback of rules/common.smk. Now one line, as it builds the DAG, run or dry run."""
    workdir = make_workdir(tmp_path / "run", tiny_upstream, {"corpus": {"dir": "missing-corpus"}})
    user = workdir / "data" / "user"
    user.mkdir(parents=True)
    for name, text in files.items():
        (user / name).write_text(text, encoding="utf-8")
    for args in (["--dry-run"], []):
        proc = run_snakemake(workdir, *args, target, check=False)
        output = proc.stdout + proc.stderr
        assert proc.returncode == 1, output
        assert f"\n{message}" in output, output
        assert "Traceback" not in output and "Exception" not in output and 'File "' not in output, output
    assert not (workdir / "results" / "procedures").exists() and not list((workdir / ".snakemake" / "locks").glob("*"))
