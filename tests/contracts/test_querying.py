"""docs/querying.md runs: every code block of the page is executed on fixture results (gold clips,
two key-clip systems, a corpus dataset of 3 shards) laid out as the workflow lays them out, and its
answer checked against the workflow's own computation (the report's per-recipe scores, its corpus
summary), so that the page cannot fall behind the files or the scoring."""
from __future__ import annotations

import random
import re
from collections import Counter

import duckdb
import pyarrow as pa
import pytest

from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import CLIP_KEY, CLIPS, GOLD_ARG_ROLES, KEYCLIPS
from cookproc.app.corpus import CORPUS_CLIPS, documents_table, partition_path, shard_of, write_dataset_metadata
from cookproc.app.report_pages import summarise_corpus
from cookproc.evaluation.report import per_recipe_scores
from fixtures import REPO


DOC = REPO / "docs" / "querying.md"
RECIPES = ["pancakes", "curry", "salad", "burger"]
VERBS = ["add", "chop", "stir", "pour", "heat", "slice"]


def code_blocks(language):
    return re.findall(rf"^```{language}\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A working directory with results/dataset/clips.parquet, results/keyclips/{neural-text,
    srl-heur-spacy}.parquet and the corpus dataset results/corpus/youcook2/procedures/ (3 shards)."""
    work = tmp_path_factory.mktemp("query")
    rng = random.Random(39)
    clips, systems = [], {"neural-text": [], "srl-heur-spacy": []}
    for v in range(12):
        video_id, recipe = f"vid{v:02d}", RECIPES[v % len(RECIPES)]
        for i in range(rng.randint(3, 9)):
            gold = rng.random() < 0.4
            clips.append({"video_id": video_id, "recipe": recipe, "clip_idx": i, "start_s": 4.0 * i, "end_s": 4.0 * i + 4,
                          "sentence": f"sentence {i} of {video_id}", "is_key": gold, "gold_verbs": [], "gold_args": [],
                          **{f"gold_{role}": [] for role in GOLD_ARG_ROLES}, "key_steps": "", "source_line": len(clips) + 2})
            for system, flips in (("neural-text", 0.2), ("srl-heur-spacy", 0.45)):
                systems[system].append({"system": system, "video_id": video_id, "clip_idx": i,
                                        "is_key": gold != (rng.random() < flips), "score": None, "fold": None})
    write_parquet(pa.Table.from_pylist(clips, schema=CLIPS), work / "results/dataset/clips.parquet", CLIPS,
                  sort_keys=CLIP_KEY)
    for system, rows in systems.items():
        write_parquet(pa.Table.from_pylist(rows, schema=KEYCLIPS), work / f"results/keyclips/{system}.parquet",
                      KEYCLIPS, sort_keys=CLIP_KEY)
    dataset = work / "results/corpus/youcook2/procedures"
    videos = [f"corpus{v:03d}" for v in range(30)]
    for shard in range(3):
        mine = [v for v in videos if shard_of(v, 3) == shard]
        documents = [{"name": v, "extractor": "srl-heur-spacy", "segmentation": "cue", "clips": [
            {"clip_idx": i, "start_s": None, "end_s": None, "source_lines": [i + 1], "sentence": "s",
             "is_key": key, "key_probability": None, "key_score": None, "verbs": verbs, "args": [],
             "tuples": [{"verb": verb, "args": []} for verb in verbs]}
            for i in range(rng.randint(2, 6))
            for key, verbs in [(rng.random() < 0.5, rng.sample(VERBS, rng.randint(0, 2)))]]} for v in mine]
        write_parquet(documents_table(documents, [f"{v}.txt" for v in mine]), partition_path(dataset, shard),
                      CORPUS_CLIPS, sort_keys=CLIP_KEY)
    write_dataset_metadata(dataset, 3)
    return work


@pytest.fixture
def answers(results, monkeypatch):
    """The answers of the page's SQL blocks, in page order, run from the working directory."""
    monkeypatch.chdir(results)
    blocks = code_blocks("sql")
    assert len(blocks) == 3, "docs/querying.md has three worked SQL examples"
    with duckdb.connect() as con:
        return [con.sql(block).to_arrow_table().to_pylist() for block in blocks]


def test_the_clips_where_two_systems_disagree(results, answers):
    from cookproc.core.parquet_io import read_table

    a = read_table(results / "results/keyclips/neural-text.parquet").to_pylist()
    b = read_table(results / "results/keyclips/srl-heur-spacy.parquet").to_pylist()
    expected = [(x["video_id"], x["clip_idx"], x["is_key"], y["is_key"]) for x, y in zip(a, b) if x["is_key"] != y["is_key"]]
    assert expected  # the fixture has disagreements, and agreements
    assert len(expected) < len(a)
    assert [(r["video_id"], r["clip_idx"], r["neural_text"], r["srl_heur_spacy"]) for r in answers[0]] == expected
    gold = {(r["video_id"], r["clip_idx"]): r for r in read_table(results / "results/dataset/clips.parquet").to_pylist()}
    assert all(r["gold"] == gold[r["video_id"], r["clip_idx"]]["is_key"] and
               r["sentence"] == gold[r["video_id"], r["clip_idx"]]["sentence"] for r in answers[0])


def test_a_systems_per_recipe_f1_is_the_reports(results, answers):
    from cookproc.core.parquet_io import read_table

    clips = read_table(results / "results/dataset/clips.parquet")
    system = read_table(results / "results/keyclips/neural-text.parquet")
    report = {r["recipe"]: r for r in per_recipe_scores(clips, {"neural-text": system}, {}).to_pylist()}
    assert sorted(r["recipe"] for r in answers[1]) == sorted(RECIPES)
    assert [r["f1"] for r in answers[1]] == sorted((r["f1"] for r in answers[1]), reverse=True)
    for row in answers[1]:
        expected = report[row["recipe"]]
        assert row["n_clips"] == expected["n_clips"]
        for measure in ("precision", "recall", "f1"):
            assert row[measure] == pytest.approx(expected[measure], abs=1e-9), (row, expected)
    assert len({round(r["f1"], 6) for r in answers[1]}) > 1  # the recipes differ: a real ranking


def test_the_most_frequent_verbs_of_key_steps_are_the_reports(results, answers, monkeypatch):
    summary = summarise_corpus(results / "results/corpus/youcook2/procedures")
    expected = sorted(summary.verbs.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    assert summary.n_key and len(expected) > 1
    assert [(r["verb"], r["key_clips"]) for r in answers[2]] == expected
    # The pyarrow.dataset version on the page gives the same list.
    monkeypatch.chdir(results)
    [python] = code_blocks("python")
    namespace = {}
    exec(compile(python, str(DOC), "exec"), namespace)
    assert namespace["top_verbs"] == expected


def test_the_corpus_summary_counts_each_verb_of_each_key_clip(results):
    # What the page says example 3 counts: every verb of every key clip, duplicates included.
    import pyarrow.dataset as ds

    table = ds.dataset(results / "results/corpus/youcook2/procedures", partitioning="hive").to_table()
    counts = Counter(v for key, verbs in zip(table.column("is_key").to_pylist(), table.column("verbs").to_pylist())
                     if key for v in verbs)
    assert summarise_corpus(results / "results/corpus/youcook2/procedures").verbs == counts
