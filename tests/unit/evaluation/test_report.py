"""The report material (per-recipe scores, error analysis, the procedure and corpus pages). Snakemake's
HTML report in Chromium: tests/workflow/test_report_workflow.py."""
import re

import pyarrow as pa
import pytest

from cookproc.scoring.metrics import score_keyclips
from cookproc.evaluation.error_analysis import keyclip_errors, tuple_errors
from cookproc.evaluation.report import csv_page, per_recipe_scores
from cookproc.core.schemas import CLIPS, GOLD_ARG_ROLES

# (video, recipe, sentence, gold key, gold verbs, gold args)
ROWS = [
    ("v1", "soup", "chop the onions .", True, ["chop"], ["onions"]),
    ("v1", "soup", "add the salt .", True, ["add"], ["salt"]),
    ("v1", "soup", "thanks for watching .", False, [], []),
    ("v2", "cake", "whisk the eggs .", True, ["whisk"], ["eggs"]),
    ("v2", "cake", "bake it .", True, ["bake"], ["cake", "oven"]),
]


def clips_table():
    rows = []
    for i, (video, recipe, sentence, key, verbs, args) in enumerate(ROWS):
        idx = sum(r[0] == video for r in ROWS[:i])
        rows.append({"video_id": video, "recipe": recipe, "clip_idx": idx, "start_s": 5.0 * idx, "end_s": None,
                     "sentence": sentence, "is_key": key, "gold_verbs": verbs, "gold_args": args,
                     **{f"gold_{r}": (args if r == "objects" else []) for r in GOLD_ARG_ROLES},
                     "key_steps": "", "source_line": i + 2})
    return pa.Table.from_pylist(rows, schema=CLIPS)


def keyclips_table(flags, scores=None):
    return pa.table({"system": ["s"] * len(ROWS), "video_id": [r[0] for r in ROWS],
                     "clip_idx": [sum(x[0] == r[0] for x in ROWS[:i]) for i, r in enumerate(ROWS)],
                     "is_key": flags, "score": scores or [None] * len(ROWS), "fold": [None] * len(ROWS)})


def tuples_table(verbs, args):
    return pa.table({"system": ["s"] * len(ROWS), "video_id": [r[0] for r in ROWS],
                     "clip_idx": [sum(x[0] == r[0] for x in ROWS[:i]) for i, r in enumerate(ROWS)],
                     "verbs": verbs, "args": args})


def test_per_recipe_scores_match_the_metrics_on_each_recipe():
    clips = clips_table()
    flags = [True, False, True, True, True]
    verbs = [["chop"], ["stir"], [], ["whisk"], ["bake"]]
    args = [["onions"], ["salt"], ["you"], ["eggs"], ["oven"]]
    table = per_recipe_scores(clips, {"k": keyclips_table(flags)}, {"t": tuples_table(verbs, args)}, mode="exact")
    rows = {(r["recipe"], r["system"], r["field"]): r for r in table.to_pylist()}
    soup = score_keyclips([True, True, False], [True, False, True])
    assert rows[("soup", "k", "keyclips")]["f1"] == pytest.approx(100 * soup.f1)
    assert rows[("cake", "k", "keyclips")]["f1"] == 100.0
    # soup verbs: chop right, stir wrong (gold add) -> P = R = 50; the non-key clip is not counted.
    assert rows[("soup", "t", "verbs")]["f1"] == 50.0 and rows[("soup", "t", "verbs")]["n_clips"] == 2
    # cake arguments: eggs (1/1), oven of {cake, oven} (P 1, R 1/2) -> P 100, R 75.
    assert rows[("cake", "t", "arguments")]["recall"] == 75.0 and rows[("cake", "t", "arguments")]["precision"] == 100.0
    assert len(table) == 2 + 2 * 2


def test_error_pages_rank_errors_and_show_sentences():
    clips = clips_table()
    verbs = [["chop"], ["stir"], ["thank"], ["stir"], ["bake"]]
    args = [["onions"], ["salt"], [], ["eggs"], ["cake", "oven"]]
    body = tuple_errors(clips, tuples_table(verbs, args), system="t", top=5, examples=2)
    verbs_part = body.split("<h2>Arguments</h2>")[0]
    # "stir" is wrong on two counted clips; "thank" is on a clip without gold verbs: not counted.
    assert "<tr><td>stir</td><td class=\"num\">2</td>" in verbs_part and "thank" not in verbs_part
    assert "add the salt ." in verbs_part and "gold: add" in verbs_part
    assert "2 correct, 2 false positives, 2 false negatives" in verbs_part
    assert "5 correct, 0 false positives, 0 false negatives" in body.split("<h2>Arguments</h2>")[1]

    flags, scores = [False, True, True, False, True], [0.2, 0.9, 0.7, 0.1, 0.8]
    body = keyclip_errors(clips, keyclips_table(flags, scores), system="k", top=5, examples=2)
    assert "2 false negatives" in body and "1 false positives" in body
    missed = body.split("<h2>Non-key")[0]
    assert missed.index("<td>chop</td>") < missed.index("<td>whisk</td>")  # ties: alphabetical
    assert "thanks for watching ." in body.split("<h2>Non-key")[1] and "0.700" in body


def test_csv_page_rounds_and_escapes(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("system,f1\n<b>x</b>,61.23456\n", encoding="utf-8")
    page = csv_page(path, "T & U")
    assert "<title>T &amp; U</title>" in page and "&lt;b&gt;x&lt;/b&gt;" in page and ">61.2<" in page


def test_procedure_page_lists_the_key_steps_in_order_with_their_probability():
    from cookproc.app.documents import ClipExtraction, ProcedureTuple, procedure_document
    from cookproc.app.report_pages import procedure_html
    from cookproc.app.clips import Clip
    from test_procedures import SETTINGS

    clips = [Clip(0.0, 3.0, "hey everybody <welcome>", [1]), Clip(3.0, 6.0, "whisk the eggs", [5]),
             Clip(6.0, 9.0, "my dog is barking", [9]), Clip(9.0, None, "flip the pancake", [13])]
    exts = [ClipExtraction(False, None, [], [], [], 0.1),
            ClipExtraction(True, None, ["whisk"], ["the eggs"], [ProcedureTuple("whisk", ("the eggs",))], 0.91),
            ClipExtraction(False, None, ["bark"], [], [ProcedureTuple("bark", ())], 0.2),
            ClipExtraction(True, None, ["flip"], [], [ProcedureTuple("flip", ())], 0.77)]
    doc = procedure_document("pancakes", clips, exts, source="data/user/pancakes.srt", video=None,
                             extractor="keyclips-neural-text + srl-heur-spacy", settings=SETTINGS,
                             segmentation="cue", key_clips_by="keyclips-neural-text")
    body = procedure_html(doc)
    rows = re.findall(r"<tr>(<td.*?)</tr>", body)
    assert len(rows) == 2  # the key steps only, in order
    assert "00:00:03.0–00:00:06.0" in rows[0] and "whisk (the eggs)" in rows[0] and ">0.91<" in rows[0]
    assert "00:00:09.0–end" in rows[1] and ">0.77<" in rows[1]
    assert "bark" not in body and "2 key steps of 4 clips" in body and "keyclips-neural-text" in body
    doc["n_key_clips"] = 3  # a document that contradicts itself is refused, not rendered
    with pytest.raises(ValueError, match="n_key_clips is 3"):
        procedure_html(doc)


def test_corpus_summary_counts_steps_per_video_and_ranks_verbs_and_arguments():
    from cookproc.app.corpus import CORPUS_CLIPS
    from cookproc.app.report_pages import corpus_summary_html

    def row(video, i, key, verbs, args):
        return {"video_id": video, "clip_idx": i, "source": f"{video}.txt", "start_s": None, "end_s": None,
                "source_lines": [i + 1], "sentence": "s", "is_key": key, "key_probability": None, "key_score": None,
                "verbs": verbs, "args": args, "tuples": [], "extractor": "srl-heur-spacy", "segmentation": "cue"}

    rows = [row("a", 0, True, ["add"], ["salt"]), row("a", 1, True, ["stir", "add"], ["pot"]),
            row("a", 2, False, ["watch"], ["video"]),  # not a key step: not counted
            row("b", 0, True, ["chop"], ["salt"]), row("c", 0, False, ["add"], [])]
    body = corpus_summary_html(pa.Table.from_pylist(rows, schema=CORPUS_CLIPS), top=2)
    assert "3 videos, 5 clips, 3 key clips" in body
    # Steps per video 2, 1, 0: mean 1.0, min 0, median 1, max 2, one video without a step.
    stats = re.findall(r'<td class="num">([^<]*)</td>', body.split("Steps per video")[1].split("<h2>")[0])
    assert stats == ["1.0", "0", "0.5", "1", "1.5", "2", "1"]
    verbs = re.findall(r"<tr>(<td.*?)</tr>", body.split("Most frequent verbs")[1].split("<h2>")[0])
    assert [re.findall(r"<td[^>]*>([^<]*)</td>", r) for r in verbs] == [["1", "add", "2"], ["2", "chop", "1"]]
    assert "watch" not in body and ">video<" not in body


def test_the_corpus_summary_added_shard_by_shard_is_the_whole_tables():
    import random

    import pyarrow.compute as pc

    from cookproc.app.corpus import CORPUS_CLIPS
    from cookproc.app.report_pages import CorpusSummary, corpus_summary_html

    rng = random.Random(3)
    rows = [{"video_id": f"v{v}", "clip_idx": i, "source": f"v{v}.txt", "start_s": None, "end_s": None,
             "source_lines": [i + 1], "sentence": "s", "is_key": rng.random() < 0.4, "key_probability": None,
             "key_score": None, "verbs": rng.sample(["add", "chop", "stir", "fry"], rng.randint(0, 2)),
             "args": rng.sample(["salt", "pan", "oil"], rng.randint(0, 2)), "tuples": [],
             "extractor": "srl-heur-spacy", "segmentation": "cue"}
            for v in range(9) for i in range(rng.randint(1, 7))]
    whole = pa.Table.from_pylist(rows, schema=CORPUS_CLIPS)
    summary = CorpusSummary()
    for part in (range(0, 4), range(4, 6), range(6, 9)):  # whole videos per part, as shards hold them
        summary.add(whole.filter(pc.is_in(whole.column("video_id"),
                                                  pa.array([f"v{v}" for v in part]))).select(CorpusSummary.COLUMNS))
    assert summary.html(top=3) == corpus_summary_html(whole, top=3)
    assert summary.steps_per_video.total() == 9 and summary.n_clips == len(rows)
