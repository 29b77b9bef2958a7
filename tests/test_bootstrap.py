"""Bootstrap intervals on toy cases whose answer is known."""
import numpy as np
import pyarrow as pa
import pytest

from cookproc.bootstrap import (holm, interval, keyclip_resamples, macro_prf_resamples, resample_counts,
                                significance_table, table4_intervals, table5_intervals, video_weights,
                                videos_and_clusters)
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
    from cookproc.metrics import score_keyclips

    rng = np.random.default_rng(3)
    gold, pred = rng.random(60) < 0.4, rng.random(60) < 0.5
    video = np.sort(rng.integers(0, 6, 60))
    out = keyclip_resamples(video, gold, pred, np.ones((1, 6), dtype=np.int64))
    plain = score_keyclips(gold, pred)
    assert out["f1"][0] == pytest.approx(plain.f1) and out["accuracy"][0] == pytest.approx(plain.accuracy)


def test_paired_difference_of_a_dominating_system_is_significant():
    videos = [f"v{i:02d}" for i in range(30)]
    clips = pa.table({"video_id": videos})
    rows = []
    for system, precision in (("good", 0.9), ("bad", 0.2), ("same", 0.2)):
        for i, v in enumerate(videos):
            p = precision + 0.05 * ((i % 3) - 1)   # some spread between videos
            rows.append({"system": system, "keyclips": "oracle", "counting": "oracle", "field": "verbs",
                         "mode": "exact", "video_id": v, "clip_idx": 0, "precision": p, "recall": p})
    ci, comparisons = table5_intervals(clips, pa.Table.from_pylist(rows, schema=CLIP_SCORES),
                                       unit="video", resamples=500, seed=1, confidence=0.95)
    f1 = {r["system"]: r for r in ci.to_pylist() if r["metric"] == "f1"}
    assert f1["good"]["ci_low"] <= 90.0 <= f1["good"]["ci_high"] and f1["good"]["ci_high"] - f1["good"]["ci_low"] < 5
    result = {(c["system_a"], c["system_b"]): c for c in significance_table(comparisons, 0.95).to_pylist()}
    assert result[("good", "bad")]["significant"] and result[("good", "bad")]["p_value"] == 0.0
    assert result[("good", "bad")]["difference"] == pytest.approx(70.0)
    assert not result[("bad", "same")]["significant"] and result[("bad", "same")]["difference"] == 0.0


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
    ci, comparisons = table5_intervals(clips, pa.Table.from_pylist(clip_score_rows("a", a) + clip_score_rows("b", b),
                                                                   schema=CLIP_SCORES),
                                       unit="recipe", resamples=300, seed=9, confidence=0.95)
    assert f1_rows(ci)["a"]["ci_high"] - f1_rows(ci)["a"]["ci_low"] > 5   # each system alone varies
    (comparison,) = comparisons
    assert comparison["ci_low"] == pytest.approx(-10.0) and comparison["ci_high"] == pytest.approx(-10.0)
    assert comparison["p_value"] == 0.0

    key_clips = clips.append_column("is_key", pa.array([i % 2 == 0 for i in range(clips.num_rows)]))
    guess = rng.random(clips.num_rows) < 0.5
    _, comparisons = table4_intervals(key_clips, {"x": guess, "y": guess.copy(), "z": ~guess}, unit="recipe",
                                      resamples=300, seed=9, confidence=0.95)
    result = {(c["system_a"], c["system_b"]): c for c in comparisons}
    assert (result[("x", "y")]["ci_low"], result[("x", "y")]["ci_high"], result[("x", "y")]["p_value"]) == (0.0, 0.0, 1.0)
    assert result[("x", "z")]["ci_high"] > result[("x", "z")]["ci_low"]


def test_holm_on_hand_computed_values():
    # Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running max 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])                  # capped at 1
    assert holm([0.02, 0.5, 0.02]) == pytest.approx([0.06, 0.5, 0.06])    # ties share a value
    assert holm([0.2]) == pytest.approx([0.2]) and holm([]).size == 0


def test_significance_uses_the_holm_adjusted_p_value():
    base = {"table": "table5", "keyclips": "oracle", "counting": "oracle", "field": "verbs", "mode": "exact",
            "metric": "f1", "difference": 1.0, "ci_low": 0.5, "ci_high": 1.5}
    comparisons = [{**base, "system_a": "a", "system_b": name, "p_value": p}
                   for name, p in (("b", 0.01), ("c", 0.04), ("d", 0.03), ("e", 0.005))]
    rows = significance_table(comparisons, 0.95).to_pylist()
    assert [r["p_value"] for r in rows] == [0.01, 0.04, 0.03, 0.005]      # raw p kept
    assert [r["p_holm"] for r in rows] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [r["significant"] for r in rows] == [True, False, False, True]  # all four raw p are < 0.05
