"""Faithfulness of the step model on hand-written narrations (issue 54): the README's two examples and
narrations of our own (tests/data/narrations: a sponsor read, asides, a YouTube-style automatic caption
file: lower case, no punctuation, rolling cues). Each narration's lines (clips) are labelled here as
instructions or chatter.

What holds for any step model (checked on the step model the fixture trains, and on the real one):
every step text starts with its first verb; every noun of a step is in its text and said within its
run of sentences (at most ``run_window`` clips from the step); every verb of a step is one of its
words. What the real model must do (the deployed `steps-captions-benchmark`, built by the main job;
``COOKPROC_STEP_MODEL`` names another folder): no chatter line is a step, and every instruction line is
a step of its own (not reached yet on three narrations: marked as expected failures). Those tests are
skipped where that model has not been built.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from fixtures import REPO

NARRATIONS = REPO / "tests/data/narrations"
# Per file: the 0-based clips that give an instruction, and those that are chatter (greetings, sponsors,
# asides, sign-offs, what the video is about).
LABELS = {
    REPO / "examples/pancakes.srt": ([2, 4, 5, 6, 7, 8], [0, 1, 3, 9]),
    REPO / "examples/narration.txt": ([3, 4, 5, 7, 8, 9, 10, 11], [0, 1, 2, 6, 12]),
    NARRATIONS / "stir_fry.txt": ([3, 4, 5, 6, 7, 8, 9, 10, 11], [0, 1, 2, 12, 13]),
    NARRATIONS / "bread.txt": ([3, 4, 5, 7, 8, 9, 10], [0, 1, 2, 6, 11]),
    NARRATIONS / "auto_captions.vtt": ([2, 3, 4, 5, 6], [0, 1, 7]),
}
REAL_MODEL = Path(os.environ.get("COOKPROC_STEP_MODEL", REPO / "results/models/steps-captions-benchmark"))


def documents_of(model: Path, lexicon: Path | None = None) -> dict[Path, dict]:
    import yaml

    from cookproc.app.procedures import ProcedureSettings, procedure_documents

    section = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["procedures"]
    settings = ProcedureSettings.from_config({**section, "step_model": str(model), "tuple_model": None,
                                              "keyclip_model": None, "extractor": "srl-heur", "srl_backend": "spacy",
                                              "device": "cpu"})
    sources = sorted(LABELS)
    documents = procedure_documents(sources, settings, lexicon=str(lexicon) if lexicon else None)
    return dict(zip(sources, documents))


def assert_steps_are_written_from_their_own_words(documents: dict[Path, dict], run_window: int):
    from cookproc.data.step_words import transcript_words

    steps = 0
    for source, document in documents.items():
        clips = document["clips"]
        said = [set(w.nouns) for w in transcript_words([c["sentence"] for c in clips])]
        for clip in clips:
            step = clip["step"]
            assert (step is not None) == clip["is_key"], (source.name, clip["clip_idx"])
            if step is None:
                continue
            steps += 1
            assert step["text"].split()[0] == step["verbs"][0], (source.name, step)
            near = set().union(*said[max(0, clip["clip_idx"] - run_window):clip["clip_idx"] + run_window + 1])
            assert set(step["nouns"]) <= near, (source.name, clip["clip_idx"], step, near)
            assert all(noun in step["text"] or noun[:-1] in step["text"] for noun in step["nouns"]), step
    return steps


@pytest.fixture(scope="module")
def real_documents():
    if not (REAL_MODEL / "model.json").exists():
        pytest.skip(f"the deployed step model {REAL_MODEL} has not been built (snakemake -c2 {REAL_MODEL.name})")
    import yaml

    from cookproc.app.cli import LEXICON_FILE

    upstream = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["upstream"]["dir"]
    return documents_of(REAL_MODEL, (REPO / upstream / LEXICON_FILE).resolve())


def test_the_real_model_writes_each_step_from_its_own_words(real_documents):
    import json

    run_window = json.loads((REAL_MODEL / "model.json").read_text(encoding="utf-8"))["settings"]["run_window"]
    assert assert_steps_are_written_from_their_own_words(real_documents, run_window) > 20


def labelled_clips(documents: dict[Path, dict], source: Path) -> tuple[list[int], list[int], list[dict]]:
    """A narration's instruction and chatter clips (:data:`LABELS`) and its document's clips, one per line."""
    instructions, chatter = LABELS[source]
    clips = documents[source]["clips"]
    assert len(clips) == len(instructions) + len(chatter), [c["sentence"] for c in clips]
    return instructions, chatter, clips


# Issue 54's aim that the deployed model does not reach yet: it writes no step where its sentence model
# finds none of the video's verbs likely enough (the instructions named in the failure). A rule that made
# every imperative sentence a step was tried on the inner-validation videos and rejected: it lowered step
# F1 and most of the steps it added to real transcripts were chatter (docs/methods.md). Strict: a model
# that reaches it turns these into failures, to be removed.
LOSES_INSTRUCTIONS = {"narration.txt", "stir_fry.txt", "bread.txt"}


@pytest.mark.parametrize("source", [pytest.param(s, marks=pytest.mark.xfail(
    strict=True, reason="the deployed step model loses some instructions (issue 54, not reached)"))
    if s.name in LOSES_INSTRUCTIONS else s for s in sorted(LABELS)], ids=lambda p: p.name)
def test_every_instruction_is_a_step(real_documents, source):
    instructions, _, clips = labelled_clips(real_documents, source)
    lost = [clips[i]["sentence"] for i in instructions if not clips[i]["is_key"]]
    assert not lost, f"instructions that are no step: {lost}"


@pytest.mark.parametrize("source", sorted(LABELS), ids=lambda p: p.name)
def test_no_chatter_is_a_step(real_documents, source):
    _, chatter, clips = labelled_clips(real_documents, source)
    chatty = [clips[i]["sentence"] for i in chatter if clips[i]["is_key"]]
    assert not chatty, f"chatter that is a step: {chatty}"
