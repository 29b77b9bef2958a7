"""Fine-tuning the top layers of the sentence encoder on one fold's key-clip labels.

The frozen sentence vectors miss what makes a sentence a recipe step; training the encoder itself
on the labels moves F1 by about two points (docs/benchmarks.md). To keep this affordable on CPUs,
only the top ``layers`` transformer layers train: the output of the frozen layers below is computed
once for every clip (cookproc.keyclips.frozen_bottom, shared by all folds and seeds), and each fold trains its
own copy of the top layers plus a linear head on its training recipes (AdamW, linear decay,
batches of similar length drawn from shuffled chunks). The epoch with the lowest inner-validation
loss is kept, and its mean-pooled sentence vectors for all clips replace the frozen ones as the
key-clip net's ``s`` (cookproc.keyclips.neural). Test clips never touch the fine-tuning. The
vectors and the finetuned head's own probabilities of every fold are one Parquet file per seed (rule
keyclips_finetune; written and read by cookproc.learn.finetuned_vectors), so the net's settings can
change without fine-tuning again.

On a GPU a step of these small layers is bound by kernel launches and host work, not arithmetic
(docs/benchmarks.md, "GPU"): the bottom's states live on the device in one block, each epoch's
batches travel there once, the loss is read only when progress logs, and AdamW is the fused kernel.
bf16 autocast (``mixed_precision``) and ``torch.compile`` are options, off by default; on the CPU
neither applies and a run is bit-identical to the per-step path it replaced (fixed thread count).
"""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from cookproc.core.torch_runtime import is_cuda
from cookproc.learn.folds import split_indices
from cookproc.keyclips.frozen_bottom import FrozenBottom, length_batches
from cookproc.keyclips.sentence_encoder import mean_pool
from cookproc.learn.finetuned_vectors import FoldVectors
from cookproc.core.logs import Progress

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FinetuneConfig:
    # Top transformer layers that train (>= 1 here: 0 in the config means frozen vectors, and then
    # no rule fine-tunes). No default: keyclips.neural.finetune and supervised.keyclips.encoder.finetune
    # differ (the schemas' defaults); the other defaults equal the schema's (tests/contracts/test_config.py).
    layers: int
    epochs: int = 1  # at most this many epochs; the one with the lowest validation loss is kept
    learning_rate: float = 3e-5  # peak learning rate of the encoder layers (linear decay to 0)
    head_learning_rate: float = 1e-3  # learning rate of the linear head
    weight_decay: float = 0.01
    batch_size: int = 32
    max_length: int = 128  # tokens per sentence
    chunk_batches: int = 16  # batches are cut from length-sorted chunks of this many batches
    # Runtime options (config `torch`, not `finetune`): none or bf16 (autocast, cuda only); torch.compile.
    mixed_precision: str = "none"
    compile: bool = False

    def __post_init__(self):
        if self.mixed_precision not in MIXED_PRECISION:
            raise ValueError(f"mixed_precision must be one of {sorted(MIXED_PRECISION)}, got {self.mixed_precision!r}")


#: torch.autocast dtypes of the ``mixed_precision`` settings (none: float32 throughout).
MIXED_PRECISION = {"none": None, "bf16": torch.bfloat16}


def autocast(device: str | torch.device, mixed_precision: str):
    """bf16 autocast on a cuda device; nothing for ``none``. The CPU refuses it (autocast there would
    run slower bf16 CPU kernels and change every number for no gain)."""
    dtype = MIXED_PRECISION[mixed_precision]
    if dtype is None:
        return contextlib.nullcontext()
    if not is_cuda(device):
        raise ValueError(f"mixed_precision {mixed_precision} needs a cuda device, got {device} "
                         "(set torch.mixed_precision: none for CPU runs)")
    return torch.autocast("cuda", dtype=dtype)



class FinetunedTop(nn.Module):
    """The trainable top layers, mean pooling and a linear head (the logit of "key clip")."""

    def __init__(self, top: nn.Module, dim: int):
        super().__init__()
        self.top, self.head = top, nn.Linear(dim, 1)

    def embed(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return mean_pool(self.top(inputs_embeds=states, attention_mask=mask).last_hidden_state, mask)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(states, mask)).squeeze(-1)


@torch.no_grad()
def _run(net: FinetunedTop, bottom: FrozenBottom, idx: np.ndarray, fn: str, batch_size: int = 256,
         mixed_precision: str = "none") -> torch.Tensor:
    """``net.embed`` or ``net.forward`` (``fn``) for clips ``idx``, batched in length order, rows in ``idx``
    order (float32, on the CPU)."""
    net.eval()
    by_length = np.argsort(bottom.lengths[idx], kind="stable")
    order = idx[by_length]
    order_on_device = torch.from_numpy(order).to(bottom.device)  # one copy for every batch
    out = []
    # A pass over every clip takes minutes on CPUs: a sign of life between the training batches.
    progress = Progress(f"{'scoring' if fn == 'forward' else 'embedding'} {len(idx)} clips",
                        -(-len(order) // batch_size), unit="batches", log=log)
    for start in range(0, len(order), batch_size):
        stop = min(start + batch_size, len(order))
        states, mask = bottom.gather(order_on_device[start:stop], int(bottom.lengths[order[stop - 1]]))
        with autocast(bottom.device, mixed_precision):
            out.append(getattr(net, fn)(states, mask).float())
        progress.step()
    back = np.empty(len(idx), dtype=np.int64)
    back[by_length] = np.arange(len(idx))
    return torch.cat(out).cpu()[torch.from_numpy(back)]


def training_batches(n_train: int, cfg: FinetuneConfig) -> int:
    """Optimiser steps of one fine-tuning on ``n_train`` clips."""
    return cfg.epochs * -(-n_train // cfg.batch_size)


def finetune_sentence_vectors(bottom: FrozenBottom, labels: np.ndarray, train_idx: np.ndarray, val_idx: np.ndarray,
                              cfg: FinetuneConfig, seed: int, progress: Progress | None = None
                              ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Fine-tune the top layers on ``train_idx`` (best epoch by ``val_idx`` loss).

    Returns the finetuned sentence vector of every clip, the finetuned head's key-clip probability of every
    clip, and a summary (best epoch, validation loss per epoch). ``progress``: stepped once a batch
    (default: a progress of its own).
    """
    net, info = train_top(bottom, labels, train_idx, val_idx, cfg, seed, progress)
    vectors, head = finetuned_outputs(net, bottom, len(labels), cfg.mixed_precision)
    return vectors, head, info


def finetuned_outputs(net: FinetunedTop, bottom: FrozenBottom, n: int, mixed_precision: str = "none"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Finetuned sentence vectors (float32) and head probabilities (float64) of clips 0..n-1."""
    embedded = _run(net, bottom, np.arange(n), "embed", mixed_precision=mixed_precision)  # the head reads these
    with torch.no_grad():
        head = torch.sigmoid(net.head(embedded.to(bottom.device)).squeeze(-1)).cpu().double().numpy()
    return embedded.numpy().astype(np.float32), head


def train_top(bottom: FrozenBottom, labels: np.ndarray, train_idx: np.ndarray, val_idx: np.ndarray,
              cfg: FinetuneConfig, seed: int, progress: Progress | None = None) -> tuple[FinetunedTop, dict]:
    """The trained top layers and head (weights of the epoch with the lowest ``val_idx`` loss) and
    a summary: :func:`finetune_sentence_vectors` without the final pass over every clip."""
    if len(train_idx) == 0 or len(val_idx) == 0:
        raise ValueError(f"need training and validation clips, got {len(train_idx)} / {len(val_idx)}")
    torch.manual_seed(seed)  # dropout inside the HF layers draws from the global generator
    gen = torch.Generator().manual_seed(seed)
    device = bottom.device
    net = FinetunedTop(bottom.top(), bottom.hidden_size).to(device)
    # The fused kernel: one launch for every parameter's update on a GPU. The CPU keeps the default
    # implementation, so that CPU results stay those of every earlier run.
    opt = torch.optim.AdamW([{"params": net.top.parameters(), "lr": cfg.learning_rate},
                             {"params": net.head.parameters(), "lr": cfg.head_learning_rate}], weight_decay=cfg.weight_decay,
                            **({"fused": True} if is_cuda(device) else {}))
    steps = training_batches(len(train_idx), cfg)
    progress = progress or Progress("fine-tuning", steps, unit="batches", log=log)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, [lambda s: max(0.0, 1.0 - s / steps), lambda s: 1.0])
    loss_fn = nn.BCEWithLogitsLoss()
    y = torch.from_numpy(np.asarray(labels, dtype=np.float32))  # on the CPU, as the scores _run returns
    y_on_device = y.to(device)
    val_y = y[torch.from_numpy(np.asarray(val_idx))]
    forward = torch.compile(net, dynamic=True) if cfg.compile else net  # shares net's parameters
    best_loss, best_state, best_epoch, history = float("inf"), None, -1, []
    for epoch in range(cfg.epochs):
        net.train()
        batches = length_batches(np.asarray(train_idx), bottom.lengths, cfg.batch_size, cfg.chunk_batches, gen)
        # The epoch's batches go to the device in one copy; each step slices it.
        epoch_idx = torch.from_numpy(np.concatenate(batches)).to(device)
        epoch_loss, start = 0.0, 0  # the loss summed on the device: read only when progress logs
        for step, b in enumerate(batches, start=1):
            idx = epoch_idx[start:start + len(b)]
            start += len(b)
            states, mask = bottom.gather(idx, int(bottom.lengths[b].max()))
            opt.zero_grad()
            with autocast(device, cfg.mixed_precision):
                loss = loss_fn(forward(states, mask).float(), y_on_device[idx])
            loss.backward()
            opt.step()
            sched.step()
            epoch_loss = epoch_loss + loss.detach()
            progress.step(epoch=f"{epoch + 1}/{cfg.epochs}", loss=lambda: float(epoch_loss) / step)
        val_loss = float(loss_fn(_run(net, bottom, np.asarray(val_idx), "forward",
                                      mixed_precision=cfg.mixed_precision), val_y))
        history.append(round(val_loss, 5))
        if val_loss < best_loss:
            best_loss, best_epoch = val_loss, epoch
            best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    net.load_state_dict(best_state)
    return net, {"finetune_best_epoch": best_epoch, "finetune_val_loss": history}


def finetune_folds(bottom: FrozenBottom, labels: np.ndarray, fold: np.ndarray, inner: np.ndarray,
                   cfg: FinetuneConfig, seed: int) -> dict[int, FoldVectors]:
    """One fine-tuning per held-out fold, on the other folds' training recipes (cookproc.learn.folds)."""
    out = {}
    folds = sorted(np.unique(fold).tolist())
    # One progress over every fold's batches: its ETA is that of the whole fine-tuning.
    progress = Progress("fine-tuning", sum(training_batches(len(split_indices(fold, inner, f)[0]), cfg) for f in folds),
                        unit="batches", log=log)
    for k, f in enumerate(folds, start=1):
        train, val, _ = split_indices(fold, inner, f)
        start = time.perf_counter()
        progress.what = f"fine-tuning (seed {seed}), fold {k}/{len(folds)}"
        vectors, head, info = finetune_sentence_vectors(bottom, labels, train, val, cfg, seed, progress)
        out[f] = FoldVectors(vectors, head, {**info, "seconds": round(time.perf_counter() - start, 1)})
        log.info("fold %d: fine-tuned on %d clips, %s", f, len(train), out[f].info)
    return out
