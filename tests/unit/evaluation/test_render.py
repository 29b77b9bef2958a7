"""Result figures in the docs' prose (cookproc.evaluation.render_inline): ``<!-- n:KIND ... -->VALUE<!-- /n -->``
rendered from a numbers file, checked against it, and linted without one."""
import subprocess
import sys

import pytest

from cookproc.evaluation import numbers as nb
from cookproc.evaluation import render

RUN = {"commit": "0123456789abcdef", "dirty": False, "date": "2026-12-04", "config_digest": "c0ffee", "code": "d1"}
STAMP = "<!-- numbers:stamp -->\n*Numbers from run 0123456, 2026-12-04 (`results/numbers.json`).*\n<!-- /numbers -->\n"


def toy_numbers():
    cells = [("oracle", "oracle", "verbs", "exact", 9), ("oracle", "oracle", "arguments", "partial", 9),
             ("up", "predicted", "verbs", "exact", 15), ("up", "predicted", "arguments", "partial", 15),
             ("up", "predicted-masked", "verbs", "exact", 9), ("up", "predicted-masked", "arguments", "partial", 9)]
    table5 = [{"system": "srl-heur", "keyclips": k, "counting": c, "field": f, "mode": m, "n_clips": n,
               "precision": 10.0 + i, "recall": 20.0 + i, "f1": 30.0 + i} for i, (k, c, f, m, n) in enumerate(cells)]
    seeds = [{"system": "neural-text", "run": run, "accuracy": acc, "f1": f1}
             for run, acc, f1 in [("seed 0", 83.3, 66.2), ("seed 1", 83.4, 66.3), ("mean", 83.35, 66.25),
                                  ("std", 0.0707, 0.0707)]]
    models = {"keyclips-neural-text": {"crossval": {"system": "neural-text", "runs": [
                  {"run": "seed 0", "accuracy": 82.14, "f1": 65.91}],
                  "intervals": {"metrics": {"f1": [64.0, 67.8]}}}},
              "tuples-supervised-text": {"crossval": {"system": "supervised-text", "cells": [
                  {"field": "verbs", "mode": "exact", "metric": "f1", "value": 60.21, "ci_low": 57.9, "ci_high": 62.5},
                  {"field": "arguments", "mode": "partial", "metric": "f1", "value": 70.64, "ci_low": 69.4,
                   "ci_high": 71.8}]}}}
    return {"format": nb.FORMAT, "format_version": nb.FORMAT_VERSION, "run": RUN, "models": models,
            "run_times": {"benchmarks/srl/train_srl.tsv": {"s": 2790.0, "max_rss_mb": 2180.0}},
            "table4": [{"system": "upstream-neural", "accuracy": 77.66, "f1": 60.84}], "table5": table5,
            "table4_ci": [{"system": "upstream-neural", "metric": "f1", "value": 60.84, "ci_low": 58.04,
                           "ci_high": 63.51}],
            "seeds": seeds,
            "table2": [{"field": "verbs", "items": 4004, "unique_items": 210, "avg_words": 1.02, "exact_pct": 62.2627},
                       {"field": "arguments", "items": 6070, "unique_items": 1893, "avg_words": 1.71,
                        "exact_pct": 63.1466}]}


PROSE = STAMP + """
Key clips F1 <!-- n:table4 system=upstream-neural -->0<!-- /n --> [<!-- n:intervals row=upstream-neural bound=low -->0<!-- /n -->, <!-- n:intervals row=upstream-neural bound=high -->0<!-- /n -->];
tuples <!-- n:table5 row=srl-heur cell=verbs:exact -->0<!-- /n --> (recall <!-- n:table5 row=srl-heur cell=verbs:exact value=recall -->0<!-- /n -->),
predicted <!-- n:table5 row=srl-heur@up cell=arguments:partial -->0<!-- /n --> / <!-- n:table5 row=srl-heur@up cell=arguments:partial counting=predicted-masked -->0<!-- /n -->;
seeds <!-- n:seeds system=neural-text -->0<!-- /n --> ± <!-- n:seeds system=neural-text stat=sd -->0<!-- /n -->;
cards <!-- n:models model=keyclips-neural-text -->0<!-- /n --> [<!-- n:models model=keyclips-neural-text bound=high -->0<!-- /n -->] and <!-- n:models model=tuples-supervised-text field=arguments -->0<!-- /n -->;
the tagger <!-- n:run-times job=benchmarks/srl/train_srl.tsv unit=min -->0<!-- /n --> min, <!-- n:run-times job=benchmarks/srl/train_srl.tsv value=max_rss_mb unit=GB digits=1 -->0<!-- /n --> GB;
constant about <!-- n:predicted-counting keyclips=up -->0<!-- /n -->. A quoted `<!-- n:table4 system=x -->` is no value.
"""


def test_render_fills_every_kind_of_value_and_check_then_passes():
    text = render.render_text(PROSE, toy_numbers(), "doc.md")
    assert "Key clips F1 <!-- n:table4 system=upstream-neural -->60.8<!-- /n --> [" in text
    assert "-->58.0<!-- /n -->, " in text and "-->63.5<!-- /n -->];" in text
    assert "tuples <!-- n:table5 row=srl-heur cell=verbs:exact -->30.0<!-- /n --> (recall " in text
    assert "value=recall -->20.0<!-- /n -->" in text
    # Predicted key clips: the paper's counting unless counting= says otherwise.
    assert "partial -->33.0<!-- /n --> / " in text and "predicted-masked -->35.0<!-- /n -->;" in text
    assert "seeds <!-- n:seeds system=neural-text -->66.25<!-- /n --> ± " in text and "stat=sd -->0.07<!-- /n -->" in text
    assert "cards <!-- n:models model=keyclips-neural-text -->65.9<!-- /n --> [" in text
    assert "bound=high -->67.8<!-- /n -->]" in text and "field=arguments -->70.6<!-- /n -->;" in text
    assert "unit=min -->46<!-- /n --> min" in text and "digits=1 -->2.2<!-- /n --> GB" in text  # 2,180 MB
    # n_gold / n_counted of the paper's counting: 9 / 15.
    assert "keyclips=up -->0.60<!-- /n -->." in text
    assert render.check_text(text, toy_numbers(), "doc.md") == []
    assert render.render_text(text, toy_numbers()) == text
    assert render.lint_text(text, "doc.md") == []


def test_check_names_the_file_line_and_marker_of_a_changed_digit():
    numbers = toy_numbers()
    text = render.render_text(PROSE, numbers, "doc.md")
    [problem] = render.check_text(text.replace("-->66.25<", "-->66.26<"), numbers, "doc.md")
    assert problem == "doc.md, line 8, value <!-- n:seeds system=neural-text -->: is '66.26', the numbers file gives '66.25'"
    # The numbers file moves on: the value that changed is named, the others pass.
    numbers["table4"][0]["f1"] = 61.0
    [problem] = render.check_text(text, numbers, "doc.md")
    assert problem.startswith("doc.md, line 5, value <!-- n:table4 system=upstream-neural -->: is '60.8'")


TABLE2_PROSE = STAMP + """
<!-- n:table2 field=verbs column=items thousands=, -->0<!-- /n --> verbs and <!-- n:table2 field=arguments column=items thousands=, -->0<!-- /n --> arguments,
<!-- n:table2 field=verbs column=exact_pct -->0<!-- /n -->% / <!-- n:table2 field=arguments column=exact_pct -->0<!-- /n -->% found exactly, <!-- n:table2 field=verbs column=items -->0<!-- /n --> without separator.
"""


def test_table2_values_render_counts_with_separators_and_check_names_a_changed_digit():
    numbers = toy_numbers()
    text = render.render_text(TABLE2_PROSE, numbers, "results.md")
    assert ("column=items thousands=, -->4,004<!-- /n --> verbs and <!-- n:table2 field=arguments column=items "
            "thousands=, -->6,070<!-- /n --> arguments,") in text
    assert "exact_pct -->62.3<!-- /n -->% / " in text and "exact_pct -->63.1<!-- /n -->% found" in text
    assert "column=items -->4004<!-- /n --> without" in text
    assert render.check_text(text, numbers, "results.md") == [] and render.lint_text(text, "results.md") == []
    [problem] = render.check_text(text.replace("-->6,070<", "-->6,071<"), numbers, "results.md")
    assert problem == ("results.md, line 5, value <!-- n:table2 field=arguments column=items thousands=, -->: "
                       "is '6,071', the numbers file gives '6,070'")
    numbers["table2"][0]["exact_pct"] = 62.36  # another run: 62.4
    [problem] = render.check_text(text, numbers, "results.md")
    assert problem.endswith("value <!-- n:table2 field=verbs column=exact_pct -->: is '62.3', the numbers file gives '62.4'")
    [problem] = render.lint_text(STAMP + "<!-- n:table2 field=verbs column=items thousands=. -->4.004<!-- /n -->")
    assert "thousands=.: the separator is ','" in problem
    [problem] = render.lint_text(STAMP + "<!-- n:table2 field=verbs -->4004<!-- /n -->")
    assert "a table2 value needs column=..." in problem
    [problem] = render.check_text("<!-- n:table2 field=nouns column=items -->1<!-- /n -->", numbers)
    assert "table2: 0 rows with {'field': 'nouns'}" in problem


def test_a_table2_block_renders_each_field_and_check_catches_a_changed_count():
    numbers = toy_numbers()
    block = "<!-- numbers:table2 fields=verbs,arguments columns=items,unique_items,exact_pct -->\n<!-- /numbers -->\n"
    text = render.render_text(block, numbers, "doc.md")
    assert ("| field | items | unique_items | exact_pct |\n|---|---|---|---|\n| verbs | 4,004 | 210 | 62.3 |\n"
            "| arguments | 6,070 | 1,893 | 63.1 |\n") in text
    assert render.check_text(text, numbers, "doc.md") == [] and render.lint_text(text, "doc.md") == []
    [problem] = render.check_text(text.replace("| 1,893 |", "| 1,894 |"), numbers, "doc.md")
    assert problem.startswith("doc.md, block numbers:table2 (line 1): ") and "is 894, the numbers file gives 893" in problem
    with pytest.raises(render.BlockError, match="table2: no column 'per_key_clip'"):
        render.render_text(block.replace("exact_pct", "per_key_clip"), numbers, "doc.md")


def test_a_table4_block_shows_seed_spread_objective_and_threshold_free_scores():
    numbers = toy_numbers()
    numbers["table4"] = [
        {"system": "neural-text", "accuracy": 83.04, "f1": 66.12, "accuracy_sd": 0.31, "f1_sd": 0.52,
         "seeds": "mean over seeds 0, 1, 2", "threshold_objective": "f1 (nested)", "auc_roc": 0.90412,
         "average_precision": 0.70866, "auc_roc_fold_mean": 0.91249, "average_precision_fold_mean": 0.71513},
        {"system": "upstream-neural", "accuracy": 77.66, "f1": 60.84, "accuracy_sd": None, "f1_sd": None,
         "seeds": "upstream's predictions", "threshold_objective": "none (binary decisions)", "auc_roc": None,
         "average_precision": None}]
    block = ("<!-- numbers:table4 systems=neural-text,upstream-neural "
             "metrics=accuracy,f1,seeds,threshold_objective,auc_roc,average_precision -->\n<!-- /numbers -->\n")
    text = render.render_text(block, numbers, "doc.md")
    assert ("| system | Acc | F1 | seeds | threshold objective | AUC-ROC (pooled out-of-fold) | AP (pooled out-of-fold) "
            "|\n|---|---|---|---|---|---|---|\n"
            "| `neural-text` | 83.0 ± 0.3 | 66.1 ± 0.5 | mean over seeds 0, 1, 2 | f1 (nested) | 0.904 | 0.709 |\n"
            "| `upstream-neural` | 77.7 | 60.8 | upstream's predictions | none (binary decisions) | – | – |\n") in text
    # The mean per fold beside them, to 3 decimals too; a system without scores has none.
    folds = render.render_text(block.replace("auc_roc,average_precision", "auc_roc,auc_roc_fold_mean,"
                                             "average_precision_fold_mean"), {**numbers, "table4": [
                                                 numbers["table4"][0],
                                                 {**numbers["table4"][1], "auc_roc_fold_mean": None,
                                                  "average_precision_fold_mean": None}]}, "doc.md")
    assert "| AUC-ROC (pooled out-of-fold) | AUC-ROC (mean per fold) | AP (mean per fold) |" in folds
    assert "| 0.904 | 0.912 | 0.715 |" in folds and "| – | – | – |" in folds
    assert render.check_text(text, numbers, "doc.md") == []
    # A changed spread or threshold-free score is a difference, not decoration.
    assert render.check_text(text.replace("± 0.5", "± 0.6"), numbers, "doc.md")
    assert render.check_text(text.replace("0.709", "0.710"), numbers, "doc.md")
    value = "<!-- n:table4 system=neural-text metric=average_precision -->0<!-- /n -->"
    assert render.render_text(value, numbers) == value.replace("-->0<", "-->0.709<")
    with pytest.raises(render.BlockError, match="table4: no column 'auc' in the numbers file's row of 'neural-text'"):
        render.render_text(block.replace("auc_roc", "auc"), numbers, "doc.md")


def test_a_significance_block_lists_the_declared_family_with_runs_and_p_values():
    numbers = toy_numbers()
    common = {"metric": "f1", "comparison": "declared pair", "resamples": 9999, "mode": "exact", "field": "verbs"}
    numbers["significance"] = [
        {**common, "table": "table4", "keyclips": "-", "counting": "-", "field": "key clips", "mode": "-",
         "system_a": "neural-text", "run_a": "seed 0", "system_b": "upstream-neural", "run_b": "upstream's predictions",
         "difference": 5.254, "ci_low": 4.01, "ci_high": 6.499, "p_value": 0.0001, "p_holm": 0.0048, "significant": True},
        {**common, "table": "table5", "keyclips": "upstream-neural", "counting": "predicted-masked",
         "system_a": "srl-heur-spacy", "run_a": "-", "system_b": "upstream-srl-heur", "run_b": "-",
         "difference": -0.31, "ci_low": -0.9, "ci_high": 0.28, "p_value": 0.3012, "p_holm": 1.0, "significant": False}]
    block = "<!-- numbers:significance tables=table4,table5 -->\n<!-- /numbers -->\n"
    text = render.render_text(block, numbers, "doc.md")
    assert ("| Table 4, key clips | `neural-text` (seed 0) | `upstream-neural` (upstream's predictions) | "
            "5.25 [4.01, 6.50] | 0.0001 | 0.0048 | yes |") in text
    assert ("| Table 5, upstream-neural key clips (predicted-masked), verbs exact | `srl-heur-spacy` | "
            "`upstream-srl-heur` | -0.31 [-0.90, 0.28] | 0.3012 | 1.0000 | no |") in text
    assert render.check_text(text, numbers, "doc.md") == []
    assert render.check_text(text.replace("0.3012", "0.3013"), numbers, "doc.md")
    only4 = render.render_text(block.replace("table4,table5", "table4"), numbers, "doc.md")
    assert "neural-text" in only4 and "srl-heur-spacy" not in only4
    with pytest.raises(render.BlockError, match="significance: no comparison in tables"):
        render.render_text(block.replace("table4,table5", "table3"), numbers, "doc.md")


def test_a_single_seed_gives_its_score_and_no_spread():
    numbers = toy_numbers()
    numbers["seeds"] = [r for r in numbers["seeds"] if r["run"] == "seed 1"]
    text = "<!-- n:seeds system=neural-text -->0<!-- /n --> ± <!-- n:seeds system=neural-text stat=sd -->0<!-- /n -->"
    assert render.render_text(text, numbers) == text.replace("-->0<", "-->66.30<", 1).replace("-->0<", "-->–<")


def test_each_seeds_run_is_a_row_and_a_value():
    numbers = toy_numbers()
    block = render.render_text("<!-- numbers:seed-runs systems=neural-text metrics=accuracy,f1 -->\n<!-- /numbers -->\n",
                               numbers, "doc.md")
    # The runs behind the mean ± sd, not the mean and std rows themselves.
    assert "| system | seed | Acc | F1 |\n|---|---|---|---|\n| `neural-text` | 0 | 83.30 | 66.20 |\n" \
           "| `neural-text` | 1 | 83.40 | 66.30 |\n<!-- /numbers -->" in block
    assert render.check_text(block, numbers, "doc.md") == []
    assert render.check_text(block.replace("66.30", "66.31"), numbers, "doc.md")
    numbers["seeds"] = [{**r, "run": r["run"].replace(" ", "")} for r in numbers["seeds"]]  # as seed_summary.csv
    value = "<!-- n:seeds system=neural-text run=seed1 metric=accuracy -->0<!-- /n -->"
    assert render.render_text(value, numbers) == value.replace("-->0<", "-->83.40<")
    with pytest.raises(render.BlockError, match="run= or stat=, not both"):
        render.render_text(value.replace("run=", "stat=sd run="), numbers)
    with pytest.raises(render.BlockError, match="no run of 'neural-full'"):
        render.render_text("<!-- numbers:seed-runs systems=neural-full -->\n<!-- /numbers -->\n", numbers, "doc.md")


def test_an_unknown_key_is_an_error_naming_the_marker():
    numbers = toy_numbers()
    with pytest.raises(render.BlockError, match=r"doc.md, line 4, value <!-- n:table4 system=nope -->: table4: 0 rows"):
        render.render_text(STAMP[:-1] + "\nF1 <!-- n:table4 system=nope -->1<!-- /n -->\n", numbers, "doc.md")
    [problem] = render.check_text("F1 <!-- n:models model=keyclips-neural-text field=verbs -->1<!-- /n -->", numbers)
    assert "<!-- n:models model=keyclips-neural-text field=verbs -->: model 'keyclips-neural-text' is a key-clip" in problem
    [problem] = render.check_text("<!-- n:table4 system=upstream-neural metric=auc -->1<!-- /n -->", numbers)
    assert "no column 'auc'" in problem
    [problem] = render.check_text("<!-- n:seeds system=neural-text stat=median -->1<!-- /n -->", numbers)
    assert "stat=median: mean or sd" in problem


def test_lint_reports_malformed_markers_and_a_document_without_a_stamp():
    text = ("a <!-- n:table4 system=x -->1.0\n"  # not closed on its line
            "b <!-- n:tabel4 system=x -->1.0<!-- /n -->\n"
            "c <!-- n:table5 row=x -->1.0<!-- /n -->\n"
            "d <!-- n:table4 system=x metrics=f1 -->1.0<!-- /n -->\n"
            "e <!-- n:table4 system=x --><!-- /n -->\n")
    problems = render.lint_text(text, "doc.md")
    assert problems[0].startswith("doc.md, line 1: a value marker '<!-- n:table4 system=x -->1.0' is not closed")
    assert problems[1] == ("doc.md, line 2, value <!-- n:tabel4 system=x -->: unknown value kind 'tabel4'; "
                           "known: ['alignment', 'intervals', 'models', 'people', 'people-comparison', 'predicted-counting', "
                           "'run-times', 'seeds', 'steps-benchmark', 'table2', 'table4', 'table5']")
    assert problems[2] == "doc.md, line 3, value <!-- n:table5 row=x -->: a table5 value needs cell=..."
    assert "unknown attributes ['metrics'] of a table4 value" in problems[3]
    assert problems[4] == "doc.md, line 5, value <!-- n:table4 system=x -->: no value between the markers"
    assert problems[5] == "doc.md: 4 values but no <!-- numbers:stamp --> block saying which run they come from"
    assert len(problems) == 6
    assert render.lint_text(STAMP + text.split("\n", 1)[1].replace("tabel4", "table4"), "doc.md")[:1] == [
        "doc.md, line 5, value <!-- n:table5 row=x -->: a table5 value needs cell=..."]


def test_a_stamp_block_renders_the_stamp_line_alone():
    text = "<!-- numbers:stamp -->\n*Numbers from earlier runs: to be regenerated.*\n<!-- /numbers -->\n"
    assert render.lint_text(text, "doc.md") == []
    assert render.render_text(text, toy_numbers()) == STAMP
    [problem] = render.check_text(text, toy_numbers(), "doc.md")
    assert problem.startswith("doc.md, block numbers:stamp (line 1): stamp '*Numbers from earlier runs")
    assert "unknown attributes ['x'] of a stamp block" in render.lint_text(text.replace("stamp", "stamp x=1", 1))[0]


def test_the_lint_command_needs_no_numbers_file(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(PROSE, encoding="utf-8")
    lint = [sys.executable, "-m", "cookproc.evaluation.numbers", "lint", str(doc), "--numbers", str(tmp_path / "none")]
    assert subprocess.run(lint, capture_output=True, text=True).returncode == 0
    doc.write_text(PROSE.replace("<!-- numbers:stamp -->\n", "").replace("<!-- /numbers -->\n", ""), encoding="utf-8")
    proc = subprocess.run(lint, capture_output=True, text=True)
    assert proc.returncode == 1 and "no <!-- numbers:stamp --> block" in proc.stderr


def test_the_people_s_table_renders_its_set_step_and_text_views_and_the_paired_differences():
    row = {"system": "steps-x", "n_videos": 3, "mean_steps": 7.25, "matched_steps": 12, "order_tau": 0.41,
           "order_tau_low": 0.3, "order_tau_high": 0.5,
           **{f"{k}_{m}": 50.0 + i for i, k in enumerate(("verbs", "idf_verbs", "nouns", "pairs", "steps", "strict_steps"))
              for m in ("precision", "recall", "f1")},
           **{f"{k}_f1_{b}": 40.0 + (b == "high") * 20 for k in ("verbs", "idf_verbs", "nouns", "pairs", "steps",
                                                              "strict_steps") for b in ("low", "high")},
           **{f"{u}_{m}": 10.0 for u in ("matched", "paragraph") for m in ("bleu4", "meteor", "rouge_l", "cider_d")}}
    comparison = {"system_a": "steps-x", "system_b": "floor", "metric": "steps_f1", "n_videos": 3, "value_a": 54.0,
                  "value_b": 44.0, "difference": 10.0, "ci_low": 6.5, "ci_high": 13.25, "resamples": 99}
    numbers = {**toy_numbers(), "people": [row], "people_comparisons": [comparison]}
    steps = render.KINDS["people"].table(numbers, {"systems": "steps-x", "view": "steps"})
    assert "| `steps-x` | 7.2 | 54.0 / 54.0 | 54.0 [40.0, 60.0] | 55.0 [40.0, 60.0] |" in steps
    texts = render.KINDS["people"].table(numbers, {"systems": "steps-x", "view": "texts"})
    assert "| `steps-x` | 12 | 10.0 |" in texts and "paragraph CIDEr-D" in texts
    pairs = render.KINDS["people-comparisons"].table(numbers, {"pairs": "steps-x-vs-floor", "metrics": "steps_f1"})
    assert "| `steps-x` − `floor` | 10.0 [6.5, 13.2] |" in pairs
    # The constant prior orders nothing: no tau comparison with it, a dash; any other missing row is an error.
    pairs = render.KINDS["people-comparisons"].table(numbers, {"pairs": "steps-x-vs-floor",
                                                               "metrics": "steps_f1,order_tau"})
    assert "| `steps-x` − `floor` | 10.0 [6.5, 13.2] | – |" in pairs
    with pytest.raises(render.BlockError, match="0 rows"):
        render.KINDS["people-comparisons"].table(numbers, {"pairs": "steps-x-vs-floor", "metrics": "nouns_f1"})
    with pytest.raises(render.BlockError, match="view 'words'"):
        render.KINDS["people"].table(numbers, {"systems": "steps-x", "view": "words"})
