"""The `cookproc` console command (cookproc.app.cli): Markdown and JSON from a subtitle file, the JSON
valid against the procedure schema, settings from a workflow config, and bad input answered with
the file, line and cue and a non-zero exit, without a traceback."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from cookproc.app.documents import DOCUMENT_SCHEMA
from fixtures import LEXICON
from test_procedures import SOUP_VTT

COOKPROC = Path(sys.executable).parent / "cookproc"


def cookproc(cwd, *args):
    """Run the installed console command in ``cwd``; the CompletedProcess (output captured)."""
    assert COOKPROC.exists(), f"{COOKPROC} is missing: `pip install -e .` installs the console command"
    return subprocess.run([str(COOKPROC), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "soup.vtt").write_text(SOUP_VTT, encoding="utf-8")
    (tmp_path / "cooking.lst").write_text("\n".join(LEXICON) + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.slow
def test_json_with_progress_bar_follows_the_schema(inputs):
    (inputs / "out").mkdir()  # the command writes into an existing folder, never creates one
    proc = cookproc(inputs, "extract", "soup.vtt", "--lexicon", "cooking.lst", "-o", "out/soup.json", "--progress",
                    "--keyclips", "none")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # the document went to the file, the report and the bar to stderr
    assert "soup.vtt: 100%" in proc.stderr and "4/4" in proc.stderr and "3 key clips of 4 -> out/soup.json" in proc.stderr
    document = json.loads((inputs / "out/soup.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8")))
    assert document["extractor"] == document["key_clips_by"] == "srl-heur-spacy"
    assert document["segmentation"] == "sentence" and document["settings"]["keyclip_model"] is None
    assert [c["sentence"] for c in document["clips"]] == ["Hi everyone, welcome back!", "Chop the onions and the garlic.",
                                                          "Heat the oil in a large pot.", "Then add the tomatoes."]
    assert [c["is_key"] for c in document["clips"]] == [False, True, True, True]
    assert [c["verbs"] for c in document["clips"]] == [[], ["chop"], ["heat"], ["add"]]
    assert document["settings"]["lexicon"] == "cooking.lst" and document["settings"]["lexicon_size"] == len(LEXICON)


def test_null_and_none_in_any_case_ask_for_no_trained_model(inputs):
    """`--keyclips NULL --tuples None` means what `--keyclips none` does (as in the rules'
    `--config`): the SRL extractor decides and extracts; no folder named "NULL" is looked for."""
    from cookproc.app.cli import main

    out = inputs / "soup-null.json"
    assert main(["extract", str(inputs / "soup.vtt"), "--lexicon", str(inputs / "cooking.lst"),
                 "--keyclips", "NULL", "--tuples", "None", "-o", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["key_clips_by"] == document["extractor"] == "srl-heur-spacy"
    assert document["settings"]["keyclip_model"] is None and document["settings"]["tuple_model"] is None
    assert [c["is_key"] for c in document["clips"]] == [False, True, True, True]


@pytest.mark.slow
def test_markdown_to_stdout_with_a_workflow_configs_settings(inputs):
    # A config's relative paths are read from its own folder; its procedures section sets the clip cutting.
    (inputs / "cfg").mkdir()
    (inputs / "cfg" / "config.yaml").write_text("procedures:\n  lexicon: ../cooking.lst\n  segmentation: cue\n"
                                                "  step_model: null\n  keyclip_model: null\n  tuple_model: null\n")
    proc = cookproc(inputs / "cfg", "extract", "../soup.vtt", "--config", "config.yaml")
    assert proc.returncode == 0, proc.stderr
    md = proc.stdout
    assert md.startswith("# Procedure: soup\n") and "Traceback" not in proc.stderr
    # One clip per cue: "Chop the onions" and "and the garlic." are two clips now; only key steps,
    # in order, with their times.
    steps = [line for line in md.splitlines() if line[:1].isdigit()]
    assert steps[0].startswith("1. **00:00:02.0–00:00:04.0** chop (the onions)")
    assert steps[-1].startswith(f"{len(steps)}. **00:00:07.5–00:00:10.0** heat (the oil, in a large pot)")
    assert "welcome back" not in md


@pytest.mark.parametrize("name, text, args, message", [
    ("bad.srt", "1\n00:00:01,000 --> 00:00:02,000\nok.\n\n2\n00:00:0x,000 --> 00:00:03,000\nbad\n", [],
     "bad.srt, line 6: cue 2: bad timing '00:00:0x,000 --> 00:00:03,000'"),
    ("bad.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nok.\n\n00:03.000 --> 00:02.500\nback in time.\n", [],
     "bad.vtt, line 6: cue 2: ends (00:02.500) before it starts (00:03.000)"),
    ("mixed.txt", "[00:01] chop it.\nno time here\n", [], "mixed.txt, line 2: expected '[HH:MM:SS] sentence'"),
    ("empty.srt", "", [], "empty.srt: the file is empty"),
    ("absent.vtt", None, [], "absent.vtt: no such file"),
    ("ok.srt", "1\n00:00:01,000 --> 00:00:02,000\nchop it.\n", ["--model", "results/models/keyclips.pt"],
     "--model results/models/keyclips.pt: not a built-in extractor"),
    ("ok.srt", "1\n00:00:01,000 --> 00:00:02,000\nchop it.\n", ["--keyclips", "models/absent"],
     "models/absent: no trained key-clip selector here: build it with `snakemake -c2 models/absent`"),
    ("ok.srt", "1\n00:00:01,000 --> 00:00:02,000\nchop it.\n", ["--lexicon", "missing.lst"],
     "missing.lst: cooking lexicon not found"),
])
def test_bad_input_is_a_clear_error_and_a_non_zero_exit(tmp_path, name, text, args, message):
    if text is not None:
        (tmp_path / name).write_text(text, encoding="utf-8")
    proc = cookproc(tmp_path, "extract", name, "-o", "out.json", *args)
    assert proc.returncode == 1
    assert proc.stderr.startswith("cookproc extract: error: ") and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("output, message", [
    ("/nonexistent/dir/x.json", "/nonexistent/dir/x.json: the output folder '/nonexistent/dir' does not exist"),
    ("missing/x.md", "missing/x.md: the output folder 'missing' does not exist"),
    ("soup.vtt/x.md", "soup.vtt/x.md: 'soup.vtt' is not a folder"),
    (".", ".: is a folder; give a file name"),
])
def test_output_into_a_missing_folder_is_refused_and_nothing_created(inputs, output, message):
    # The case: -o /nonexistent/dir/x.json used to create the folders silently.
    proc = cookproc(inputs, "extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "-o", output)
    assert proc.returncode == 1 and proc.stderr.startswith(f"cookproc extract: error: {message}"), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert not Path("/nonexistent").exists() and sorted(p.name for p in inputs.iterdir()) == ["cooking.lst", "soup.vtt"]


def test_usage_errors_exit_non_zero(tmp_path):
    proc = cookproc(tmp_path, "extract", "x.srt", "--format", "pdf")
    assert proc.returncode == 2 and "invalid choice: 'pdf'" in proc.stderr


@pytest.fixture(scope="module")
def selector_dir(tmp_path_factory):
    """A tiny key-clip selector artifact (random tiny encoder, synthetic labels)."""
    from test_keyclip_deploy import _clips, _tiny_bert, _train
    from cookproc.keyclips import deploy

    root = tmp_path_factory.mktemp("models")
    trained = _train(_tiny_bert(root / "bert", layers=2), _clips())
    path = root / "keyclips-tiny"
    deploy.save_selector(trained, path, deploy.metadata(trained, config={}, code="test"), card="# card\n")
    return path


@pytest.mark.slow
def test_a_trained_selector_decides_the_key_clips_and_gives_their_probabilities(inputs, selector_dir):
    from cookproc.keyclips.deploy import read_model_json

    from cookproc.app.cli import main

    threshold = read_model_json(selector_dir)["spec"]["threshold"]
    # The installed command once; then in this process (the same code, without a second start-up):
    # --model with a selector's folder is taken as --keyclips; --model naming an SRL extractor, or
    # --tuples none, gives the SRL extractor's tuples instead of the trained tuple extractor's.
    proc = cookproc(inputs, "extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", selector_dir,
                    "--tuples", "none", "-o", "soup--keyclips.json")
    assert proc.returncode == 0, proc.stderr
    assert main(["extract", str(inputs / "soup.vtt"), "--lexicon", str(inputs / "cooking.lst"), "--model",
                 str(selector_dir), "--tuples", "none", "-o", str(inputs / "soup--model.json")]) == 0
    assert main(["extract", str(inputs / "soup.vtt"), "--lexicon", str(inputs / "cooking.lst"), "--keyclips",
                 str(selector_dir), "--model", "srl-heur-spacy", "-o", str(inputs / "soup--srl.json")]) == 0
    for option in ("--keyclips", "--model", "--srl"):
        document = json.loads((inputs / f"soup{option}.json").read_text(encoding="utf-8"))
        jsonschema.validate(document, json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8")))
        assert document["key_clips_by"] == "keyclips-tiny"
        assert document["extractor"] == "keyclips-tiny + srl-heur-spacy"
        assert document["settings"]["keyclip_model"] == str(selector_dir) and document["settings"]["tuple_model"] is None
        probabilities = [c["key_probability"] for c in document["clips"]]
        assert all(0.0 <= p <= 1.0 for p in probabilities)
        assert [c["is_key"] for c in document["clips"]] == [p >= threshold for p in probabilities]
        assert all(c["key_score"] is None for c in document["clips"])
        # The tuples come from the SRL extractor, for every clip.
        assert [c["verbs"] for c in document["clips"]] == [[], ["chop"], ["heat"], ["add"]]


def test_the_default_selector_must_exist(inputs):
    """Without --keyclips the config's procedures.keyclip_model is used; when it was never built the
    command says how to build it (nothing else decides in its place)."""
    (inputs / "cfg.yaml").write_text("procedures:\n  step_model: null\n  keyclip_model: models/never-built\n"
                                     "  lexicon: cooking.lst\n")
    proc = cookproc(inputs, "extract", "soup.vtt", "--config", "cfg.yaml")
    assert proc.returncode == 1 and "never-built: no trained key-clip selector here" in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_the_default_step_model_must_exist_and_decides_alone(inputs):
    """By default the step model decides the key steps; never built, the command says how to build it;
    a key-clip selector beside it is refused (both would decide), and --keyclips turns it off."""
    (inputs / "cfg.yaml").write_text("procedures:\n  step_model: models/steps-never-built\n  lexicon: cooking.lst\n")
    proc = cookproc(inputs, "extract", "soup.vtt", "--config", "cfg.yaml")
    assert proc.returncode == 1 and "steps-never-built: no step model here" in proc.stderr, proc.stderr
    assert "--steps none" in proc.stderr and proc.stdout == ""
    (inputs / "cfg.yaml").write_text("procedures:\n  step_model: models/steps-never-built\n  keyclip_model: models/x\n"
                                     "  lexicon: cooking.lst\n")
    proc = cookproc(inputs, "extract", "soup.vtt", "--config", "cfg.yaml")
    assert proc.returncode == 1 and "both decide the key clips" in proc.stderr, proc.stderr
    proc = cookproc(inputs, "extract", "soup.vtt", "--config", "cfg.yaml", "--keyclips", "none", "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["settings"]["step_model"] is None, proc.stderr


def test_the_default_tuple_extractor_must_exist(inputs, selector_dir):
    """Without --tuples the config's procedures.tuple_model (by default the trained text-only extractor)
    gives the verbs and arguments; when it was never built the command says how to build it or how to
    ask for the SRL extractor instead (nothing else extracts in its place)."""
    (inputs / "cfg.yaml").write_text("procedures:\n  tuple_model: models/tuples-never-built\n  lexicon: cooking.lst\n")
    proc = cookproc(inputs, "extract", "soup.vtt", "--config", "cfg.yaml", "--keyclips", selector_dir)
    assert proc.returncode == 1, proc.stderr
    assert "tuples-never-built: no trained tuple extractor here" in proc.stderr and "--tuples none" in proc.stderr
    assert proc.stdout == ""


def test_a_selector_with_a_pickle_is_refused_with_a_message_not_a_traceback(inputs, selector_dir):
    """Issue 37: a crafted selector with a pickle in encoder/pytorch_model.bin."""
    import os
    import shlex
    import shutil

    import torch

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {shlex.quote(str(inputs / 'pwned'))}",)

    crafted = inputs / "crafted"
    shutil.copytree(selector_dir, crafted)
    torch.save({"weight": Payload()}, crafted / "encoder" / "pytorch_model.bin")
    proc = cookproc(inputs, "extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", "crafted",
                    "--tuples", "none", "-o", "out.json")
    assert proc.returncode == 1
    assert proc.stderr == ("cookproc extract: error: crafted/encoder/pytorch_model.bin: refused: weights are loaded "
                           "from .safetensors files only, and .bin files can hold pickled code; remove it (convert it "
                           "to safetensors if it is the only copy of the weights)\n"), proc.stderr
    assert not (inputs / "pwned").exists() and not (inputs / "out.json").exists()


# ----------------------------------------------------------------------------- issue 46
@pytest.fixture
def no_extraction(monkeypatch):
    """Fails a test that gets as far as extracting: the refusals below come before any work."""
    import cookproc.app.procedures

    def extract_procedure(*args, **kwargs):
        raise AssertionError("extraction started")

    monkeypatch.setattr(cookproc.app.procedures, "extract_procedure", extract_procedure)


@pytest.mark.parametrize("make_output, message", [
    (lambda d: "soup.vtt", "soup.vtt: is the subtitles file 'soup.vtt': writing the procedure there would destroy it"),
    (lambda d: "./soup.vtt", "./soup.vtt: is the subtitles file 'soup.vtt' (the same file)"),
    (lambda d: (d / "hard.md").hardlink_to(d / "soup.vtt") or "hard.md", "hard.md: is the subtitles file 'soup.vtt' "
                                                                          "(the same file)"),
    (lambda d: (d / "soft.md").symlink_to("soup.vtt") or "soft.md", "soft.md: is the subtitles file 'soup.vtt'"),
    (lambda d: "cooking.lst", "cooking.lst: is the lexicon file 'cooking.lst'"),
])
def test_an_output_that_is_an_input_is_refused_before_any_work(inputs, monkeypatch, capsys, no_extraction,
                                                               make_output, message):
    """Issue 46: `cookproc extract a.srt -o a.srt` exited 0 and replaced the subtitles by the output."""
    from cookproc.app.cli import main

    monkeypatch.chdir(inputs)
    output = make_output(inputs)
    before = {p.name: p.read_bytes() for p in inputs.iterdir()}
    assert main(["extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "-o", output]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"cookproc extract: error: {message}") and err.count("\n") == 1, err
    assert {p.name: p.read_bytes() for p in inputs.iterdir()} == before


def test_a_symbolic_link_loop_is_named_as_one(inputs, monkeypatch, capsys):
    """Issue 46: a symlink loop was reported as "no such file"."""
    from cookproc.app.cli import main

    monkeypatch.chdir(inputs)
    Path("loop.srt").symlink_to("loop.srt")
    Path("dangling.srt").symlink_to("gone.srt")
    assert main(["extract", "loop.srt", "--lexicon", "cooking.lst"]) == 1
    assert capsys.readouterr().err == ("cookproc extract: error: loop.srt: a symbolic link loop (following its links "
                                       "leads back to them): point it at the real file\n")
    assert main(["extract", "dangling.srt", "--lexicon", "cooking.lst"]) == 1
    assert capsys.readouterr().err == ("cookproc extract: error: dangling.srt: a symbolic link to 'gone.srt', which "
                                       "does not exist\n")


def test_an_output_folder_without_write_permission_is_named_not_a_hidden_temporary_file(inputs, monkeypatch, capsys,
                                                                                       no_extraction):
    """Issue 46: -o into a read-only folder named the hidden temporary file it could not create."""
    import os

    from cookproc.app.cli import main

    monkeypatch.chdir(inputs)
    Path("ro").mkdir()
    if os.geteuid() != 0:  # root writes anywhere: there the permission is simulated
        Path("ro").chmod(0o555)
    else:
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == Path("ro") else real_access(p, mode))
    assert main(["extract", "soup.vtt", "--lexicon", "cooking.lst", "-o", "ro/soup.md"]) == 1
    assert capsys.readouterr().err == ("cookproc extract: error: ro/soup.md: cannot write into the folder 'ro': no "
                                       "permission (write somewhere else)\n")
    Path("ro").chmod(0o755)


def test_writing_an_output_names_it_never_the_temporary_file(tmp_path, monkeypatch):
    """What the check above cannot see (the folder turned read-only meanwhile, a read-only file
    system): the atomic writer names the output and its folder."""
    import errno
    import tempfile

    from cookproc.core.errors import OutputError
    from cookproc.core.parquet_io import atomic_write_text

    def refused(*args, prefix="", dir=None, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", f"{dir}/{prefix}abc123.tmp")

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(OutputError) as caught:
        atomic_write_text(tmp_path / "out.md", "text")
    assert str(caught.value) == (f"{tmp_path}/out.md: cannot write it: no permission to create files in {tmp_path}: "
                                 "write somewhere else [EACCES]")
    assert ".tmp" not in str(caught.value)


def test_a_full_disk_is_an_error_naming_the_output_and_leaves_nothing(inputs, monkeypatch, capsys):
    """Issue 46: a full disk gave `[Errno 28]` without a path."""
    import errno
    import os

    import cookproc.core.parquet_io as parquet_io
    from cookproc.app.cli import main

    class FullDisk:
        def __init__(self, path, *args, **kwargs):
            self.path = path

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.chdir(inputs)
    monkeypatch.setattr(parquet_io, "open", FullDisk, raising=False)
    assert main(["extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "-o", "soup.md"]) == 1
    err = capsys.readouterr().err
    assert err == (f"cookproc extract: error: soup.md: cannot write it: no space left on the disk holding {inputs}: "
                   "free some space and run again [ENOSPC]\n"), err
    assert sorted(p.name for p in inputs.iterdir()) == ["cooking.lst", "soup.vtt"]  # no output, no temporary file


@pytest.mark.slow
def test_rolling_caption_removal_is_reported_on_stderr_and_strict_refuses_it(inputs):
    """Issue 46: a removal was noted only inside the output; --strict refuses instead."""
    from test_subtitles import youtube_auto_captions

    lines = ["so today we are making a tomato soup", "first chop the onions and the garlic",
             "then heat some oil in a large pot", "add the onions and cook them until soft"]
    (inputs / "auto.vtt").write_text(youtube_auto_captions(lines), encoding="utf-8")
    repeated = sum(len(line.split()) for line in lines) + sum(len(line.split()) for line in lines[:-1])
    proc = cookproc(inputs, "extract", "auto.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "-o", "auto.md")
    assert proc.returncode == 0, proc.stderr
    assert (f"auto.vtt: rolling captions (6 of 7 cue pairs repeat the previous cue's last words): removed {repeated} "
            "repeated words from 7 cues (4 of them left empty and dropped)\n") in proc.stderr
    proc = cookproc(inputs, "extract", "auto.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "--strict",
                    "-o", "strict.md")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("cookproc extract: error: auto.vtt, line 8: rolling captions (6 of 7 cue pairs "
                                  f"repeat the previous cue's last words): would remove {repeated} repeated words"), \
        proc.stderr
    assert not (inputs / "strict.md").exists()


# ----------------------------------------------------------------------------- issue 55
@pytest.mark.parametrize("output, message", [
    # Root may write into /proc as far as permissions go; the file system takes no new file there.
    ("/proc/x.md", "/proc/x.md: cannot write it: /proc takes no new files (a special file system such as /proc or "
                   "/sys?): write somewhere else [ENOENT]"),
    ("/proc/self/x.md", "/proc/self/x.md: cannot write into the folder '/proc/self': no permission"),
    ("/dev/null/x.md", "/dev/null/x.md: '/dev/null' is not a folder"),
    ("x" * 300 + ".md", "x" * 300 + ".md: cannot write it: its name is too long for the file system: give a shorter "
                        "one [ENAMETOOLONG]"),
])
def test_an_output_that_cannot_be_created_is_refused_before_any_work(inputs, monkeypatch, capsys, no_extraction,
                                                                     output, message):
    """Issue 55: `-o /proc/x.md` as root ran the whole extraction, then said "the folder /proc does
    not exist". The output is created (and removed) before the work, and the message says why."""
    import os

    from cookproc.app.cli import main

    monkeypatch.chdir(inputs)
    if os.geteuid() != 0 and output.startswith("/proc"):
        pytest.skip("a user other than root is refused /proc by its permissions, before this check")
    before = sorted(p.name for p in inputs.iterdir())
    assert main(["extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "-o", output]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"cookproc extract: error: {message}") and err.count("\n") == 1, err
    assert sorted(p.name for p in inputs.iterdir()) == before  # no temporary file left


@pytest.mark.parametrize("command", ["extract", "inspect"])
def test_ctrl_c_is_one_line_and_leaves_no_output(inputs, monkeypatch, capsys, command):
    """Issue 55: Ctrl-C ends the command with one line (exit status 130), no traceback, no output."""
    import cookproc.app.inspection
    import cookproc.app.procedures
    from cookproc.app.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cookproc.app.procedures, "extract_procedure", interrupted)
    monkeypatch.setattr(cookproc.app.inspection, "inspect_file", interrupted)
    monkeypatch.chdir(inputs)
    args = (["extract", "soup.vtt", "--lexicon", "cooking.lst", "--keyclips", "none", "-o", "soup.md"]
            if command == "extract" else ["inspect", "any.parquet"])
    assert main(args) == 130
    assert capsys.readouterr().err == (f"cookproc {command}: interrupted (Ctrl-C): the files it was writing were not "
                                       "written; run it again\n")
    assert sorted(p.name for p in inputs.iterdir()) == ["cooking.lst", "soup.vtt"]
