"""Bootstrap intervals on toy cases whose answer is known."""
import numpy as np
import pyarrow as pa
import pytest

from cookproc.evaluation.bootstrap import (TABLE4_CELL, interval, keyclip_resamples, macro_prf_resamples,
                                           resample_counts, table4_intervals, table5_intervals, video_weights,
                                           videos_and_clusters)
from cookproc.evaluation.significance import (DECLARED_PAIR, VS_PAPER_BEST, bootstrap_p_value, check_resamples,
                                              declared_family, holm, required_resamples, significance_table,
                                              smallest_p_value)
from cookproc.core.schemas import CLIP_SCORES


def test_resample_counts_draw_every_video_the_right_number_of_times():
    counts = resample_counts(5, 200, seed=1)
    assert counts.shape == (200, 5) and (counts.sum(axis=1) == 5).all()
    assert np.array_equal(counts, resample_counts(5, 200, seed=1))     # seeded
    assert not np.array_equal(counts, resample_counts(5, 200, seed=2))
    assert counts.mean() == pytest.approx(1.0, abs=0.05)                # each video drawn once on average


def test_two_videos_with_precision_zero_and_one():
    # Resampled P is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4 (two draws of two videos).
    counts = resample_counts(2, 4000, seed=7)
    out = macro_prf_resamples(np.array([0, 1]), np.array([0.0, 1.0]), np.array([0.0, 1.0]), counts)
    values, freq = np.unique(out["precision"], return_counts=True)
    assert values.tolist() == [0.0, 0.5, 1.0]
    assert (freq / freq.sum()) == pytest.approx([0.25, 0.5, 0.25], abs=0.03)
    assert interval(out["precision"], 0.95) == (0.0, 1.0)


def test_identical_videos_give_a_point_interval():
    counts = resample_counts(10, 300, seed=0)
    video = np.repeat(np.arange(10), 3)
    out = macro_prf_resamples(video, np.tile([1.0, 0.5, 0.0], 10), np.tile([0.5, 0.5, 0.5], 10), counts)
    assert np.allclose(out["precision"], 0.5) and np.allclose(out["f1"], 0.5)


def test_keyclip_resamples_without_resampling_equal_the_plain_scores():
    from cookproc.scoring.metrics import score_keyclips

    rng = np.random.default_rng(3)
    gold, pred = rng.random(60) < 0.4, rng.random(60) < 0.5
    video = np.sort(rng.integers(0, 6, 60))
    out = keyclip_resamples(video, gold, pred, np.ones((1, 6), dtype=np.int64))
    plain = score_keyclips(gold, pred)
    assert out["f1"][0] == pytest.approx(plain.f1) and out["accuracy"][0] == pytest.approx(plain.accuracy)


ORACLE_VERBS = ("table5", "oracle", "oracle", "verbs", "exact")


def pair(a, b, cell=ORACLE_VERBS):
    """A declared comparison of a with b in one cell (what declared_family returns)."""
    return {"table": cell[0], "keyclips": cell[1], "counting": cell[2], "field": cell[3], "mode": cell[4],
            "comparison": DECLARED_PAIR, "system_a": a, "references": [b]}


def test_paired_difference_of_a_dominating_system_is_significant():
    videos = [f"v{i:02d}" for i in range(30)]
    clips = pa.table({"video_id": videos})
    rows = []
    for system, precision in (("good", 0.9), ("bad", 0.2), ("same", 0.2)):
        for i, v in enumerate(videos):
            p = precision + 0.05 * ((i % 3) - 1)   # some spread between videos
            rows.append({"system": system, "keyclips": "oracle", "counting": "oracle", "field": "verbs",
                         "mode": "exact", "video_id": v, "clip_idx": 0, "precision": p, "recall": p})
    ci, cells = table5_intervals(clips, pa.Table.from_pylist(rows, schema=CLIP_SCORES),
                                 unit="video", resamples=500, seed=1, confidence=0.95)
    f1 = {r["system"]: r for r in ci.to_pylist() if r["metric"] == "f1"}
    assert f1["good"]["ci_low"] <= 90.0 <= f1["good"]["ci_high"] and f1["good"]["ci_high"] - f1["good"]["ci_low"] < 5
    table = significance_table([pair("good", "bad"), pair("bad", "same")], cells, confidence=0.95, resamples=500)
    result = {(c["system_a"], c["system_b"]): c for c in table.to_pylist()}
    # No resample is on the wrong side: the smallest attainable p, never 0.
    assert result[("good", "bad")]["significant"] and result[("good", "bad")]["p_value"] == pytest.approx(2 / 501)
    assert result[("good", "bad")]["difference"] == pytest.approx(70.0)
    assert not result[("bad", "same")]["significant"] and result[("bad", "same")]["difference"] == 0.0
    assert result[("bad", "same")]["p_value"] == 1.0 and table.column("resamples").to_pylist() == [500, 500]


def recipe_clips(recipe_of_video: dict[str, str]) -> pa.Table:
    """The clips-table columns the bootstrap reads: one row per video is enough (it groups by video)."""
    videos = sorted(recipe_of_video)
    return pa.table({"video_id": videos, "recipe": [recipe_of_video[v] for v in videos]})


def clip_score_rows(system, video_scores):
    """CLIP_SCORES rows of one Table 5 cell with precision = recall (so F1 equals the macro precision)."""
    return [{"system": system, "keyclips": "oracle", "counting": "oracle", "field": "verbs", "mode": "exact",
             "video_id": video, "clip_idx": i, "precision": p, "recall": p}
            for video, scores in video_scores.items() for i, p in enumerate(scores)]


def f1_rows(ci: pa.Table) -> dict[str, dict]:
    return {r["system"]: r for r in ci.to_pylist() if r["metric"] == "f1"}


def test_video_weights_keep_every_recipes_videos_together():
    recipe_of_video = {"a1": "pasta", "a2": "pasta", "a3": "pasta", "b1": "soup", "c1": "cake", "c2": "cake"}
    videos, clusters = videos_and_clusters(recipe_clips(recipe_of_video), "recipe")
    assert videos == ["a1", "a2", "a3", "b1", "c1", "c2"] and clusters.tolist() == [1, 1, 1, 2, 0, 0]  # sorted recipes
    weights = video_weights(clusters, 500, seed=3)
    assert weights.shape == (500, 6)
    assert (weights[:, 0] == weights[:, 1]).all() and (weights[:, 1] == weights[:, 2]).all()
    assert (weights[:, 4] == weights[:, 5]).all()
    assert (weights[:, [0, 3, 4]].sum(axis=1) == 3).all()        # three recipes drawn per resample
    assert (weights[:, 0] != weights[:, 3]).any()                # recipes are drawn independently
    # The video unit: one cluster per video, i.e. the plain video bootstrap.
    videos, clusters = videos_and_clusters(recipe_clips(recipe_of_video), "video")
    assert np.array_equal(video_weights(clusters, 500, seed=3), resample_counts(6, 500, seed=3))


def test_bad_units_and_videos_in_two_recipes_are_errors():
    with pytest.raises(ValueError, match="unit must be one of"):
        videos_and_clusters(recipe_clips({"v": "r"}), "clip")
    clips = pa.table({"video_id": ["v1", "v1"], "recipe": ["pasta", "soup"]})
    with pytest.raises(ValueError, match="video v1 belongs to two recipes"):
        videos_and_clusters(clips, "recipe")
    with pytest.raises(ValueError, match="cluster ids must be 0..2"):
        video_weights(np.array([0, 2, 2]), 10, seed=0)


@pytest.mark.parametrize("most_videos_per_recipe", [1, 3])
def test_recipe_bootstrap_of_a_ratio_matches_scipy(most_videos_per_recipe):
    """A Table 5 cell is Σ clip scores / Σ clips over the drawn recipes: scipy's ordinary (paired)
    bootstrap of that ratio over per-recipe (sum, count) pairs is the same distribution. With one
    video per recipe the cluster bootstrap is the ordinary bootstrap over videos."""
    from scipy.stats import bootstrap

    rng = np.random.default_rng(11)
    recipe_of_video, scores = {}, {}
    for r in range(40):
        for k in range(rng.integers(1, most_videos_per_recipe + 1)):
            video = f"r{r:02d}v{k}"
            recipe_of_video[video] = f"recipe{r:02d}"
            scores[video] = (rng.random() * rng.random(rng.integers(1, 5))).tolist()  # clips per video vary
    resamples = 20000
    ci, _ = table5_intervals(recipe_clips(recipe_of_video), pa.Table.from_pylist(clip_score_rows("s", scores),
                                                                                 schema=CLIP_SCORES),
                             unit="recipe", resamples=resamples, seed=5, confidence=0.95)
    ours = f1_rows(ci)["s"]
    recipes = sorted(set(recipe_of_video.values()))
    sums = np.array([sum(sum(scores[v]) for v in scores if recipe_of_video[v] == r) for r in recipes])
    sizes = np.array([sum(len(scores[v]) for v in scores if recipe_of_video[v] == r) for r in recipes])
    reference = bootstrap((100 * sums, sizes), lambda s, n, axis=-1: s.sum(axis=axis) / n.sum(axis=axis),
                          paired=True, vectorized=True, n_resamples=resamples, confidence_level=0.95,
                          method="percentile", rng=np.random.default_rng(6))
    assert ours["value"] == pytest.approx(100 * sums.sum() / sizes.sum())
    # Monte Carlo error of a 2.5% quantile from 20,000 resamples is about 0.02 bootstrap SDs per
    # method; 0.1 SD is about 4 standard errors of the difference.
    tolerance = 0.1 * float(np.std(reference.bootstrap_distribution))
    assert ours["ci_low"] == pytest.approx(reference.confidence_interval.low, abs=tolerance)
    assert ours["ci_high"] == pytest.approx(reference.confidence_interval.high, abs=tolerance)
    assert ours["ci_high"] - ours["ci_low"] > 20 * tolerance      # the check is tighter than the interval


def test_recipe_intervals_are_wider_when_a_recipes_videos_are_alike():
    # Ten recipes of five identical videos: 10 independent values, not 50.
    rng = np.random.default_rng(2)
    recipe_of_video, scores = {}, {}
    for r, value in enumerate(rng.random(10)):
        for k in range(5):
            recipe_of_video[f"r{r}v{k}"] = f"recipe{r}"
            scores[f"r{r}v{k}"] = [value, value]
    clips, clip_scores = recipe_clips(recipe_of_video), pa.Table.from_pylist(clip_score_rows("s", scores),
                                                                             schema=CLIP_SCORES)
    width = {}
    for unit in ("recipe", "video"):
        ci, _ = table5_intervals(clips, clip_scores, unit=unit, resamples=2000, seed=1, confidence=0.95)
        width[unit] = f1_rows(ci)["s"]["ci_high"] - f1_rows(ci)["s"]["ci_low"]
    # Expected ratio about sqrt(5) (the standard error of a mean of 10 rather than 50 values).
    assert width["recipe"] > 1.8 * width["video"]


def test_every_system_gets_the_same_resamples():
    """Paired: system b scores each clip 0.1 above system a, so b − a is exactly 10 points in every
    resample (an unpaired bootstrap would spread it); two identical key-clip systems differ by 0."""
    rng = np.random.default_rng(4)
    recipe_of_video = {f"r{r}v{k}": f"recipe{r}" for r in range(8) for k in range(3)}
    a = {video: (0.8 * rng.random(3)).tolist() for video in recipe_of_video}
    b = {video: [p + 0.1 for p in scores] for video, scores in a.items()}
    clips = recipe_clips(recipe_of_video)
    ci, cells = table5_intervals(clips, pa.Table.from_pylist(clip_score_rows("a", a) + clip_score_rows("b", b),
                                                             schema=CLIP_SCORES),
                                 unit="recipe", resamples=300, seed=9, confidence=0.95)
    assert f1_rows(ci)["a"]["ci_high"] - f1_rows(ci)["a"]["ci_low"] > 5   # each system alone varies
    (comparison,) = significance_table([pair("a", "b")], cells, confidence=0.95, resamples=300).to_pylist()
    assert comparison["ci_low"] == pytest.approx(-10.0) and comparison["ci_high"] == pytest.approx(-10.0)
    assert comparison["p_value"] == pytest.approx(2 / 301)

    key_clips = clips.append_column("is_key", pa.array([i % 2 == 0 for i in range(clips.num_rows)]))
    guess = rng.random(clips.num_rows) < 0.5
    _, cells = table4_intervals(key_clips, {"x": guess, "y": guess.copy(), "z": ~guess}, unit="recipe",
                                resamples=300, seed=9, confidence=0.95)
    table = significance_table([pair("x", "y", TABLE4_CELL), pair("x", "z", TABLE4_CELL)], cells, confidence=0.95,
                               resamples=300)
    result = {(c["system_a"], c["system_b"]): c for c in table.to_pylist()}
    assert (result[("x", "y")]["ci_low"], result[("x", "y")]["ci_high"], result[("x", "y")]["p_value"]) == (0.0, 0.0, 1.0)
    assert result[("x", "z")]["ci_high"] > result[("x", "z")]["ci_low"]


def test_holm_on_hand_computed_values():
    # Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running max 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])                  # capped at 1
    assert holm([0.02, 0.5, 0.02]) == pytest.approx([0.06, 0.5, 0.06])    # ties share a value
    assert holm([0.2]) == pytest.approx([0.2]) and holm([]).size == 0


def wrong_side_samples(wrong: int, resamples: int) -> np.ndarray:
    """Resampled differences with exactly ``wrong`` of ``resamples`` below 0 (the rest above)."""
    return np.r_[-np.ones(wrong), np.ones(resamples - wrong)]


def test_significance_uses_the_holm_adjusted_p_value():
    # B = 999: p = 2 (1 + k) / 1000 for k resamples on the wrong side.
    wrong = {"b": 4, "c": 19, "d": 14, "e": 2}                  # p = 0.01, 0.04, 0.03, 0.006
    samples = {"a": np.zeros(999), **{name: -wrong_side_samples(k, 999) for name, k in wrong.items()}}
    cells = {ORACLE_VERBS: (samples, {name: 0.0 for name in samples}, {name: "-" for name in samples})}
    rows = significance_table([pair("a", name) for name in wrong], cells, confidence=0.95, resamples=999).to_pylist()
    assert [r["p_value"] for r in rows] == pytest.approx([0.01, 0.04, 0.03, 0.006])   # raw p kept
    # Sorted: 0.006·4 = 0.024, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running max 0.06.
    assert [r["p_holm"] for r in rows] == pytest.approx([0.03, 0.06, 0.06, 0.024])
    assert [r["significant"] for r in rows] == [True, False, False, True]  # all four raw p are < 0.05


def test_bootstrap_p_value_counts_the_wrong_side_plus_one():
    # Nine resamples: two at or below 0, eight at or above (0 counts on both sides): k = 2.
    differences = np.array([5, 4, 3, 2, 1, 1, 0.5, 0, -1], dtype=float)
    assert bootstrap_p_value(differences) == pytest.approx(2 * (1 + 2) / (9 + 1))
    assert bootstrap_p_value(-differences) == bootstrap_p_value(differences)    # two-sided
    # None on the wrong side: the smallest attainable p, 2 / (B + 1), which is >= 1 / (B + 1) and not 0.
    assert bootstrap_p_value(np.ones(99)) == pytest.approx(2 / 100) == smallest_p_value(99)
    assert bootstrap_p_value(np.zeros(50)) == 1.0 and bootstrap_p_value(np.r_[np.ones(5), -np.ones(5)]) == 1.0
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_p_value(np.array([]))


def null_pair(rng, n_recipes=24, effect=0.0):
    """Key-clip style data of two systems whose per-clip scores are exchangeable noise around the
    same mean (plus ``effect`` for b); scored as a Table 5 cell."""
    recipe_of_video, a, b = {}, {}, {}
    for r in range(n_recipes):
        for k in range(2):
            video = f"r{r:02d}v{k}"
            recipe_of_video[video] = f"recipe{r:02d}"
            a[video] = rng.random(3).tolist()
            b[video] = (np.clip(rng.random(3) + effect, 0, 1)).tolist()
    rows = clip_score_rows("a", a) + clip_score_rows("b", b)
    return recipe_clips(recipe_of_video), pa.Table.from_pylist(rows, schema=CLIP_SCORES)


def test_near_null_p_value_equals_a_direct_computation():
    """A small true difference against large noise: p is large, at least 1/(B+1), and equals the
    formula applied to differences resampled here by hand from the same recipe weights."""
    resamples, seed = 999, 3
    clips, clip_scores = null_pair(np.random.default_rng(0), effect=0.02)
    _, cells = table5_intervals(clips, clip_scores, unit="recipe", resamples=resamples, seed=seed, confidence=0.95)
    (row,) = significance_table([pair("b", "a")], cells, confidence=0.95, resamples=resamples).to_pylist()
    # By hand: each resample's weight per video, each system's F1 = P = R = Σ w·scores / Σ w·clips.
    videos, clusters = videos_and_clusters(clips, "recipe")
    weights = video_weights(clusters, resamples, seed)
    table = clip_scores.to_pylist()
    by_hand = []
    for w in weights:
        f1 = {}
        for system in ("a", "b"):
            num = sum(w[videos.index(r["video_id"])] * r["precision"] for r in table if r["system"] == system)
            den = sum(w[videos.index(r["video_id"])] for r in table if r["system"] == system)
            f1[system] = 100 * num / den
        by_hand.append(f1["b"] - f1["a"])
    by_hand = np.array(by_hand)
    wrong = min(sum(1 for d in by_hand if d <= 0), sum(1 for d in by_hand if d >= 0))
    assert row["p_value"] == pytest.approx(min(1.0, 2 * (1 + wrong) / (resamples + 1)))
    assert row["p_value"] >= 1 / (resamples + 1) and row["p_value"] > 0.05
    assert not row["significant"]


def test_p_values_under_the_null_are_roughly_uniform():
    """Two exchangeable systems, 300 data sets: a valid p-value rejects at about its level. With 300
    draws the share below 0.1 has a standard error of about 0.017, so the bounds hold ~4 SE each way."""
    rng = np.random.default_rng(12)
    resamples = 199
    p_values = []
    for i in range(300):
        clips, clip_scores = null_pair(rng)
        _, cells = table5_intervals(clips, clip_scores, unit="recipe", resamples=resamples, seed=i, confidence=0.95)
        (row,) = significance_table([pair("b", "a")], cells, confidence=0.95, resamples=resamples).to_pylist()
        p_values.append(row["p_value"])
    p_values = np.array(p_values)
    assert p_values.min() >= 1 / (resamples + 1)
    assert 0.03 <= np.mean(p_values <= 0.1) <= 0.17
    assert 0.4 <= np.mean(p_values <= 0.5) <= 0.6
    assert 0.4 <= np.median(p_values) <= 0.6


SIGNIFICANCE = {"paper_systems": ["upstream-neural", "upstream-srl-heur", "visual-upstream-paper"],
                "keyclip_systems": ["neural-text", "supervised", "not-run"],
                "tuple_systems": ["supervised", "upstream-srl-heur"],
                "cells": ["verbs/exact", "arguments/partial"],
                "pairs": [["srl-heur-spacy", "upstream-srl-heur"], ["visual-upstream-corrected", "visual-upstream-paper"]]}


def test_the_declared_family_is_short_and_never_uses_the_papers_counting():
    family = declared_family(SIGNIFICANCE, keyclip_systems=["upstream-neural", "upstream-srl-heur", "srl-heur-spacy",
                                                            "neural-text", "supervised"],
                             tuple_systems=["upstream-srl-heur", "srl-heur-spacy", "visual-upstream-paper",
                                            "supervised"],
                             predicted_keyclips=["upstream-neural", "supervised"], masked=True)
    table4 = [f for f in family if f["table"] == "table4"]
    assert [(f["system_a"], f["references"], f["comparison"]) for f in table4] == [
        ("neural-text", ["upstream-neural", "upstream-srl-heur"], VS_PAPER_BEST),
        ("supervised", ["upstream-neural", "upstream-srl-heur"], VS_PAPER_BEST),   # "not-run" is left out
        ("srl-heur-spacy", ["upstream-srl-heur"], DECLARED_PAIR)]
    table5 = [f for f in family if f["table"] == "table5"]
    # 3 blocks (oracle, two masked predicted) x 2 cells x (supervised vs the paper's best, the spaCy
    # pair); upstream-srl-heur is the paper's own and the visual pair is not fully scored.
    assert len(table5) == 3 * 2 * 2 and len(family) == 15
    assert {f["counting"] for f in table5} == {"oracle", "predicted-masked"}
    assert {(f["keyclips"], f["field"], f["mode"]) for f in table5} == {
        (k, field, mode) for k in ("oracle", "upstream-neural", "supervised")
        for field, mode in (("verbs", "exact"), ("arguments", "partial"))}
    assert {tuple(f["references"]) for f in table5 if f["comparison"] == VS_PAPER_BEST} == {
        ("upstream-srl-heur", "visual-upstream-paper")}
    unmasked = declared_family(SIGNIFICANCE, keyclip_systems=[], tuple_systems=["upstream-srl-heur", "supervised"],
                               predicted_keyclips=["upstream-neural"], masked=False)
    assert [f["keyclips"] for f in unmasked] == ["oracle", "oracle"]
    with pytest.raises(ValueError, match="'verbs/loose' is not <field>/<mode>"):
        declared_family({**SIGNIFICANCE, "cells": ["verbs/loose"]}, keyclip_systems=[], tuple_systems=[],
                        predicted_keyclips=[], masked=True)


def test_the_paper_best_is_the_reference_with_the_highest_observed_f1():
    samples = {"ours": np.full(99, 50.0), "paper1": np.full(99, 40.0), "paper2": np.full(99, 45.0)}
    observed = {"ours": 50.0, "paper1": 40.0, "paper2": 45.0}
    cells = {TABLE4_CELL: (samples, observed, {"ours": "mean over seeds 0, 1, 2", "paper1": "-", "paper2": "-"})}
    family = [{**pair("ours", "paper1", TABLE4_CELL), "comparison": VS_PAPER_BEST, "references": ["paper1", "paper2"]}]
    (row,) = significance_table(family, cells, confidence=0.95, resamples=99).to_pylist()
    assert (row["system_b"], row["difference"], row["run_a"], row["run_b"]) == ("paper2", 5.0, "mean over seeds 0, 1, 2", "-")
    with pytest.raises(ValueError, match=r"has no scores of \['missing'\]"):
        significance_table([pair("ours", "missing", TABLE4_CELL)], cells, confidence=0.95, resamples=99)


def test_resamples_must_let_holm_reach_alpha_for_the_family():
    # The rule: 2 / (B + 1) < alpha / m. For m = 30 at alpha = 0.05, B + 1 > 1200.
    assert required_resamples(30, 0.05) == 1200
    assert required_resamples(48, 1 - 0.95) == 1920      # 1 - 0.95 is not exactly 0.05 in floating point
    assert smallest_p_value(1200) < 0.05 / 30 <= smallest_p_value(1199)
    check_resamples(1200, 30, 0.05)
    with pytest.raises(ValueError, match="at least 1920"):
        check_resamples(1919, 48, 1 - 0.95)
    check_resamples(10, 0, 0.05)                          # no comparisons declared: nothing to reach
    with pytest.raises(ValueError, match=r"resamples = 999 is too few for a family of 30 .* at least 1200"):
        check_resamples(999, 30, 0.05)
    # significance_table checks it too, with the family it is given.
    cells = {TABLE4_CELL: ({"a": np.ones(19), "b": np.zeros(19)}, {"a": 1.0, "b": 0.0}, {"a": "-", "b": "-"})}
    with pytest.raises(ValueError, match="too few"):
        significance_table([pair("a", "b", TABLE4_CELL)] * 3, cells, confidence=0.95, resamples=19)


def test_pooled_seeds_enter_as_the_mean_of_their_metrics():
    rng = np.random.default_rng(8)
    recipe_of_video = {f"r{r}v{k}": f"recipe{r}" for r in range(6) for k in range(2)}
    clips = recipe_clips(recipe_of_video)
    clips = clips.append_column("is_key", pa.array(rng.random(clips.num_rows) < 0.5))
    seeds = [rng.random(clips.num_rows) < 0.5 for _ in range(3)]
    ci, cells = table4_intervals(clips, {"s": seeds[0]}, runs={"s": seeds}, run_labels={"s": "mean over seeds 0, 1, 2"},
                                 unit="recipe", resamples=200, seed=1, confidence=0.95)
    _, single = table4_intervals(clips, {"s0": seeds[0], "s1": seeds[1], "s2": seeds[2]}, unit="recipe",
                                 resamples=200, seed=1, confidence=0.95)
    samples, observed, runs = cells[TABLE4_CELL]
    assert np.allclose(samples["s"], np.mean([single[TABLE4_CELL][0][f"s{i}"] for i in range(3)], axis=0))
    assert observed["s"] == pytest.approx(np.mean([single[TABLE4_CELL][1][f"s{i}"] for i in range(3)]))
    assert runs == {"s": "mean over seeds 0, 1, 2"} and set(ci.column("run").to_pylist()) == {"mean over seeds 0, 1, 2"}
