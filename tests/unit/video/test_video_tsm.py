"""TSM: the temporal shift, EPIC-format checkpoints (random weights saved here), and predictions
per 5-second segment of a tiny generated video."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import torch

from cookproc.core.errors import InputError
from cookproc.core.schemas import TSM_SEGMENTS
from cookproc.video.epic import EpicClasses
from cookproc.video.frames import open_video
from cookproc.video.tsm import TSM, check_classes, epic_checkpoint, load_epic_tsm, predict_video, temporal_shift
from test_video_frames import make_video

torch.set_num_threads(1)


def save_random_tsm(path: str | Path, *, num_verbs: int = 125, num_nouns: int = 352, segments: int = 8,
                    shift_place: str = "blockres", seed: int = 0, **overrides) -> Path:
    """An EPIC action-models style checkpoint (training args as an argparse.Namespace) with random
    weights; ``overrides`` replace checkpoint entries."""
    torch.manual_seed(seed)
    model = TSM(num_verbs, num_nouns, segments, shift_place=shift_place)
    ckpt = epic_checkpoint(model, args=argparse.Namespace(lr=0.01, arch="resnet50", num_segments=segments))
    ckpt["state_dict"] = {f"module.{k}": v for k, v in ckpt["state_dict"].items()}  # saved from DataParallel
    ckpt.update(overrides)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, path)
    return path


def classes(kind: str, n: int) -> EpicClasses:
    keys = tuple(f"{kind}{i}" for i in range(n))
    return EpicClasses(kind, keys, {k: (k,) for k in keys})


@pytest.fixture(scope="module")
def small_checkpoint(tmp_path_factory) -> Path:
    return save_random_tsm(tmp_path_factory.mktemp("tsm") / "tsm.pth.tar", num_verbs=6, num_nouns=8, segments=3)


def test_shift_moves_one_eighth_of_channels_each_way():
    # (N=1, T=3, C=16): channel value = 100 * t + c, so a moved value tells where it came from.
    x = (100 * torch.arange(3).view(3, 1) + torch.arange(16).view(1, 16)).float().view(3, 16, 1, 1)
    out = temporal_shift(x, n_segment=3, fold_div=8).view(3, 16)
    assert out[0, :2].tolist() == [100, 101] and out[1, :2].tolist() == [200, 201]  # take t+1
    assert out[2, :2].tolist() == [0, 0]  # nothing after the last frame
    assert out[0, 2:4].tolist() == [0, 0] and out[1, 2:4].tolist() == [2, 3]  # take t-1
    assert out[2, 2:4].tolist() == [102, 103]
    assert torch.equal(out[:, 4:], x.view(3, 16)[:, 4:])  # the rest stays
    with pytest.raises(ValueError, match="multiple"):
        temporal_shift(torch.zeros(4, 16, 1, 1), n_segment=3)


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path):
    path = save_random_tsm(tmp_path / "full.pth.tar", segments=2)
    model, info = load_epic_tsm(path)
    assert (info.num_verbs, info.num_nouns, info.segment_count, info.shift_place) == (125, 352, 2, "blockres")
    torch.manual_seed(0)
    reference = TSM(125, 352, 2).eval()
    x = torch.randn(3, 2, 3, 32, 32)
    with torch.inference_mode():
        verb, noun = model(x)
        ref_verb, ref_noun = reference(x)
    assert verb.shape == (3, 125) and noun.shape == (3, 352)
    assert torch.equal(verb, ref_verb) and torch.equal(noun, ref_noun)
    assert "base_model.layer1.0.conv1.net.weight" in epic_checkpoint(model)["state_dict"]


def test_segment_order_matters_through_the_shift(small_checkpoint):
    model, _ = load_epic_tsm(small_checkpoint)
    torch.manual_seed(1)
    x = torch.randn(1, 3, 3, 32, 32)
    with torch.inference_mode():
        verb, _ = model(x)
        reversed_verb, _ = model(x.flip(1))
        # Without the shift the per-frame logits are only averaged: order would not matter.
        for module in model.modules():
            if hasattr(module, "fold_div"):
                module.fold_div = 10 ** 6  # fold = 0: nothing moves
        plain, _ = model(x)
        plain_reversed, _ = model(x.flip(1))
    assert not torch.allclose(verb, reversed_verb, atol=1e-5)
    torch.testing.assert_close(plain, plain_reversed, atol=1e-4, rtol=1e-4)


def test_block_shift_place_loads(tmp_path):
    model, info = load_epic_tsm(save_random_tsm(tmp_path / "block.pth.tar", num_verbs=4, num_nouns=5,
                                                segments=2, shift_place="block"))
    assert info.shift_place == "block"
    assert any(k.startswith("base_model.layer2.0.net.conv1") for k in model.state_dict())


def test_bad_checkpoints_fail_clearly(tmp_path, small_checkpoint):
    with pytest.raises(ValueError, match=r"video\.tsm\.checkpoint"):
        load_epic_tsm(None)
    with pytest.raises(InputError, match="trained with segment_count=3, but 8 was configured"):
        load_epic_tsm(small_checkpoint, expected_segments=8)
    model, info = load_epic_tsm(small_checkpoint)
    with pytest.raises(ValueError, match=r"TSM expects \(N, 3, 3, H, W\)"):
        model(torch.zeros(1, 8, 3, 32, 32))
    with pytest.raises(InputError, match="heads predict 6 verbs / 8 nouns but the class lists have 125 / 8"):
        check_classes(info, classes("verb", 125), classes("noun", 8))

    ckpt = torch.load(small_checkpoint, weights_only=False)
    renamed = dict(ckpt, state_dict={k.replace("conv1.net", "conv1"): v for k, v in ckpt["state_dict"].items()})
    torch.save(renamed, tmp_path / "renamed.pth.tar")
    with pytest.raises(InputError, match=r"renamed.pth.tar: state_dict does not match a blockres ResNet-50 TSM"):
        load_epic_tsm(tmp_path / "renamed.pth.tar")
    torch.save(dict(ckpt, temporal_pool=True), tmp_path / "tp.pth.tar")
    with pytest.raises(InputError, match="temporal_pool=True checkpoints are not implemented"):
        load_epic_tsm(tmp_path / "tp.pth.tar")
    torch.save(dict(ckpt, model_type="tsn"), tmp_path / "tsn.pth.tar")
    with pytest.raises(InputError, match="model_type is 'tsn'"):
        load_epic_tsm(tmp_path / "tsn.pth.tar")
    # Only argparse.Namespace is allow-listed: any other pickled class is refused, never unpickled.
    torch.save(dict(ckpt, args=Path("/x")), tmp_path / "unsafe.pth.tar")
    with pytest.raises(InputError, match="weights_only"):
        load_epic_tsm(tmp_path / "unsafe.pth.tar")


def test_predict_video_labels_each_five_second_segment(tmp_path, small_checkpoint):
    video = open_video(make_video(tmp_path / "vidT.mp4", n_frames=24, fps=2))  # 12 s
    model, _ = load_epic_tsm(small_checkpoint)
    verbs, nouns = classes("verb", 6), classes("noun", 8)
    kwargs = dict(segment_s=5.0, resize=32, crop=32, batch_size=2, device=torch.device("cpu"))
    table = predict_video(video, "vidT", model, verbs, nouns, top_k=2, **kwargs)
    assert table.schema == TSM_SEGMENTS
    rows = table.to_pylist()
    assert [(r["segment_idx"], r["rank"]) for r in rows] == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
    assert [(r["start_s"], r["end_s"]) for r in rows[::2]] == [(0.0, 5.0), (5.0, 10.0), (10.0, 12.0)]
    for top, second in zip(rows[::2], rows[1::2]):
        assert top["verb_score"] >= second["verb_score"] and top["verb_class"] != second["verb_class"]
        assert top["verb_key"] == f"verb{top['verb_class']}" and top["noun_key"] == f"noun{top['noun_class']}"
        assert 0 < top["noun_score"] <= 1
    again = predict_video(video, "vidT", model, verbs, nouns, top_k=2, **dict(kwargs, batch_size=3))
    assert again.column("verb_class").equals(table.column("verb_class"))
    assert again.column("verb_score").to_pylist() == pytest.approx(table.column("verb_score").to_pylist(), abs=1e-5)
