"""Temporal Shift Module (Lin et al., ICCV 2019) with EPIC-Kitchens verb/noun heads, and its
EPIC-format checkpoints (see ../shared/specs/tsm.md).

The backbone is torchvision's ResNet-50 without its classifier. ``blockres`` wraps ``conv1`` of
every bottleneck of layer1-4 in a temporal shift, ``block`` wraps whole bottlenecks; key names then
match the EPIC action-models release (``base_model.layer1.0.conv1.net.weight``, ``fc_verb.*``...).
"""
from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pyarrow as pa
import torch
import torchvision
from torch import nn

from cookproc.core.errors import InputError
from cookproc.core.logs import Progress
from cookproc.core.schemas import TSM_SEGMENTS
from cookproc.video.epic import EpicClasses
from cookproc.video.frames import Video, centre_indices, fixed_segments
from cookproc.video.imaging import preprocess
from cookproc.video.resnet import missing_checkpoint_error

log = logging.getLogger(__name__)

FEATURE_DIM = 2048
SHIFT_PLACES = ("blockres", "block")


def temporal_shift(x: torch.Tensor, n_segment: int, fold_div: int = 8) -> torch.Tensor:
    """Shift on (N*T, C, H, W) viewed as (N, T, C, H, W), fold = C // fold_div: channels [0, fold)
    take frame t+1, [fold, 2*fold) take frame t-1 (zeros past either end), the rest stay."""
    nt, c = x.shape[:2]
    if nt % n_segment:
        raise ValueError(f"batch of {nt} frames is not a multiple of {n_segment} segments")
    x = x.view(nt // n_segment, n_segment, c, *x.shape[2:])
    fold = c // fold_div
    out = torch.zeros_like(x)
    out[:, :-1, :fold] = x[:, 1:, :fold]
    out[:, 1:, fold:2 * fold] = x[:, :-1, fold:2 * fold]
    out[:, :, 2 * fold:] = x[:, :, 2 * fold:]
    return out.view(nt, c, *x.shape[3:])


class TemporalShift(nn.Module):
    """Shift the input in time, then apply the wrapped module (kept as ``net`` for key names)."""

    def __init__(self, net: nn.Module, n_segment: int, fold_div: int):
        super().__init__()
        self.net, self.n_segment, self.fold_div = net, n_segment, fold_div

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(temporal_shift(x, self.n_segment, self.fold_div))


class TSM(nn.Module):
    """ResNet-50 TSM with verb and noun heads; forward (N, T, 3, H, W) -> (verb, noun) logits
    averaged over the T frames (the segmental consensus)."""

    def __init__(self, num_verbs: int, num_nouns: int, segment_count: int = 8, *,
                 shift_div: int = 8, shift_place: str = "blockres"):
        super().__init__()
        if shift_place not in SHIFT_PLACES:
            raise ValueError(f"shift_place must be one of {SHIFT_PLACES}, not {shift_place!r}")
        self.segment_count, self.shift_div, self.shift_place = segment_count, shift_div, shift_place
        base = torchvision.models.resnet50(weights=None)
        base.fc = nn.Identity()  # EPIC puts a parameter-free Dropout there
        for layer in (base.layer1, base.layer2, base.layer3, base.layer4):
            for i, block in enumerate(layer):
                if shift_place == "blockres":
                    block.conv1 = TemporalShift(block.conv1, segment_count, shift_div)
                else:
                    layer[i] = TemporalShift(block, segment_count, shift_div)
        self.base_model = base
        self.fc_verb = nn.Linear(FEATURE_DIM, num_verbs)
        self.fc_noun = nn.Linear(FEATURE_DIM, num_nouns)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if x.ndim != 5 or x.shape[1] != self.segment_count:
            raise ValueError(f"TSM expects (N, {self.segment_count}, 3, H, W) input, got {tuple(x.shape)}: "
                             "the number of frames per segment must equal the checkpoint's segment_count")
        n, t = x.shape[:2]
        features = self.base_model(x.reshape(n * t, *x.shape[2:]))
        verb = self.fc_verb(features).view(n, t, -1).mean(dim=1)
        noun = self.fc_noun(features).view(n, t, -1).mean(dim=1)
        return verb, noun


@dataclass(frozen=True)
class TsmCheckpointInfo:
    path: str
    segment_count: int
    shift_place: str
    shift_div: int
    num_verbs: int
    num_nouns: int


def epic_checkpoint(model: TSM, *, args: argparse.Namespace | None = None) -> dict:
    """``model`` in the EPIC action-models layout (what :func:`load_epic_tsm` reads)."""
    return {
        "model_type": "tsm",
        "segment_count": model.segment_count,
        "modality": "RGB",
        "arch": "resnet50",
        "shift_place": model.shift_place,
        "shift_div": model.shift_div,
        "temporal_pool": False,
        "non_local": False,
        "args": args if args is not None else argparse.Namespace(),
        "state_dict": model.state_dict(),
    }


def _load_checkpoint_object(path: Path) -> dict:
    # weights_only refuses argparse.Namespace (the release stores its training args): allow that one
    # class explicitly; anything else stays refused (no silent fallback to unsafe unpickling).
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise InputError(path, f"cannot load as an EPIC TSM checkpoint (weights_only, argparse.Namespace "
                         f"allowed): {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    if not isinstance(obj, dict):
        raise InputError(path, f"expected a checkpoint dict, found {type(obj).__name__}")
    return obj


def load_epic_tsm(path: str | Path | None, *, expected_segments: int | None = None) -> tuple[TSM, TsmCheckpointInfo]:
    """Build the TSM an EPIC-format checkpoint describes and load its weights strictly."""
    if not path:
        raise missing_checkpoint_error("TSM", "video.tsm.checkpoint")
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "checkpoint file not found")
    ckpt = _load_checkpoint_object(path)
    needed = ("model_type", "segment_count", "modality", "arch", "state_dict")
    missing = [k for k in needed if k not in ckpt]
    if missing:
        raise InputError(path, f"not an EPIC action-models checkpoint: missing {missing}")
    if str(ckpt["model_type"]).lower() != "tsm":
        raise InputError(path, f"model_type is {ckpt['model_type']!r}, expected 'tsm'")
    if str(ckpt["modality"]).upper() != "RGB":
        raise InputError(path, f"modality is {ckpt['modality']!r}; only RGB frames are implemented")
    if ckpt["arch"] != "resnet50":
        raise InputError(path, f"arch is {ckpt['arch']!r}; only resnet50 is implemented")
    for flag in ("temporal_pool", "non_local"):
        if ckpt.get(flag):
            raise InputError(path, f"{flag}=True checkpoints are not implemented")
    segment_count = ckpt["segment_count"]
    if not isinstance(segment_count, int) or segment_count < 1:
        raise InputError(path, f"segment_count must be a positive integer, found {segment_count!r}")
    if expected_segments is not None and segment_count != expected_segments:
        raise InputError(path, f"checkpoint was trained with segment_count={segment_count}, but "
                         f"{expected_segments} was configured")
    shift_place = ckpt.get("shift_place", "blockres")
    shift_div = ckpt.get("shift_div", 8)
    if shift_place not in SHIFT_PLACES:
        raise InputError(path, f"shift_place {shift_place!r} is not one of {SHIFT_PLACES}")
    if not isinstance(shift_div, int) or shift_div < 2:
        raise InputError(path, f"shift_div must be an integer >= 2, found {shift_div!r}")
    state = ckpt["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise InputError(path, "state_dict is not a mapping of names to tensors")
    state = {(k[len("module."):] if k.startswith("module.") else k): v for k, v in state.items()}
    for head in ("fc_verb.weight", "fc_noun.weight"):
        if head not in state or state[head].ndim != 2 or state[head].shape[1] != FEATURE_DIM:
            raise InputError(path, f"state_dict lacks a {FEATURE_DIM}-input {head!r}")
    model = TSM(state["fc_verb.weight"].shape[0], state["fc_noun.weight"].shape[0], segment_count,
                shift_div=shift_div, shift_place=shift_place)
    result = model.load_state_dict(state, strict=False)
    # Checkpoints from PyTorch < 0.4.1 have no BatchNorm counters; they play no part in inference.
    missing_keys = [k for k in result.missing_keys if not k.endswith("num_batches_tracked")]
    if missing_keys or result.unexpected_keys:
        raise InputError(path, f"state_dict does not match a {shift_place} ResNet-50 TSM: missing "
                         f"{missing_keys[:5]} ({len(missing_keys)}), unexpected "
                         f"{result.unexpected_keys[:5]} ({len(result.unexpected_keys)})")
    info = TsmCheckpointInfo(str(path), segment_count, shift_place, shift_div,
                             model.fc_verb.out_features, model.fc_noun.out_features)
    return model.eval(), info


def check_classes(info: TsmCheckpointInfo, verbs: EpicClasses, nouns: EpicClasses) -> None:
    if (info.num_verbs, info.num_nouns) != (len(verbs), len(nouns)):
        raise InputError(info.path, f"heads predict {info.num_verbs} verbs / {info.num_nouns} nouns but the "
                         f"class lists have {len(verbs)} / {len(nouns)}")


def segment_frame_indices(video: Video, segments: Sequence[tuple[float, float]], frames: int) -> list[list[int]]:
    """Centre frames of ``frames`` equal parts of each segment."""
    out = []
    for k, (start_s, end_s) in enumerate(segments, start=1):
        first, stop = video.span(start_s, end_s, what=f"segment {k}")
        out.append(centre_indices(first, stop, frames))
    return out


@torch.inference_mode()
def predict_video(video: Video, video_id: str, model: TSM, verbs: EpicClasses, nouns: EpicClasses, *,
                  segment_s: float, top_k: int, resize: int, crop: int, batch_size: int,
                  device: torch.device) -> pa.Table:
    """TSM_SEGMENTS rows: the top-k verbs and nouns (softmax of the averaged logits) of every
    ``segment_s``-second segment of the video, segments numbered from 1 in time order."""
    if not 1 <= top_k <= min(len(verbs), len(nouns)):
        raise ValueError(f"top_k must be in 1..{min(len(verbs), len(nouns))}, not {top_k}")
    # A trailing sliver shorter than one frame cannot be decoded separately; it stays in the previous one.
    segments = fixed_segments(video.duration_s, segment_s)
    if len(segments) > 1 and int(round(segments[-1][0] * video.fps)) >= video.n_frames:
        segments = segments[:-2] + [(segments[-2][0], segments[-1][1])]
    indices = segment_frame_indices(video, segments, model.segment_count)
    rows = {name: [] for name in TSM_SEGMENTS.names}
    progress = Progress(f"{video_id}: TSM", len(segments), unit="segments", log=log)
    for b in range(0, len(segments), batch_size):
        batch = indices[b:b + batch_size]
        frames = video.read([i for seg in batch for i in seg])
        x = preprocess(frames, resize=resize, crop=crop).view(len(batch), model.segment_count, 3, crop, crop)
        verb_logits, noun_logits = model(x.to(device))
        verb_p, verb_i = torch.softmax(verb_logits.float(), dim=1).topk(top_k, dim=1)
        noun_p, noun_i = torch.softmax(noun_logits.float(), dim=1).topk(top_k, dim=1)
        verb_p, verb_i, noun_p, noun_i = (t.cpu().numpy() for t in (verb_p, verb_i, noun_p, noun_i))
        for j in range(len(batch)):
            k = b + j
            for rank in range(top_k):
                rows["video_id"].append(video_id)
                rows["segment_idx"].append(k + 1)
                rows["start_s"].append(float(segments[k][0]))
                rows["end_s"].append(float(segments[k][1]))
                rows["rank"].append(rank + 1)
                rows["verb_class"].append(int(verb_i[j, rank]))
                rows["verb_key"].append(verbs.keys[int(verb_i[j, rank])])
                rows["verb_score"].append(float(verb_p[j, rank]))
                rows["noun_class"].append(int(noun_i[j, rank]))
                rows["noun_key"].append(nouns.keys[int(noun_i[j, rank])])
                rows["noun_score"].append(float(noun_p[j, rank]))
        progress.step(len(batch))
    log.info("%s: %d segments of %.1f s", video_id, len(segments), segment_s)
    return pa.table({name: pa.array(values, TSM_SEGMENTS.field(name).type) for name, values in rows.items()},
                    schema=TSM_SEGMENTS)
