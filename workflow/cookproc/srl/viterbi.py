"""Constrained Viterbi decoding of a whole batch as tensor operations on the scores' device.

The same decoder as ``bio.viterbi_decode`` (valid BIO, one position pinned to a label, some labels
banned elsewhere, ties towards the lower label id), run for every sequence of a padded batch at
once: one loop over word positions instead of one per sentence, and no copy to the host.
The arithmetic is ``bio.viterbi_decode``'s, step for step, in float64, so the paths are identical.
"""
from __future__ import annotations

from typing import Sequence

import torch

from cookproc.srl.bio import allowed_starts, allowed_transitions

NEG = -1e9  # bio.viterbi_decode's score of a forbidden choice


class BatchViterbi:
    """Decoder for one label set: ``decoder(log_probs, lengths, predicate)`` -> label ids [B, N]."""

    def __init__(self, labels: Sequence[str], *, forced_label: int | None = None, banned: Sequence[int] = ()):
        self.n_labels = len(labels)
        self.forced_label = forced_label
        self.banned = list(banned)
        self._transitions = torch.from_numpy(allowed_transitions(labels))
        self._starts = torch.from_numpy(allowed_starts(labels))
        self._on: dict[torch.device, tuple[torch.Tensor, ...]] = {}

    def _constants(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        if device not in self._on:
            zero = torch.zeros((), dtype=torch.float64)
            trans = torch.where(self._transitions, zero, NEG)
            start = torch.where(self._starts, zero, NEG)
            self._on[device] = (trans.to(device), start.to(device), torch.arange(self.n_labels, device=device))
        return self._on[device]

    def __call__(self, log_probs: torch.Tensor, lengths: torch.Tensor,
                 predicate: torch.Tensor | None = None) -> torch.Tensor:
        """Best valid path of each sequence: ``log_probs`` [B, N, K] (right-padded), ``lengths`` [B],
        ``predicate`` [B] (the position pinned to ``forced_label``). Positions past a sequence's
        length hold arbitrary ids."""
        b, n, k = log_probs.shape
        device = log_probs.device
        if k != self.n_labels:
            raise ValueError(f"scores over {k} labels for a decoder of {self.n_labels}")
        out = torch.zeros((b, n), dtype=torch.long, device=device)
        if b == 0 or n == 0:
            return out
        trans, start, label_ids = self._constants(device)
        lengths = lengths.to(device)
        scores = log_probs.to(torch.float64).clone()
        if self.banned:
            scores[:, :, self.banned] = NEG
        if self.forced_label is not None and predicate is not None:
            rows, predicate = torch.arange(b, device=device), predicate.to(device)
            pinned = scores[rows, predicate, self.forced_label]
            keep = torch.where(pinned > NEG, pinned, torch.zeros_like(pinned))
            scores[rows, predicate] = NEG
            scores[rows, predicate, self.forced_label] = keep
        best = scores[:, 0] + start                                      # [B, K]
        back = torch.zeros((b, n, k), dtype=torch.long, device=device)
        for t in range(1, n):
            cand = best[:, :, None] + trans                              # [B, prev, cur]
            top = cand.amax(dim=1)
            back[:, t] = _first_index_of(cand, top[:, None, :], label_ids[None, :, None], dim=1)
            best = torch.where((t < lengths)[:, None], top + scores[:, t], best)  # frozen past the end
        last = _first_index_of(best, best.amax(dim=1, keepdim=True), label_ids[None, :], dim=1)
        current = last
        for t in range(n - 1, 0, -1):
            out[:, t] = current
            previous = back[:, t].gather(1, current[:, None])[:, 0]
            current = torch.where(t < lengths, previous, current)
        out[:, 0] = current
        return out


def _first_index_of(values: torch.Tensor, top: torch.Tensor, ids: torch.Tensor, dim: int) -> torch.Tensor:
    """The lowest id along ``dim`` where ``values`` equals its maximum ``top`` (numpy's argmax tie
    rule, spelled out: torch documents no tie rule for every device)."""
    return torch.where(values == top, ids, values.shape[dim]).amin(dim=dim)
