"""The torch settings every torch job applies the same way (config ``torch``, docs/methods.md,
"Determinism").

On the CPU, with a fixed thread count, torch's results are bit-identical from run to run whatever
this says. On a GPU they are not by default: cuBLAS and cuDNN pick kernels whose reductions run in
a varying order (atomics, split-K). ``deterministic`` asks torch for its deterministic kernels
(``torch.use_deterministic_algorithms``; cuBLAS needs ``CUBLAS_WORKSPACE_CONFIG`` set before its first
call): GPU results then repeat run to run on the same GPU and software, though they still differ from
the CPU's in the last bits. An operation with no deterministic kernel then fails naming itself.
Imports torch only when called (a torch job's script calls it first).
"""
from __future__ import annotations

import os

from cookproc.core.threads import limit_threads

#: cuBLAS's documented setting for reproducible results (a fixed workspace per stream).
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def is_cuda(device) -> bool:
    """``device`` (a name such as cuda:1, or a torch.device) is a CUDA device."""
    return str(device).split(":")[0] == "cuda"


def configure_torch(threads: int, device: str = "cpu", *, deterministic: bool = False, seed: int | None = None):
    """Hold torch (and BLAS) to ``threads``, check that a cuda ``device`` exists, and turn on torch's
    deterministic algorithms when ``deterministic``; ``seed`` (optional) seeds torch's global generator.
    Returns the torch module."""
    if deterministic:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE_CONFIG  # read when cuBLAS starts
    import torch

    limit_threads(threads)
    if is_cuda(device) and not torch.cuda.is_available():
        raise RuntimeError(f"device {device} is configured but torch sees no CUDA device (torch "
                           f"{torch.__version__}, CUDA build {torch.version.cuda}); set the device to cpu "
                           "or run on a GPU node")
    torch.use_deterministic_algorithms(bool(deterministic))
    torch.backends.cudnn.deterministic = bool(deterministic)
    torch.backends.cudnn.benchmark = False  # benchmark mode picks kernels by timing: a varying choice
    if seed is not None:
        torch.manual_seed(seed)
    return torch
