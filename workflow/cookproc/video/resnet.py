"""ImageNet ResNet-50 frame features (2048-d, global-average-pooled) for the key-clip model.

Weights come only from a user checkpoint (torchvision's ``resnet50-*.pth`` state dict, or a dict
holding one under ``state_dict``/``model``): there is no download and no silent random init.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import torch
import torchvision
from torch import nn

from cookproc.core.errors import InputError
from cookproc.core.logs import Progress
from cookproc.video.frames import Video, centre_indices
from cookproc.video.imaging import preprocess

log = logging.getLogger(__name__)

EMBEDDING_DIM = 2048

#: One row per sampled frame: T rows per clip in time order. ``frame_idx`` is the frame's index in
#: the decoded video (repeated when a clip has fewer frames than T), ``time_s`` its timestamp.
FRAME_FEATURES = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("frame_idx", pa.int32(), nullable=False),
        pa.field("time_s", pa.float64(), nullable=False),
        pa.field("embedding", pa.list_(pa.float32(), EMBEDDING_DIM), nullable=False),
    ]
)
FRAME_FEATURES_KEY = ("video_id", "clip_idx", "frame_idx")


def missing_checkpoint_error(what: str, key: str) -> ValueError:
    return ValueError(
        f"no {what} checkpoint configured: set `{key}` in config.yaml to a local weights file. "
        "Pretrained weights are never downloaded and random weights are never used silently.")


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """Tensors of a plain or wrapped state dict, ``module.`` prefixes stripped (weights_only load)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "checkpoint file not found")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise InputError(path, f"cannot load as a PyTorch checkpoint: {exc}") from exc
    if isinstance(obj, dict):
        for wrapper in ("state_dict", "model"):
            if isinstance(obj.get(wrapper), dict):
                obj = obj[wrapper]
                break
    if not isinstance(obj, dict) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise InputError(path, "expected a state dict (parameter name -> tensor)")
    return {(k[len("module."):] if k.startswith("module.") else k): v for k, v in obj.items()}


def load_resnet50(path: str | Path | None) -> nn.Module:
    """torchvision ResNet-50 with the checkpoint's weights, classifier removed (outputs 2048-d), eval."""
    if not path:
        raise missing_checkpoint_error("ResNet-50", "video.resnet.checkpoint")
    state = read_state_dict(path)
    state = {k: v for k, v in state.items() if not k.startswith("fc.")}  # the classifier is not used
    model = torchvision.models.resnet50(weights=None)
    model.fc = nn.Identity()
    result = model.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        raise InputError(path, f"not a torchvision ResNet-50 state dict: missing {result.missing_keys[:5]} "
                         f"({len(result.missing_keys)}), unexpected {result.unexpected_keys[:5]} "
                         f"({len(result.unexpected_keys)})")
    for name, tensor in state.items():
        if not torch.isfinite(tensor.float()).all():
            raise InputError(path, f"tensor {name!r} holds NaN or infinite values")
    return model.eval()


def clip_frame_samples(video: Video, clips: Sequence[tuple[int, float, float | None]],
                       frames_per_clip: int) -> list[tuple[int, int]]:
    """(clip_idx, frame_idx) for T centre frames of every clip; clip spans [start_s, end_s) with
    ``end_s`` None meaning the video's end."""
    samples = []
    for clip_idx, start_s, end_s in clips:
        first, stop = video.span(start_s, end_s, what=f"clip {clip_idx}")
        samples.extend((clip_idx, f) for f in centre_indices(first, stop, frames_per_clip))
    return samples


def _batches(items: Sequence, size: int) -> Iterable[Sequence]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


@torch.inference_mode()
def extract_frame_features(video: Video, video_id: str, clips: Sequence[tuple[int, float, float | None]],
                           model: nn.Module, *, frames_per_clip: int, resize: int, crop: int,
                           batch_size: int, device: torch.device) -> pa.Table:
    """FRAME_FEATURES rows for every clip of one video; frames are decoded batch by batch."""
    samples = clip_frame_samples(video, clips, frames_per_clip)
    if not samples:
        return FRAME_FEATURES.empty_table()
    times = video.frame_times([f for _, f in samples])
    embeddings = np.empty((len(samples), EMBEDDING_DIM), dtype=np.float32)
    done = 0
    progress = Progress(f"{video_id}: ResNet-50 features", len(samples), unit="frames", log=log)
    for batch in _batches(samples, batch_size):
        images = preprocess(video.read([f for _, f in batch]), resize=resize, crop=crop).to(device)
        out = model(images)
        if out.shape != (len(batch), EMBEDDING_DIM):
            raise RuntimeError(f"ResNet-50 returned {tuple(out.shape)}, expected ({len(batch)}, {EMBEDDING_DIM})")
        embeddings[done:done + len(batch)] = out.float().cpu().numpy()
        done += len(batch)
        progress.step(len(batch))
    log.info("%s: %d frames of %d clips", video_id, len(samples), len(clips))
    flat = pa.array(embeddings.reshape(-1), type=pa.float32())
    return pa.table(
        {
            "video_id": pa.array([video_id] * len(samples), pa.string()),
            "clip_idx": pa.array([c for c, _ in samples], pa.int32()),
            "frame_idx": pa.array([f for _, f in samples], pa.int32()),
            "time_s": pa.array(times, pa.float64()),
            "embedding": pa.FixedSizeListArray.from_arrays(flat, EMBEDDING_DIM),
        },
        schema=FRAME_FEATURES,
    )
