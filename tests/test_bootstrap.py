"""Bootstrap intervals on toy cases whose answer is known."""
import numpy as np
import pyarrow as pa
import pytest

from cookproc.bootstrap import interval, keyclip_resamples, macro_prf_resamples, resample_counts, table5_intervals
from cookproc.schemas import CLIP_SCORES


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
                                       resamples=500, seed=1, confidence=0.95)
    f1 = {r["system"]: r for r in ci.to_pylist() if r["metric"] == "f1"}
    assert f1["good"]["ci_low"] <= 90.0 <= f1["good"]["ci_high"] and f1["good"]["ci_high"] - f1["good"]["ci_low"] < 5
    result = {(c["system_a"], c["system_b"]): c for c in comparisons}
    assert result[("good", "bad")]["significant"] and result[("good", "bad")]["p_value"] == 0.0
    assert result[("good", "bad")]["difference"] == pytest.approx(70.0)
    assert not result[("bad", "same")]["significant"] and result[("bad", "same")]["difference"] == 0.0
