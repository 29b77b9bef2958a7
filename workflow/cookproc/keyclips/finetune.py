"""Fine-tuning the top layers of the sentence encoder on one fold's key-clip labels.

The frozen sentence vectors miss what makes a sentence a recipe step; training the encoder itself
on the labels moves F1 by about two points (docs/benchmarks.md). To keep this affordable on CPUs,
only the top ``layers`` transformer layers train: the output of the frozen layers below is computed
once for every clip (:class:`FrozenBottom`, shared by all folds and seeds), and each fold trains its
own copy of the top layers plus a linear head on its training recipes (AdamW, linear decay,
batches of similar length drawn from shuffled chunks). The epoch with the lowest inner-validation
loss is kept, and its mean-pooled sentence vectors for all clips replace the frozen ones as the
key-clip net's ``s`` (cookproc.keyclips.neural). Test clips never touch the fine-tuning. The
vectors and the tuned head's own probabilities of every fold are one Parquet file per seed (rule
keyclips_finetune; written and read by cookproc.keyclips.tuned_vectors), so the net's settings can
change without fine-tuning again.
"""
from __future__ import annotations

import copy
import logging
import os
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from cookproc.core.errors import InputError
from cookproc.keyclips.folds import split_indices
from cookproc.keyclips.sentence_encoder import load_pretrained, local_model_dir, mean_pool
from cookproc.keyclips.tuned_vectors import FoldVectors
from cookproc.core.logs import Progress

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FinetuneConfig:
    layers: int = 6  # top transformer layers that train (0 = frozen sentence vectors, no fine-tuning)
    epochs: int = 1  # at most this many epochs; the one with the lowest validation loss is kept
    lr: float = 3e-5  # peak learning rate of the encoder layers (linear decay to 0)
    head_lr: float = 1e-3  # learning rate of the linear head
    weight_decay: float = 0.01
    batch_size: int = 32
    max_length: int = 128  # tokens per sentence
    chunk_batches: int = 16  # batches are cut from length-sorted chunks of this many batches


class _PassThrough(nn.Module):
    """Stands in for the embedding layer: the cached hidden states go straight to the top layers."""

    def forward(self, input_ids=None, inputs_embeds=None, **kwargs):  # noqa: ARG002 (HF passes more)
        return inputs_embeds


def _layer_list(model: nn.Module) -> nn.ModuleList:
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if not isinstance(layers, nn.ModuleList):
        raise ValueError(f"{type(model).__name__} has no encoder.layer list (a BERT-style encoder is needed "
                         "to fine-tune its top layers)")
    return layers


def _pad(states: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad per-sentence states [T_i, d] to [B, T, d] and the attention mask [B, T]."""
    width = max(s.shape[0] for s in states)
    out = states[0].new_zeros(len(states), width, states[0].shape[1])
    mask = torch.zeros(len(states), width, dtype=torch.long)
    for i, s in enumerate(states):
        out[i, :s.shape[0]] = s
        mask[i, :s.shape[0]] = 1
    return out, mask


class FrozenBottom:
    """A BERT-style encoder split at ``len(layers) - top``: the bottom's output for every sentence.

    ``states[i]`` holds sentence i's hidden states after the frozen layers (no padding); ``top()``
    returns a fresh trainable copy of the pretrained top layers that maps them to the last layer.
    """

    def __init__(self, model: nn.Module, tokenizer, sentences: Sequence[str], top: int, *, max_length: int = 128,
                 batch_size: int = 128, device: str = "cpu"):
        layers = _layer_list(model)
        if not 1 <= top <= len(layers):
            raise ValueError(f"can fine-tune 1..{len(layers)} layers of this encoder, got {top}")
        self.model, self.top_layers, self.hidden_size = model.eval(), top, int(model.config.hidden_size)
        self.tokenizer = tokenizer  # a deployed selector saves it with the model
        self.device = device
        self.lengths = np.zeros(len(sentences), dtype=np.int64)
        self.states: list[torch.Tensor] = [None] * len(sentences)
        order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), i))  # little padding
        cut = len(layers) - top
        bottom = copy.deepcopy(model)  # only the frozen layers run here
        bottom.encoder.layer = nn.ModuleList(list(_layer_list(bottom))[:cut])
        bottom.to(device)
        progress = Progress(f"frozen bottom {cut} layers", -(-len(order) // batch_size), unit="batches", log=log)
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                enc = tokenizer([sentences[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                                return_tensors="pt")
                hidden = bottom(**{k: v.to(device) for k, v in enc.items()}).last_hidden_state.float().cpu()
                for row, i in enumerate(idx):
                    n = int(enc["attention_mask"][row].sum())
                    self.states[i] = hidden[row, :n].clone()
                    self.lengths[i] = n
                progress.step()

    def top(self) -> nn.Module:
        """A trainable copy of the top layers, called as ``top(inputs_embeds=states, attention_mask=mask)``."""
        clone = copy.deepcopy(self.model)
        layers = _layer_list(clone)
        clone.encoder.layer = nn.ModuleList(list(layers)[len(layers) - self.top_layers:])
        clone.config.num_hidden_layers = self.top_layers
        clone.embeddings = _PassThrough()
        if getattr(clone, "pooler", None) is not None:
            clone.pooler = None  # unused; its weights would only take optimiser steps for nothing
        return clone

    def batch(self, idx: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded states and mask of sentences ``idx``, on the bottom's device."""
        states, mask = _pad([self.states[i] for i in idx])
        return states.to(self.device), mask.to(self.device)


def load_bottom(path: str | os.PathLike | None, sentences: Sequence[str], top: int, *, max_length: int = 128,
                device: str = "cpu") -> FrozenBottom:
    """Load a local Hugging Face encoder (default: the packaged MiniLM-L6) offline and run its bottom."""
    path = local_model_dir(path)
    if not (path / "config.json").is_file():
        raise InputError(path, "expected a local Hugging Face model directory with config.json, weights and "
                               "tokenizer (fine-tuning needs the transformer itself)")
    model, tokenizer = load_pretrained(path)
    return FrozenBottom(model, tokenizer, sentences, top, max_length=max_length, device=device)


def length_batches(idx: np.ndarray, lengths: np.ndarray, batch_size: int, chunk_batches: int,
                   gen: torch.Generator) -> list[np.ndarray]:
    """Shuffle ``idx``, cut it into chunks, sort each chunk by length, cut batches, shuffle the batches.

    Sentences of similar length share a batch (little padding), while each batch still comes from
    a random draw of the training clips (labels stay mixed; long sentences are more often key).
    """
    perm = idx[torch.randperm(len(idx), generator=gen).numpy()]
    size = batch_size * max(1, chunk_batches)
    batches = []
    for start in range(0, len(perm), size):
        chunk = perm[start:start + size]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches.extend(chunk[b:b + batch_size] for b in range(0, len(chunk), batch_size))
    return [batches[i] for i in torch.randperm(len(batches), generator=gen).tolist()]


class TunedTop(nn.Module):
    """The trainable top layers, mean pooling and a linear head (the logit of "key clip")."""

    def __init__(self, top: nn.Module, dim: int):
        super().__init__()
        self.top, self.head = top, nn.Linear(dim, 1)

    def embed(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return mean_pool(self.top(inputs_embeds=states, attention_mask=mask).last_hidden_state, mask)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(states, mask)).squeeze(-1)


@torch.no_grad()
def _run(net: TunedTop, bottom: FrozenBottom, idx: np.ndarray, fn: str, batch_size: int = 256) -> torch.Tensor:
    """``net.embed`` or ``net.forward`` (``fn``) for clips ``idx``, batched in length order, rows in ``idx`` order."""
    net.eval()
    by_length = np.argsort(bottom.lengths[idx], kind="stable")
    order = idx[by_length]
    out = []
    # A pass over every clip takes minutes on CPUs: a sign of life between the training batches.
    progress = Progress(f"{'scoring' if fn == 'forward' else 'embedding'} {len(idx)} clips",
                        -(-len(order) // batch_size), unit="batches", log=log)
    for start in range(0, len(order), batch_size):
        states, mask = bottom.batch(order[start:start + batch_size])
        out.append(getattr(net, fn)(states, mask))
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

    Returns the tuned sentence vector of every clip, the tuned head's key-clip probability of every
    clip, and a summary (best epoch, validation loss per epoch). ``progress``: stepped once a batch
    (default: a progress of its own).
    """
    net, info = train_top(bottom, labels, train_idx, val_idx, cfg, seed, progress)
    vectors, head = tuned_outputs(net, bottom, len(labels))
    return vectors, head, info


def tuned_outputs(net: TunedTop, bottom: FrozenBottom, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Tuned sentence vectors (float32) and head probabilities (float64) of clips 0..n-1."""
    embedded = _run(net, bottom, np.arange(n), "embed")  # one pass: the head reads these vectors
    with torch.no_grad():
        head = torch.sigmoid(net.head(embedded.to(bottom.device)).squeeze(-1)).cpu().double().numpy()
    return embedded.numpy().astype(np.float32), head


def train_top(bottom: FrozenBottom, labels: np.ndarray, train_idx: np.ndarray, val_idx: np.ndarray,
              cfg: FinetuneConfig, seed: int, progress: Progress | None = None) -> tuple[TunedTop, dict]:
    """The trained top layers and head (weights of the epoch with the lowest ``val_idx`` loss) and
    a summary: :func:`finetune_sentence_vectors` without the final pass over every clip."""
    if cfg.layers < 1 or cfg.epochs < 1:
        raise ValueError(f"fine-tuning needs layers >= 1 and epochs >= 1, got {cfg.layers} / {cfg.epochs}")
    if len(train_idx) == 0 or len(val_idx) == 0:
        raise ValueError(f"need training and validation clips, got {len(train_idx)} / {len(val_idx)}")
    torch.manual_seed(seed)  # dropout inside the HF layers draws from the global generator
    gen = torch.Generator().manual_seed(seed)
    net = TunedTop(bottom.top(), bottom.hidden_size).to(bottom.device)
    opt = torch.optim.AdamW([{"params": net.top.parameters(), "lr": cfg.lr},
                             {"params": net.head.parameters(), "lr": cfg.head_lr}], weight_decay=cfg.weight_decay)
    steps = training_batches(len(train_idx), cfg)
    progress = progress or Progress("fine-tuning", steps, unit="batches", log=log)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, [lambda s: max(0.0, 1.0 - s / steps), lambda s: 1.0])
    loss_fn = nn.BCEWithLogitsLoss()
    y = torch.from_numpy(np.asarray(labels, dtype=np.float32))  # on the CPU, as the scores _run returns
    val_y = y[torch.from_numpy(np.asarray(val_idx))]
    best_loss, best_state, best_epoch, history = float("inf"), None, -1, []
    for epoch in range(cfg.epochs):
        net.train()
        epoch_loss, batches = 0.0, 0  # the loss summed on the device: read only when progress logs
        for b in length_batches(np.asarray(train_idx), bottom.lengths, cfg.batch_size, cfg.chunk_batches, gen):
            states, mask = bottom.batch(b)
            opt.zero_grad()
            loss = loss_fn(net(states, mask), y[torch.from_numpy(b)].to(bottom.device))
            loss.backward()
            opt.step()
            sched.step()
            epoch_loss, batches = epoch_loss + loss.detach(), batches + 1
            progress.step(epoch=f"{epoch + 1}/{cfg.epochs}", loss=lambda: float(epoch_loss) / batches)
        val_loss = float(loss_fn(_run(net, bottom, np.asarray(val_idx), "forward"), val_y))
        history.append(round(val_loss, 5))
        if val_loss < best_loss:
            best_loss, best_epoch = val_loss, epoch
            best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    net.load_state_dict(best_state)
    return net, {"finetune_best_epoch": best_epoch, "finetune_val_loss": history}


def finetune_folds(bottom: FrozenBottom, labels: np.ndarray, fold: np.ndarray, inner: np.ndarray,
                   cfg: FinetuneConfig, seed: int) -> dict[int, FoldVectors]:
    """One fine-tuning per held-out fold, on the other folds' training recipes (cookproc.keyclips.folds)."""
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
