"""ResNet-50 frame features: checkpoint loading (random weights saved here), preprocessing,
shapes and determinism on a tiny generated video."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import torch
import torchvision

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import write_parquet
from cookproc.video.frames import open_video
from cookproc.video.imaging import IMAGENET_MEAN, IMAGENET_STD, preprocess, resolve_device
from cookproc.video.resnet import (EMBEDDING_DIM, FRAME_FEATURES, FRAME_FEATURES_KEY, extract_frame_features,
                                   load_resnet50)
from test_video_frames import make_video

torch.set_num_threads(1)


def save_random_resnet(path: str | Path, *, wrap: bool = False, seed: int = 0) -> Path:
    """A torchvision ResNet-50 state dict with random weights (optionally wrapped like a training
    checkpoint: {'state_dict': {'module.' + key: ...}})."""
    torch.manual_seed(seed)
    state = torchvision.models.resnet50(weights=None).state_dict()
    if wrap:
        state = {"state_dict": {f"module.{k}": v for k, v in state.items()}, "epoch": 3}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, path)
    return path


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return save_random_resnet(tmp_path_factory.mktemp("ckpt") / "resnet50.pth")


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return open_video(make_video(tmp_path_factory.mktemp("videos") / "vidR.mp4", n_frames=30, fps=10))


def test_preprocess_resizes_crops_and_normalises():
    frames = np.full((2, 48, 64, 3), 128, np.uint8)
    frames[1] = 255
    out = preprocess(frames, resize=40, crop=32)
    assert out.shape == (2, 3, 32, 32) and out.dtype == torch.float32
    for c in range(3):
        assert out[0, c].mean().item() == pytest.approx((128 / 255 - IMAGENET_MEAN[c]) / IMAGENET_STD[c], abs=1e-3)
        assert out[1, c].mean().item() == pytest.approx((1.0 - IMAGENET_MEAN[c]) / IMAGENET_STD[c], abs=1e-3)
    with pytest.raises(ValueError, match="crop"):
        preprocess(frames, resize=32, crop=40)


def test_device_resolution():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type in ("cpu", "cuda")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            resolve_device("cuda")


def test_no_checkpoint_is_a_clear_error_never_random_weights():
    with pytest.raises(ValueError, match=r"video\.resnet\.checkpoint.*never used silently"):
        load_resnet50(None)
    with pytest.raises(InputError, match="checkpoint file not found"):
        load_resnet50("/nonexistent/resnet50.pth")


def test_bad_checkpoints_are_refused(tmp_path):
    bad = tmp_path / "bad.pth"
    torch.save({"conv1.weight": torch.zeros(64, 3, 7, 7), "head.weight": torch.zeros(2, 2)}, bad)
    with pytest.raises(InputError, match=r"bad.pth: not a torchvision ResNet-50 state dict: missing"):
        load_resnet50(bad)
    text = tmp_path / "text.pth"
    text.write_text("hello")
    with pytest.raises(InputError, match="cannot load as a PyTorch checkpoint"):
        load_resnet50(text)


def test_checkpoint_round_trip_and_wrapped_form(tmp_path, checkpoint):
    model = load_resnet50(checkpoint)
    wrapped = load_resnet50(save_random_resnet(tmp_path / "wrapped.pth", wrap=True))
    x = torch.randn(2, 3, 32, 32)
    with torch.inference_mode():
        out, out_wrapped = model(x), wrapped(x)
    assert out.shape == (2, EMBEDDING_DIM)
    assert torch.equal(out, out_wrapped)  # same seed, same weights, whatever the wrapping
    other = load_resnet50(save_random_resnet(tmp_path / "other.pth", seed=1))
    with torch.inference_mode():
        assert not torch.allclose(other(x), out)  # the weights really come from the file


def test_features_have_t_rows_per_clip_and_are_deterministic(tmp_path, checkpoint, video):
    model = load_resnet50(checkpoint)
    clips = [(0, 0.0, 1.5), (1, 1.5, None)]
    kwargs = dict(frames_per_clip=3, resize=32, crop=32, device=torch.device("cpu"))
    table = extract_frame_features(video, "vidR", clips, model, batch_size=4, **kwargs)
    assert table.schema == FRAME_FEATURES
    assert table.column("clip_idx").to_pylist() == [0, 0, 0, 1, 1, 1]
    assert table.column("frame_idx").to_pylist() == [2, 7, 12, 17, 22, 27]
    assert table.column("time_s").to_pylist() == pytest.approx([0.2, 0.7, 1.2, 1.7, 2.2, 2.7])
    emb = np.asarray(table.column("embedding").combine_chunks().flatten()).reshape(6, EMBEDDING_DIM)
    assert np.isfinite(emb).all() and not np.allclose(emb[0], emb[5])
    again = extract_frame_features(video, "vidR", clips, model, batch_size=4, **kwargs)
    assert again.equals(table)
    one_batch = extract_frame_features(video, "vidR", clips, model, batch_size=6, **kwargs)
    emb_one = np.asarray(one_batch.column("embedding").combine_chunks().flatten()).reshape(6, EMBEDDING_DIM)
    np.testing.assert_allclose(emb_one, emb, rtol=1e-4, atol=1e-4)
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_parquet(table, a, FRAME_FEATURES, sort_keys=FRAME_FEATURES_KEY)
    write_parquet(again, b, FRAME_FEATURES, sort_keys=FRAME_FEATURES_KEY)
    assert a.read_bytes() == b.read_bytes()
    assert pa.types.is_fixed_size_list(FRAME_FEATURES.field("embedding").type)
