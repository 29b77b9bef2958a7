"""Training loop of the key-clip selector: Adam, binary cross-entropy, early stopping, threshold choice.

Deterministic on CPU for a given seed: the seed fixes the initial weights, the dropout masks and
the mini-batch order (a private torch.Generator, not the global one). Early stopping watches the
inner-validation loss and keeps the best epoch's weights; the decision threshold is then chosen on
the same validation clips, never on test clips.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from cookproc.models.data import VisualSets
from cookproc.models.keyclip_net import KeyClipNet

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    dim: int = 32  # common space of sentence and visual vectors
    hidden: int = 64  # hidden units of the head (0 = a single layer, as in the paper)
    dropout: float = 0.3
    lr: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: int = 128
    max_epochs: int = 60
    patience: int = 6  # epochs without a better validation loss before stopping
    threshold_metric: str = "f1"  # what the validation threshold maximises (THRESHOLD_METRICS)
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


#: What a decision threshold can maximise on validation clips. F1 is flat near its maximum while
#: accuracy still climbs with the threshold, so ``f1_accuracy`` (their mean) finds a threshold with
#: nearly the best F1 and a better accuracy; Table 4 reports both measures. The ``calibrated_``
#: forms maximise the expected measure under Platt-calibrated validation probabilities instead of
#: the measure on the validation labels themselves (see :func:`best_threshold`).
BASE_METRICS = ("f1", "accuracy", "f1_accuracy")
THRESHOLD_METRICS = BASE_METRICS + tuple(f"calibrated_{m}" for m in BASE_METRICS)


def _logit(scores: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(scores, dtype=np.float64), 1e-7, 1 - 1e-7)
    return np.log(p) - np.log1p(-p)


def platt_scaling(labels: np.ndarray, scores: np.ndarray, iterations: int = 100) -> tuple[float, float]:
    """(a, b) of P(key | score) = sigmoid(a * logit(score) + b), by Newton's method on the log-likelihood.

    A tiny ridge keeps it finite on separable data; deterministic (no random state, no solver choice).
    """
    y = np.asarray(labels, dtype=np.float64)
    x = np.stack([_logit(scores), np.ones(len(y))], axis=1)
    w = np.zeros(2)
    ridge = 1e-6 * np.eye(2)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ w)))
        step = np.linalg.solve(x.T @ (x * (p * (1 - p))[:, None]) + ridge, x.T @ (p - y) + ridge @ w)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return float(w[0]), float(w[1])


def best_threshold(labels: np.ndarray, scores: np.ndarray, metric: str = "f1") -> float:
    """The threshold t (predict key when score >= t) that maximises ``metric`` on these clips.

    Candidates are midpoints between consecutive distinct scores; ties go to the higher threshold
    (fewer predicted key clips). A ``calibrated_`` metric first fits a Platt scaling of the scores
    to the labels and then maximises the measure's expectation when each clip is key with its
    calibrated probability: on ~2,000 validation clips that curve is smooth, where the measure on
    the labels jumps with every clip (its argmax wanders by a few hundredths between folds). If the
    scores do not rise with the labels (calibration slope <= 0) the labels are used as they are.
    """
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    if metric not in THRESHOLD_METRICS:
        raise ValueError(f"threshold metric must be one of {THRESHOLD_METRICS}, got {metric!r}")
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], labels[order].astype(np.float64)
    base = metric.removeprefix("calibrated_")
    if metric != base:
        a, b = platt_scaling(labels, scores)
        if a > 0:
            y = 1 / (1 + np.exp(-(a * _logit(s) + b)))  # expected labels
        else:
            log.warning("validation scores do not rise with the labels (Platt slope %.3g): threshold on the labels", a)
    n, pos = len(y), float(y.sum())
    cut = np.flatnonzero(np.r_[s[1:] != s[:-1], True])  # cut only between different scores
    tp = np.cumsum(y)[cut]  # predicting the top k+1 clips as key
    k = cut + 1.0
    f1 = 2 * tp / np.maximum(k + pos, 1)
    accuracy = (n - k - pos + 2 * tp) / max(n, 1)
    value = {"f1": f1, "accuracy": accuracy, "f1_accuracy": (f1 + accuracy) / 2}[base]
    best = int(np.argmax(value))  # first maximum = highest threshold
    k = cut[best]
    return float(s[k] if k + 1 == len(s) else (s[k] + s[k + 1]) / 2)


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
                cfg: TrainConfig, seed: int) -> tuple[KeyClipNet, dict]:
    """Fit a :class:`KeyClipNet` on ``train_idx``, early-stopped on ``val_idx``; returns it and a summary."""
    if len(train_idx) == 0 or len(val_idx) == 0:
        raise ValueError(f"need training and validation clips, got {len(train_idx)} / {len(val_idx)}")
    gen = seed_everything(seed)
    net = KeyClipNet(variant, data.text_dim, data.visual_dim, vocab_size=data.vocab_size if variant != "visual" else 0,
                     dim=cfg.dim, hidden=cfg.hidden, dropout=cfg.dropout)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss()
    train_t = torch.from_numpy(np.asarray(train_idx))
    best_loss, best_state, best_epoch, stale = float("inf"), None, -1, 0
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
            if stale >= cfg.patience:
                break
    net.load_state_dict(best_state)
    return net, {"best_epoch": best_epoch, "val_loss": best_loss, "epochs_run": epoch + 1}
