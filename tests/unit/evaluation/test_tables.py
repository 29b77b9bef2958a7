"""Tables 4 and 5 beyond the paper's cells: seeds, threshold rules, threshold-free columns and the
constant of the paper's counting of predicted key clips."""
import numpy as np
import pyarrow as pa
import pytest

from cookproc.core.schemas import KEYCLIPS, TUPLES
from cookproc.evaluation.tables import (BINARY_ONLY, NO_FOLDS, NO_SCORES, NO_SEED, block_label, predicted_counting_constants, seeds_label,
                             table4, table4_wide, table5, table5_wide, threshold_rule_summary)
from cookproc.evaluation.threshold_free import threshold_free_scores

GOLD = [True, False, True, False, False, True]


def clips_table(gold=GOLD):
    return pa.table({"video_id": ["v1"] * 3 + ["v2"] * 3, "clip_idx": pa.array([0, 1, 2] * 2, pa.int32()),
                     "is_key": gold})


def keyclips(system, is_key, score=None, fold=None):
    return pa.Table.from_pylist([{"system": system, "video_id": v, "clip_idx": c, "is_key": k,
                                  "score": None if score is None else score[i], "fold": None if fold is None else fold[i]}
                                 for i, (v, c, k) in enumerate(zip(["v1"] * 3 + ["v2"] * 3, [0, 1, 2] * 2, is_key))],
                                schema=KEYCLIPS)


def test_auc_and_average_precision_against_a_hand_computation():
    scores = [0.9, 0.8, 0.4, 0.3, 0.2, 0.7]   # positives 0.9, 0.4, 0.7; negatives 0.8, 0.3, 0.2
    # AUC: pairs (positive, negative) ranked right: 0.9 beats 3, 0.4 beats 2, 0.7 beats 2 -> 7 of 9.
    # AP: ranking 0.9+ 0.8- 0.7+ 0.4+ ...: precision at each positive 1/1, 2/3, 3/4; mean over 3.
    auc, ap = threshold_free_scores(GOLD, scores)
    assert auc == pytest.approx(7 / 9) and ap == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    assert threshold_free_scores(GOLD, [0.5, None, 0.1, 0.2, 0.3, 0.4]) is None   # a clip without a score
    assert threshold_free_scores([True] * 6, scores) is None                       # one class: undefined


def test_table4_seed_mean_sd_threshold_rule_and_binary_marker():
    clips = clips_table()
    runs = [keyclips("neural-text", flags, [0.9, 0.8, 0.4, 0.3, 0.2, 0.7])
            for flags in ([True, False, True, False, False, True], [True, True, True, False, False, True])]
    systems = {"upstream-neural": keyclips("upstream-neural", [True, False, False, False, False, True]),
               "neural-text": runs[0]}
    table = table4(clips, systems, seed_runs={"neural-text": runs},
                   threshold_rules={"neural-text": "calibrated_f1_accuracy"},
                   seeds={"neural-text": seeds_label([0, 1]), "upstream-neural": "upstream's predictions"})
    rows = {r["system"]: r for r in table.to_pylist()}
    # Seed 0 is perfect (F1 100), seed 1 has one false positive (P 3/4, F1 6/7): mean and sample sd.
    f1 = np.array([100.0, 100 * 6 / 7])
    assert rows["neural-text"]["f1"] == pytest.approx(f1.mean()) and rows["neural-text"]["f1_sd"] == pytest.approx(f1.std(ddof=1))
    assert rows["neural-text"]["seeds"] == "mean over seeds 0, 1"
    assert rows["neural-text"]["auc_roc"] == pytest.approx(7 / 9)
    assert rows["neural-text"]["threshold_objective"] == "calibrated_f1_accuracy"
    binary = rows["upstream-neural"]
    assert binary["f1_sd"] is None and binary["auc_roc"] is None and binary["average_precision"] is None
    assert binary["threshold_objective"] == BINARY_ONLY and binary["f1"] == pytest.approx(100 * 2 / 2.5)
    header, body = table4_wide(table)
    wide = dict(zip(header, body[1]))
    assert wide["F1"] == f"{f1.mean():.1f} ± {f1.std(ddof=1):.1f}" and wide["AUC-ROC (pooled out-of-fold)"] == "0.778"
    # Scores without the folds that made them: no mean per fold.
    assert rows["neural-text"]["auc_roc_fold_mean"] is None and wide["AP (mean per fold)"] == NO_FOLDS
    binary_wide = dict(zip(header, body[0]))
    assert binary_wide["AUC-ROC (pooled out-of-fold)"] == binary_wide["AUC-ROC (mean per fold)"] == NO_SCORES
    assert binary_wide["F1"] == "80.0"


def test_pooled_out_of_fold_and_mean_per_fold_auc_and_ap_by_hand():
    # Fold 0 (v1) scores high, fold 1 (v2) low: each fold ranks its own clips perfectly (AUC and AP 1),
    # but pooled, fold 1's key clip (0.3) ranks below fold 0's non-key one (0.8).
    scores, folds = [0.9, 0.8, 0.85, 0.2, 0.1, 0.3], [0, 0, 0, 1, 1, 1]
    table = table4(clips_table(), {"cv": keyclips("cv", [True, False, True, False, False, True], scores, folds)})
    [row] = table.to_pylist()
    # Pooled: positives 0.9, 0.85 beat every negative, 0.3 beats 2 of 3 -> 8/9; AP: ranks 1, 2 and 4 -> (1 + 1 + 3/4) / 3.
    assert row["auc_roc"] == pytest.approx(8 / 9) and row["average_precision"] == pytest.approx(11 / 12)
    assert row["auc_roc_fold_mean"] == pytest.approx(1.0) and row["average_precision_fold_mean"] == pytest.approx(1.0)
    header, [line] = table4_wide(table)
    assert dict(zip(header, line))["AUC-ROC (mean per fold)"] == "1.000"
    # A fold with one class has no AUC: the mean is over the others (here fold 0 alone: 0.9 beats 0.8, 0.4
    # does not: 1/2); pooled, 0.9 beats all 4 non-key clips and 0.4 two of them: 6/8.
    mixed = table4(clips_table([True, False, True, False, False, False]),
                   {"cv": keyclips("cv", [True] * 6, [0.9, 0.8, 0.4, 0.3, 0.2, 0.7], folds)}).to_pylist()[0]
    assert mixed["auc_roc_fold_mean"] == pytest.approx(1 / 2) and mixed["auc_roc"] == pytest.approx(6 / 8)


def test_threshold_rule_summary_counts_each_folds_choice():
    chosen = lambda *rules: {"folds": {str(i): {"selected": {"threshold_metric": r}} for i, r in enumerate(rules)}}
    assert threshold_rule_summary([chosen("f1", "f1")], "f1_accuracy") == "f1"
    assert threshold_rule_summary([chosen("f1", "calibrated_f1"), chosen("f1", "f1")], "x") == (
        "f1 (3/4 folds), calibrated_f1 (1/4 folds)")
    assert threshold_rule_summary([{"folds": {"0": {"threshold": 0.4}}}], "calibrated_f1") == "calibrated_f1"


def tuples(system, verbs):
    return pa.Table.from_pylist([{"system": system, "video_id": v, "clip_idx": c, "verbs": vs, "args": []}
                                 for v, c, vs in zip(["v1"] * 3 + ["v2"] * 3, [0, 1, 2] * 2, verbs)], schema=TUPLES)


def test_the_papers_counting_is_the_oracle_f1_times_one_constant():
    gold_verbs = [["cut"], [], ["add"], [], [], ["stir"]]
    clips = clips_table().append_column("gold_verbs", pa.array(gold_verbs, pa.list_(pa.string()))) \
        .append_column("gold_args", pa.array([["x"]] * 6, pa.list_(pa.string())))
    systems = {"good": tuples("good", [["cut"], ["fry"], ["add"], [], [], ["mix"]]),
               "poor": tuples("poor", [["cut"], ["cut"], ["cut"], ["cut"], [], []])}
    # Predicted key: two of the three gold clips and two clips without gold verbs.
    predicted = {"sel": keyclips("sel", [True, True, False, True, False, True])}
    table = table5(clips, systems, predicted, masked=True, tuple_seeds={"good": "one seed (0)"},
                   keyclip_seeds={"sel": "one seed (3)"})
    constants = {r["field"]: r for r in predicted_counting_constants(table).to_pylist()}
    verbs = constants["verbs"]
    assert (verbs["n_gold"], verbs["n_counted"]) == (3, 5) and verbs["constant"] == pytest.approx(3 / 5)
    assert verbs["f1_ratio_min"] == pytest.approx(3 / 5) and verbs["f1_ratio_max"] == pytest.approx(3 / 5)
    assert constants["arguments"]["constant"] == 1.0       # every clip has gold arguments
    rows = table.to_pylist()
    assert {r["seeds"] for r in rows if r["system"] == "good" and r["keyclips"] == "oracle"} == {"one seed (0)"}
    assert {r["seeds"] for r in rows if r["system"] == "good" and r["keyclips"] == "sel"} == {
        "one seed (0); key clips sel: one seed (3)"}
    assert {r["seeds"] for r in rows if r["system"] == "poor" and r["keyclips"] == "sel"} == {"key clips sel: one seed (3)"}
    header, body = table5_wide(table)
    assert header[-1] == "Seeds" and body[0][-1] == "one seed (0)"
    assert block_label("-", "oracle", "one seed (3)") == "-"


