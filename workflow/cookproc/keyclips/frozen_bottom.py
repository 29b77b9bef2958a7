"""The frozen bottom of the sentence encoder: the layers below the fine-tuned top, run once.

Fine-tuning trains only the top ``layers`` transformer layers (cookproc.keyclips.finetune); the
hidden states the frozen layers below give every clip's sentence are computed once here
(:class:`FrozenBottom`, shared by all folds and seeds, kept on the device in one block) and batched
by similar length (:func:`length_batches`). The deployed selector (cookproc.keyclips.deploy) runs a
new sentence through the same bottom.
"""
from __future__ import annotations

import copy
import logging
import os
from typing import Sequence

import numpy as np
import torch
from torch import nn

from cookproc.core.errors import InputError
from cookproc.core.logs import Progress
from cookproc.keyclips.sentence_encoder import load_pretrained, local_model_dir

log = logging.getLogger(__name__)


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


def bottom_encoder(model: nn.Module, layers: int) -> nn.Module:
    """A copy of ``model`` without its top ``layers`` layers (the frozen part), in eval mode."""
    encoder_layers = _layer_list(model)
    if not 1 <= layers <= len(encoder_layers):
        raise ValueError(f"can fine-tune 1..{len(encoder_layers)} layers of this encoder, got {layers}")
    bottom = copy.deepcopy(model)  # only the frozen layers run here
    bottom.encoder.layer = nn.ModuleList(list(_layer_list(bottom))[:len(encoder_layers) - layers])
    return bottom.eval()


class FrozenBottom:
    """A BERT-style encoder split below its top ``layers`` layers: the bottom's output for every sentence.

    ``states[i]`` holds sentence i's hidden states after the frozen layers (no padding); ``top()``
    returns a fresh trainable copy of the pretrained top layers that maps them to the last layer.
    The states are also kept on ``device`` as one block (every sentence's rows back to back, then
    a zero row for padding): a batch is one gather there (:meth:`gather`), not a host-side pad and
    copy per step.
    """

    def __init__(self, model: nn.Module, tokenizer, sentences: Sequence[str], layers: int, *, max_length: int = 128,
                 batch_size: int = 128, device: str = "cpu", bottom: nn.Module | None = None):
        """``bottom``: :func:`bottom_encoder` of ``model`` already on ``device`` (a deployed selector keeps
        one for every call); by default a copy is made and moved here."""
        self.model, self.layers, self.hidden_size = model.eval(), layers, int(model.config.hidden_size)
        self.tokenizer = tokenizer  # a deployed selector saves it with the model
        self.device = device
        self.lengths = np.zeros(len(sentences), dtype=np.int64)
        self.states: list[torch.Tensor] = [None] * len(sentences)
        order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), i))  # little padding
        if bottom is None:
            bottom = bottom_encoder(model, layers).to(device)
        cut = len(_layer_list(bottom))
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
        self._to_device()

    def _to_device(self) -> None:
        """``flat``: the states back to back plus a final zero row (padding), on the device, with each
        sentence's offset and length there too; ``states[i]`` become views of it on the CPU."""
        width = self.hidden_size if not self.states or self.states[0] is None else self.states[0].shape[1]
        flat = torch.cat([s for s in self.states] + [torch.zeros(1, width)]) if self.states else torch.zeros(1, width)
        offsets = np.zeros(len(self.states), dtype=np.int64)
        offsets[1:] = np.cumsum(self.lengths)[:-1]
        self.states = [flat[o:o + n] for o, n in zip(offsets.tolist(), self.lengths.tolist())]
        self.flat = flat.to(self.device)
        self.pad_row = flat.shape[0] - 1
        self.offsets = torch.from_numpy(offsets).to(self.device)
        self.lengths_on_device = torch.from_numpy(self.lengths).to(self.device)
        self.positions = torch.arange(max(1, int(self.lengths.max(initial=1))), device=self.device)

    def top(self) -> nn.Module:
        """A trainable copy of the top layers, called as ``top(inputs_embeds=states, attention_mask=mask)``."""
        clone = copy.deepcopy(self.model)
        encoder_layers = _layer_list(clone)
        clone.encoder.layer = nn.ModuleList(list(encoder_layers)[len(encoder_layers) - self.layers:])
        clone.config.num_hidden_layers = self.layers
        clone.embeddings = _PassThrough()
        if getattr(clone, "pooler", None) is not None:
            clone.pooler = None  # unused; its weights would only take optimiser steps for nothing
        return clone

    def batch(self, idx: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded states and mask of sentences ``idx``, on the bottom's device."""
        idx = np.asarray(idx, dtype=np.int64)
        return self.gather(torch.from_numpy(idx).to(self.device), int(self.lengths[idx].max()))

    def gather(self, idx: torch.Tensor, width: int) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`batch` of sentence indices already on the device; ``width``: their longest length
        (known on the host, so that nothing waits for the device). The same values as padding each
        sentence's states on the host (:func:`_pad`): rows copied, zeros after each sentence's end."""
        positions = self.positions[:width]
        mask = positions[None, :] < self.lengths_on_device[idx][:, None]
        rows = torch.where(mask, self.offsets[idx][:, None] + positions[None, :], self.pad_row)
        return self.flat[rows], mask.long()


def load_bottom(path: str | os.PathLike | None, sentences: Sequence[str], layers: int, *, max_length: int = 128,
                device: str = "cpu") -> FrozenBottom:
    """Load a local Hugging Face encoder (default: the packaged MiniLM-L6) offline and run its bottom."""
    path = local_model_dir(path)
    if not (path / "config.json").is_file():
        raise InputError(path, "expected a local Hugging Face model directory with config.json, weights and "
                               "tokenizer (fine-tuning needs the transformer itself)")
    model, tokenizer = load_pretrained(path)
    return FrozenBottom(model, tokenizer, sentences, layers, max_length=max_length, device=device)


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
