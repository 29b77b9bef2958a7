"""Frame preprocessing shared by ResNet-50 and TSM: resize the short side, centre crop, scale to
[0, 1], normalise with the ImageNet mean and standard deviation (what both were trained with)."""
from __future__ import annotations

import numpy as np
import torch
from torchvision.transforms.v2 import functional as F

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def preprocess(frames: np.ndarray, *, resize: int, crop: int) -> torch.Tensor:
    """uint8 RGB frames (N, H, W, 3) -> float32 (N, 3, crop, crop), ImageNet-normalised."""
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"expected uint8 frames (N, H, W, 3), got {frames.dtype} {frames.shape}")
    if crop > resize:
        raise ValueError(f"crop ({crop}) must not exceed the resized short side ({resize})")
    images = torch.from_numpy(np.ascontiguousarray(frames)).permute(0, 3, 1, 2)
    images = F.resize(images, [resize], antialias=True)  # one int: the short side becomes `resize`
    images = F.center_crop(images, [crop, crop])
    images = images.to(torch.float32).div_(255.0)
    return F.normalize(images, list(IMAGENET_MEAN), list(IMAGENET_STD))


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (CUDA when available, else CPU); a CUDA device that
    is not there is an error, never a silent fallback."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available (use device: cpu or auto)")
    return device
