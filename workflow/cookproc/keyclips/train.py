"""Training loop of the neural key-clip selector (torch): Adam, binary cross-entropy, early stopping.

Deterministic on CPU for a given seed: the seed fixes the initial weights, the dropout masks and
the mini-batch order (a private torch.Generator, not the global one). Early stopping watches the
inner-validation loss and keeps the best epoch's weights; the decision threshold is then chosen on
the same validation clips (cookproc.learn.thresholds), never on test clips.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from cookproc.learn.inputs import VisualSets
from cookproc.keyclips.net import KeyClipNet
from cookproc.core.logs import Progress

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KeyClipTrainConfig:
    dim: int = 32  # common space of sentence and visual vectors
    hidden: int = 64  # hidden units of the head (0 = a single layer, as in the paper)
    dropout: float = 0.3
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 128
    max_epochs: int = 60
    patience: int = 6  # epochs without a better validation loss before stopping
    threshold_metric: str = "f1"  # what the validation threshold maximises (thresholds.THRESHOLD_METRICS)
    lexical: bool = True  # add learned word/bigram vectors to the sentence vector
    lexical_min_count: int = 2  # a term needs this many training sentences to get a vector


class ClipInputs:
    """Model inputs for all clips, as tensors; ``batch(idx)`` gathers and pads a mini-batch."""

    def __init__(self, text: np.ndarray | None, visual: VisualSets | None, labels: np.ndarray,
                 tokens: np.ndarray | None = None):
        self.n = len(labels)
        self.tokens = torch.from_numpy(np.asarray(tokens, dtype=np.int64)) if tokens is not None else None
        if self.tokens is not None and self.tokens.shape[0] != self.n:
            raise ValueError(f"{self.tokens.shape[0]} token rows for {self.n} labels")
        self.text = torch.from_numpy(np.ascontiguousarray(text, dtype=np.float32)) if text is not None else None
        if self.text is not None and self.text.shape[0] != self.n:
            raise ValueError(f"{self.text.shape[0]} text rows for {self.n} labels")
        if visual is not None:
            if visual.index.shape[0] != self.n:
                raise ValueError(f"{visual.index.shape[0]} visual sets for {self.n} labels")
            # One extra all-zero row that padding (-1) points at.
            vectors = np.vstack([visual.vectors.astype(np.float32), np.zeros((1, visual.dim), np.float32)])
            self.vectors = torch.from_numpy(vectors)
            self.index = torch.from_numpy(np.where(visual.index >= 0, visual.index, len(vectors) - 1))
            self.mask = torch.from_numpy(visual.index >= 0)
        else:
            self.vectors = self.index = self.mask = None
        self.labels = torch.from_numpy(np.asarray(labels, dtype=np.float32))

    @property
    def text_dim(self) -> int:
        return 0 if self.text is None else self.text.shape[1]

    @property
    def visual_dim(self) -> int:
        return 0 if self.vectors is None else self.vectors.shape[1]

    @property
    def vocab_size(self) -> int:
        return 0 if self.tokens is None else int(self.tokens.max())

    def with_text(self, text: np.ndarray) -> "ClipInputs":
        """The same inputs with another text matrix (each fold can fine-tune its sentence vectors)."""
        if text.shape[0] != self.n:
            raise ValueError(f"{text.shape[0]} text rows for {self.n} labels")
        other = copy.copy(self)
        other.text = torch.from_numpy(np.ascontiguousarray(text, dtype=np.float32))
        return other

    def with_tokens(self, tokens: np.ndarray | None) -> "ClipInputs":
        """The same inputs with other term ids (each fold has its own vocabulary)."""
        other = copy.copy(self)
        other.tokens = torch.from_numpy(np.asarray(tokens, dtype=np.int64)) if tokens is not None else None
        return other

    def batch(self, idx: torch.Tensor) -> dict:
        """Keyword arguments of KeyClipNet.forward for clips ``idx``."""
        out = {"text": self.text[idx] if self.text is not None else None, "visual": None, "mask": None,
               "tokens": None}
        if self.tokens is not None:
            tokens = self.tokens[idx]
            out["tokens"] = tokens[:, :max(int((tokens > 0).sum(1).max()), 1)]  # left-packed: trim padding
        if self.vectors is not None:
            index, mask = self.index[idx], self.mask[idx]
            width = max(int(mask.sum(1).max()), 1)
            out["visual"], out["mask"] = self.vectors[index[:, :width]], mask[:, :width]
        return out


def seed_everything(seed: int) -> torch.Generator:
    torch.manual_seed(seed)
    gen = torch.Generator()
    gen.manual_seed(seed)
    return gen


@torch.no_grad()
def predict(net: nn.Module, data: ClipInputs, idx: np.ndarray, batch_size: int = 1024) -> np.ndarray:
    """Key-clip probabilities for clips ``idx``."""
    net.eval()
    out = []
    for start in range(0, len(idx), batch_size):
        b = torch.from_numpy(np.asarray(idx[start:start + batch_size]))
        out.append(torch.sigmoid(net(**data.batch(b))))
    return torch.cat(out).double().numpy() if out else np.zeros(0)


@torch.no_grad()
def _loss(net: nn.Module, data: ClipInputs, idx: np.ndarray, loss_fn) -> float:
    net.eval()
    total = 0.0
    for start in range(0, len(idx), 1024):
        b = torch.from_numpy(np.asarray(idx[start:start + 1024]))
        total += float(loss_fn(net(**data.batch(b)), data.labels[b])) * len(b)
    return total / max(len(idx), 1)


def train_model(variant: str, data: ClipInputs, train_idx: np.ndarray, val_idx: np.ndarray,
                cfg: KeyClipTrainConfig, seed: int) -> tuple[KeyClipNet, dict]:
    """Fit a :class:`KeyClipNet` on ``train_idx``, early-stopped on ``val_idx``; returns it and a summary."""
    if len(train_idx) == 0 or len(val_idx) == 0:
        raise ValueError(f"need training and validation clips, got {len(train_idx)} / {len(val_idx)}")
    gen = seed_everything(seed)
    net = KeyClipNet(variant, data.text_dim, data.visual_dim, vocab_size=data.vocab_size if variant != "visual" else 0,
                     dim=cfg.dim, hidden=cfg.hidden, dropout=cfg.dropout)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss()
    train_t = torch.from_numpy(np.asarray(train_idx))
    best_loss, best_state, best_epoch, stale = float("inf"), None, -1, 0
    # Early stopping usually ends training sooner: the ETA is an upper bound.
    progress = Progress(f"key-clip net ({variant}, seed {seed})", cfg.max_epochs, unit="epochs", log=log)
    for epoch in range(cfg.max_epochs):
        net.train()
        perm = train_t[torch.randperm(len(train_t), generator=gen)]
        for start in range(0, len(perm), cfg.batch_size):
            b = perm[start:start + cfg.batch_size]
            opt.zero_grad()
            loss = loss_fn(net(**data.batch(b)), data.labels[b])
            loss.backward()
            opt.step()
        val_loss = _loss(net, data, val_idx, loss_fn)
        if val_loss < best_loss - 1e-5:
            best_loss, best_state, best_epoch, stale = val_loss, copy.deepcopy(net.state_dict()), epoch, 0
        else:
            stale += 1
        progress.step(val_loss=val_loss, best_epoch=best_epoch + 1)
        if stale >= cfg.patience:
            break
    net.load_state_dict(best_state)
    return net, {"best_epoch": best_epoch, "val_loss": best_loss, "epochs_run": epoch + 1}
