"""Inputs of the learned selectors (clips, text context, TSM and ResNet visual sets), the TF-IDF
baseline, the seed summary, and a whole cross-validated run on a tiny fixture."""
import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from cookproc.core.errors import InputError
from cookproc.learn.keyclip_crossval import cross_validate, keyclips_table
from cookproc.learn.folds import clip_folds, make_folds
from cookproc.learn.inputs import (context_features, frame_sets, layout_features, read_clips_parquet, shift_rows,
                                      text_inputs, tsm_sets)
from cookproc.keyclips.lexical import build_vocabulary, terms, token_matrix
from cookproc.keyclips.neural import run_neural
from cookproc.keyclips.summary import seed_summary
from cookproc.keyclips.tfidf import tfidf_fit_predict
from cookproc.keyclips.train import KeyClipTrainConfig
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import ALIGNED_SEGMENTS, KEYCLIPS

torch.set_num_threads(1)


def _clips_df(videos=(("v1", "soup", 3), ("v2", "soup", 2), ("v3", "cake", 4))):
    rows = []
    for vid, recipe, n in videos:
        for c in range(n):
            rows.append({"video_id": vid, "recipe": recipe, "clip_idx": c, "start_s": 4.0 * c, "end_s": 4.0 * c + 4,
                         "sentence": f"add the {vid} part {c}" if c % 2 else "hello there", "is_key": bool(c % 2)})
    return pd.DataFrame(rows)


def _write_clips(path, df):
    table = pa.Table.from_pandas(df, preserve_index=False).cast(pa.schema([
        ("video_id", pa.string()), ("recipe", pa.string()), ("clip_idx", pa.int32()), ("start_s", pa.float64()),
        ("end_s", pa.float64()), ("sentence", pa.string()), ("is_key", pa.bool_())]))
    import pyarrow.parquet as pq
    pq.write_table(table, path)


def test_read_clips_sorts_and_refuses_duplicates(tmp_path):
    df = _clips_df()
    _write_clips(tmp_path / "c.parquet", df.iloc[::-1])
    clips = read_clips_parquet(tmp_path / "c.parquet")
    assert list(zip(clips.video_id, clips.clip_idx))[:3] == [("v1", 0), ("v1", 1), ("v1", 2)]
    _write_clips(tmp_path / "d.parquet", pd.concat([df, df.iloc[[4]]]))
    with pytest.raises(InputError, match=r"clip \(v2, 1\) appears more than once"):
        read_clips_parquet(tmp_path / "d.parquet")
    import pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pandas(df.drop(columns="sentence"), preserve_index=False), tmp_path / "e.parquet")
    with pytest.raises(InputError, match="missing columns"):
        read_clips_parquet(tmp_path / "e.parquet")


def test_context_features_stop_at_video_boundaries():
    clips = _clips_df()
    vec = np.arange(len(clips), dtype=np.float32)[:, None] + 1  # row i holds i+1
    ctx = context_features(vec, clips, window=1)
    assert ctx.shape == (9, 3)
    assert ctx[0].tolist() == [0, 1, 2]  # first clip of v1: no left neighbour
    assert ctx[2].tolist() == [2, 3, 0]  # last clip of v1: v2's first clip is not its neighbour
    assert ctx[3].tolist() == [0, 4, 5]
    assert np.array_equal(context_features(vec, clips, 0), vec)


def test_layout_features():
    lay = layout_features(_clips_df())
    assert lay.shape == (9, 4)
    assert lay[:3, 0].tolist() == [0, 0.5, 1] and lay[:3, 1].tolist() == [1, 0, 0] and lay[:3, 2].tolist() == [0, 0, 1]
    assert lay[1, 3] == pytest.approx(np.log1p(5))  # "add the v1 part 1"


def test_tsm_sets_one_vector_per_segment_with_top1_labels(tmp_path):
    clips = _clips_df()
    rows = []
    for (vid, cidx, seg, verb, noun) in [("v1", 0, 1, 2, 5), ("v1", 0, 2, 3, 5), ("v1", 1, 2, 3, 5), ("v3", 3, 7, 0, 0)]:
        rows.append({"video_id": vid, "clip_idx": cidx, "segment_idx": seg, "start_s": 5.0 * (seg - 1),
                     "end_s": 5.0 * seg, "rank": 1, "verb_class": verb, "verb_key": "x", "verb_score": None,
                     "noun_class": noun, "noun_key": "y", "noun_score": None})
    # A rank-2 row with a score adds that score at its classes.
    rows.append({**rows[0], "rank": 2, "verb_class": 4, "verb_score": 0.25, "noun_class": 6, "noun_score": 0.5})
    path = tmp_path / "aligned.parquet"
    write_parquet(pa.Table.from_pylist(rows, schema=ALIGNED_SEGMENTS), path, ALIGNED_SEGMENTS)
    sets = tsm_sets(path, clips, max_set=4, n_verbs=8, n_nouns=10)
    assert sets.dim == 18 and sets.sizes().tolist() == [2, 1, 0, 0, 0, 0, 0, 0, 1]
    first = sets.vectors[sets.index[0, 0]]
    assert first[2] == 1 and first[4] == 0.25 and first[8 + 5] == 1 and first[8 + 6] == 0.5 and first.sum() == 2.75
    second = sets.vectors[sets.index[0, 1]]
    assert second[3] == 1 and second[8 + 5] == 1 and second.sum() == 2
    with pytest.raises(InputError, match="outside 0..2"):
        tsm_sets(path, clips, n_verbs=3, n_nouns=10)


def _write_frames(path, clips, dim=2048, frames=3, seed=0):
    rng = np.random.default_rng(seed)
    keys = [(v, c, f) for v, c in zip(clips.video_id, clips.clip_idx) for f in range(frames)]
    emb = rng.normal(size=(len(keys), dim)).astype(np.float32)
    table = pa.table({
        "video_id": [k[0] for k in keys], "clip_idx": pa.array([k[1] for k in keys], pa.int32()),
        "frame_idx": pa.array([k[2] for k in keys], pa.int32()),
        "time_s": pa.array([float(k[2]) for k in keys], pa.float64()),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(emb.reshape(-1), pa.float32()), dim)})
    import pyarrow.parquet as pq
    pq.write_table(table, path)
    return emb


def test_frame_sets_read_resnet_features_in_frame_order(tmp_path):
    clips = _clips_df()
    emb = _write_frames(tmp_path / "frames.parquet", clips, dim=2048, frames=4)
    sets = frame_sets(tmp_path / "frames.parquet", clips, max_set=2)
    assert sets.dim == 2048 and (sets.sizes() == 2).all()
    # Uniform subsampling of 4 frames to 2 keeps the first and the last.
    assert np.array_equal(sets.vectors[sets.index[0]], emb[[0, 3]])


def test_lexical_terms_and_vocabulary():
    assert terms("Add the salt, then stir!") == ["add", "the", "salt", "then", "stir", "add the", "the salt",
                                                 "salt then", "then stir"]
    vocab = build_vocabulary(["add salt", "add pepper", "stir"], min_count=2)
    assert vocab == {"add": 1}
    assert token_matrix(["add add", "stir"], vocab).tolist() == [[1, 1], [0, 0]]


def test_shift_rows_respects_videos():
    import scipy.sparse as sp
    m = sp.csr_matrix(np.arange(1, 5, dtype=float)[:, None])
    video = np.array(["a", "a", "b", "b"])
    assert shift_rows(m, video, -1).toarray().ravel().tolist() == [0, 1, 0, 3]
    assert shift_rows(m, video, 1).toarray().ravel().tolist() == [2, 0, 4, 0]


def _toy_benchmark(n_recipes=10, videos=2, clips=12, seed=0):
    """Key clips say "add"/"cut"/"fry"; others chat. Visual evidence agrees with the label."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(n_recipes):
        for v in range(videos):
            for c in range(clips):
                key = bool(rng.random() < 0.4)
                word = rng.choice(["add", "cut", "fry"]) if key else rng.choice(["hello", "subscribe", "thanks"])
                rows.append({"video_id": f"r{r}v{v}", "recipe": f"recipe {r}", "clip_idx": c, "start_s": 5.0 * c,
                             "end_s": 5.0 * c + 5, "sentence": f"{word} the {rng.choice(['rice', 'fish', 'video'])}",
                             "is_key": key})
    return pd.DataFrame(rows)


def test_tfidf_baseline_learns_key_words():
    clips = _toy_benchmark()
    fold, inner = clip_folds(make_folds(clips, 3, 0, 0.2), clips)
    labels = clips["is_key"].to_numpy()
    result = cross_validate(fold, inner, labels, tfidf_fit_predict(clips))
    assert (result.is_key == labels).mean() > 0.95


@pytest.mark.slow
@pytest.mark.parametrize("source", ["frames", "text"])
def test_cross_validated_neural_run_on_a_tiny_fixture_is_good_and_bit_identical(tmp_path, source):
    clips = _toy_benchmark()
    labels = clips["is_key"].to_numpy()
    folds = make_folds(clips, 3, 0, 0.2)
    rng = np.random.default_rng(1)
    text = rng.normal(size=(len(clips), 8)).astype(np.float32)  # uninformative: words carry the signal
    # Few batches per epoch here, so many epochs.
    cfg = KeyClipTrainConfig(dim=8, hidden=8, dropout=0.1, learning_rate=1e-2, batch_size=32, max_epochs=100, patience=20)
    if source == "frames":
        _write_frames(tmp_path / "frames.parquet", clips, dim=16, frames=3)
        visual = frame_sets(tmp_path / "frames.parquet", clips, max_set=3)
        visual.vectors = visual.vectors.copy()  # arrow-backed arrays are read-only
        visual.vectors[:, 0] += np.repeat(np.where(labels, 2.0, -2.0), 3)  # frames of key clips differ
        variant, text_in = "visual", None
    else:
        visual, variant = None, "text"
        text_in = text_inputs(clips, text, context_window=1, layout=True)
    digests = []
    for _ in range(2):
        result = run_neural(variant, clips, folds, text_in, visual, cfg, seed=5)
        path = tmp_path / f"neural-{variant}.parquet"
        write_parquet(keyclips_table(f"neural-{variant}", clips, result), path, KEYCLIPS,
                      sort_keys=["video_id", "clip_idx"])
        digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    assert digests[0] == digests[1]
    assert (result.is_key == labels).mean() > 0.9
    assert sorted(result.thresholds) == [0, 1, 2]


def test_seed_summary_mean_and_spread(tmp_path):
    clips = _clips_df()
    labels = clips["is_key"].to_numpy()
    paths = []
    for seed, flip in ((0, []), (1, [0]), (2, [0, 1])):
        pred = labels.copy()
        pred[flip] = ~pred[flip]
        table = pa.table({"system": ["neural-text"] * len(clips), "video_id": clips["video_id"],
                          "clip_idx": pa.array(clips["clip_idx"], pa.int32()), "is_key": pred,
                          "score": pred.astype(float), "fold": pa.array([0] * len(clips), pa.int32())})
        path = tmp_path / f"neural-text.seed{seed}.parquet"
        write_parquet(table, path, KEYCLIPS)
        paths.append(path)
    out = seed_summary(clips, paths)
    assert out["run"].tolist() == ["seed0", "seed1", "seed2", "mean", "std", "range"]
    acc = out.set_index("run")["accuracy"]
    assert acc["seed0"] == 100 and acc["seed1"] == pytest.approx(800 / 9) and acc["seed2"] == pytest.approx(700 / 9)
    assert acc["mean"] == pytest.approx(np.mean([100, 800 / 9, 700 / 9]))
    assert acc["range"] == pytest.approx(200 / 9)
