"""The caption and people stages as workflow rules, on the fixture: nothing trained, counted or chosen
sees the people's test videos' captions; the people's table and the user's step model come out."""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: fixtures

from fixtures import EXTRA_VIDEOS, REPO, make_workdir, run_snakemake, write_tiny_upstream  # noqa: E402

from cookproc.data.captions import people_split  # noqa: E402

TEST_VIDEOS = sorted(v for v in EXTRA_VIDEOS if people_split(v, in_benchmark=False) == "test")
TRAINED = ["results/captions/captions.train.parquet", "results/captions/alignment.parquet",
           "results/captions/models/steps-captions/arrays.npz", "results/captions/models/steps-captions/model.json",
           "results/captions/models/steps-captions-benchmark/arrays.npz",
           "results/captions/models/steps-captions-benchmark/model.json",
           "results/captions/steps_on_benchmark.csv",
           # What the people's table counts on the training videos and what the retrieval floor copies.
           "results/people/constant_prior.json", "results/people/idf_weights.json",
           "results/people/steps/nearest-video-captions.parquet"]


def digest(path: Path) -> str:
    if path.suffix == ".parquet":  # the data, not the footer's provenance (which names the inputs' digests)
        import pyarrow.parquet as pq

        from cookproc.core import integrity

        return json.dumps(sorted(integrity.stored_digests(pq.read_metadata(path).metadata).items()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def clean_and_poisoned(tmp_path_factory):
    """The stages run on the fixture, and again with every people's test video's captions replaced."""
    base = tmp_path_factory.mktemp("people")
    runs = {}
    for name in ("clean", "poisoned"):
        upstream = write_tiny_upstream(base / name / "upstream")
        if name == "poisoned":
            for video in TEST_VIDEOS:
                (upstream / "youcook2/split" / f"{video}.txt").write_text(
                    "knead the dough\ngrill the fish on the barbecue\n", encoding="utf-8")
        workdir = make_workdir(base / name / "run", upstream, {})
        run_snakemake(workdir, "results/people.csv", "results/models/steps-captions-benchmark")
        runs[name] = workdir
    return runs


@pytest.mark.slow
def test_no_trained_artifact_sees_the_test_videos_captions(clean_and_poisoned):
    assert len(TEST_VIDEOS) >= 2
    clean, poisoned = clean_and_poisoned["clean"], clean_and_poisoned["poisoned"]
    for rel in TRAINED:
        assert digest(clean / rel) == digest(poisoned / rel), f"{rel} changed with the test videos' captions"
    # The rebuilt lexicon counts every non-benchmark video's captions, the test videos' too (the paper's
    # procedure, for Tables 4 and 5 only): nothing of the people's stage reads it.
    assert not (clean / "results/lexicon/rebuilt.lst").exists()
    # The poison did reach what reads the test captions: the reference and the scores.
    assert digest(clean / "results/captions/captions.test.parquet") != digest(
        poisoned / "results/captions/captions.test.parquet")
    assert not pd.read_csv(clean / "results/people.csv").equals(pd.read_csv(poisoned / "results/people.csv"))


@pytest.mark.slow
def test_the_people_table_has_every_system_and_the_model_card_its_scores(clean_and_poisoned):
    run = clean_and_poisoned["clean"]
    table = pd.read_csv(run / "results/people.csv")
    assert list(table["system"]) == ["constant-prior", "nearest-video-captions", "srl-heur-spacy", "steps-captions",
                                     "steps-captions-benchmark"]
    assert (table["n_videos"] == len(TEST_VIDEOS)).all()
    for kind in ("verbs", "steps", "strict_steps"):
        assert ((table[f"{kind}_f1_low"] <= table[f"{kind}_f1"]) & (table[f"{kind}_f1"] <= table[f"{kind}_f1_high"])).all()
    # The retrieval floor copies a training video's captions: as many steps as it has, written as people write.
    floor = table.set_index("system").loc["nearest-video-captions"]
    assert floor["mean_steps"] > 0 and floor["matched_steps"] >= 0 and 0 <= floor["paragraph_meteor"] <= 100
    comparisons = pd.read_csv(run / "results/people_comparisons.csv")
    assert set(comparisons["system_a"]) == {"steps-captions-benchmark"}
    assert set(comparisons["system_b"]) == set(table["system"]) - {"steps-captions-benchmark"}
    steps = comparisons[(comparisons["metric"] == "steps_f1") & (comparisons["system_b"] == "srl-heur-spacy")].iloc[0]
    row = table.set_index("system")
    assert steps["difference"] == pytest.approx(row.loc["steps-captions-benchmark", "steps_f1"]
                                                - row.loc["srl-heur-spacy", "steps_f1"])
    assert "## Steps, aligned one to one" in (run / "results/people.md").read_text(encoding="utf-8")
    card = (run / "results/models/steps-captions-benchmark/MODEL_CARD.md").read_text(encoding="utf-8")
    row = table.set_index("system").loc["steps-captions-benchmark"]
    assert f"On the {len(TEST_VIDEOS)} videos of the people's test set" in card and f"{row['verbs_f1']:.1f}" in card
    # The benchmark row of a step model trained outside the benchmark only: every fixture benchmark video.
    benchmark = pd.read_csv(run / "results/captions/steps_on_benchmark.csv").iloc[0]
    assert benchmark["n_videos"] == 6 and benchmark["n_clips"] == 30 and 0 <= benchmark["f1"] <= 100
    assert "## Scores on the benchmark" in card and "on the 6 benchmark videos" in card
    assert f"| {benchmark['accuracy']:.1f} | {benchmark['precision']:.1f} |" in card


@pytest.mark.slow
def test_a_step_s_nouns_are_said_in_its_narration_and_its_text_is_written(clean_and_poisoned):
    from cookproc.core.parquet_io import read_table

    run = clean_and_poisoned["clean"]
    steps = read_table(run / "results/people/procedures/steps-captions-benchmark.parquet").to_pandas()
    sentences = read_table(run / "results/captions/sentences.parquet").to_pandas()
    said = {video: {n for nouns in group["nouns"] for n in nouns} for video, group in sentences.groupby("video_id")}
    key = steps[steps["is_key"]]
    assert len(key) and key["step_nouns"].map(len).sum() > 0
    for row in key.itertuples():
        assert set(row.step_nouns) <= said[row.video_id], (row.video_id, row.clip_idx)
        assert row.step_text and row.step_text.split()[0] == row.step_verbs[0]


@pytest.mark.slow
def test_a_user_gets_the_step_model_s_steps_in_the_json_the_markdown_and_the_corpus(clean_and_poisoned, tmp_path):
    from cookproc.app.corpus import CORPUS_CLIPS, documents_table
    from cookproc.app.documents import FORMAT_VERSION, to_markdown, validate_document
    from cookproc.app.procedures import ProcedureSettings, procedure_documents

    run = clean_and_poisoned["clean"]
    model = run / "results/models/steps-captions-benchmark"
    narration = REPO / "examples/narration.txt"
    proc = __import__("subprocess").run(
        [sys.executable, "-m", "cookproc.app.cli", "extract", str(narration), "--steps", str(model), "--tuples", "none",
         "--lexicon", str(run.parent / "upstream/youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst"),
         "--format", "json"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    validate_document(document)
    assert document["format_version"] == FORMAT_VERSION == 6 and document["key_clips_by"] == model.name
    steps = [c for c in document["clips"] if c["is_key"]]
    assert steps and all(c["step"] and c["step"]["text"].startswith(c["step"]["verbs"][0]) for c in steps)
    assert all(c["step"] is None for c in document["clips"] if not c["is_key"])
    assert steps[0]["step"]["text"] in to_markdown(document)

    settings = ProcedureSettings.from_config({**json.loads(proc.stdout)["settings"], "extractor": "srl-heur",
                                              "device": "cpu", "step_model": str(model), "tuple_model": None})
    sources = sorted((run.parent / "upstream/youcook2/transcript").glob("vidExtra00[79].txt"))
    documents = procedure_documents(sources, settings, lexicon=document["settings"]["lexicon"])
    table = documents_table(documents, sources)
    assert table.schema.equals(CORPUS_CLIPS) or table.schema.names == CORPUS_CLIPS.names
    rows = table.to_pylist()
    assert any(r["step_text"] for r in rows) and all(bool(r["step_verbs"]) == r["is_key"] for r in rows)


@pytest.mark.slow
def test_the_fixture_s_step_model_writes_each_step_from_its_own_words(clean_and_poisoned):
    """tests/workflow/test_faithfulness.py's checks that hold for any step model, on the fixture's."""
    from test_faithfulness import assert_steps_are_written_from_their_own_words, documents_of

    run = clean_and_poisoned["clean"]
    model = run / "results/models/steps-captions-benchmark"
    run_window = json.loads((model / "model.json").read_text(encoding="utf-8"))["settings"]["run_window"]
    documents = documents_of(model, run.parent / "upstream/youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst")
    assert assert_steps_are_written_from_their_own_words(documents, run_window) > 0
