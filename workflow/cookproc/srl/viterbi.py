"""Constrained Viterbi decoding of a whole batch as tensor operations on the scores' device.

The same decoder as ``bio.viterbi_decode`` (valid BIO, one position pinned to a label, some labels
banned elsewhere, ties towards the lower label id), run for every sequence of a padded batch at
once: one loop over word positions instead of one per sentence, and no copy to the host.

The reference adds a [labels x labels] matrix of 0 (allowed) or -1e9 to the previous scores and
takes each column's maximum (first index on ties). Its structure makes that cheap without changing
a bit: a label that is not ``I-X`` may follow any label, so its column's maximum is the maximum of
the previous scores (+ 0); ``I-X`` may follow only ``B-X`` and ``I-X``, so its column's maximum is the
larger of those two scores and the largest ``score - 1e9`` over the other labels. Rounding is
monotone, so that largest one is ``fl(s - 1e9)`` of the largest score ``s`` outside the two; a
stable descending sort's first three entries hold it, first index first. Every value compared is a
value the reference computes, in float64, so paths and ties come out identical.
"""
from __future__ import annotations

from typing import Sequence

import torch

from cookproc.srl.bio import allowed_starts, allowed_transitions

NEG = -1e9  # bio.viterbi_decode's score of a forbidden choice


def to_device(tensor: torch.Tensor, device) -> torch.Tensor:
    """A host tensor on ``device``. To a GPU through pinned memory, asynchronously: a plain copy
    from pageable memory waits for everything queued on the device (a host sync)."""
    device = torch.device(device)
    if device.type == "cuda" and tensor.device.type == "cpu":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


class BatchViterbi:
    """Decoder for one label set: ``decoder(log_probs, lengths, predicate)`` -> label ids [B, N]."""

    def __init__(self, labels: Sequence[str], *, forced_label: int | None = None, banned: Sequence[int] = ()):
        self.n_labels = len(labels)
        self.forced_label = forced_label
        self.banned = list(banned)
        allowed = allowed_transitions(labels)
        self._starts = torch.from_numpy(allowed_starts(labels))
        # Columns any label may reach ("free"), and the others with the one or two labels that may
        # precede them (an I-X column: B-X and I-X; the second repeats the first when there is no B-X).
        free = [j for j in range(len(labels)) if allowed[:, j].all()]
        restricted = [j for j in range(len(labels)) if not allowed[:, j].all()]
        before = [[int(i) for i in allowed[:, j].nonzero()[0]] for j in restricted]
        if any(not 1 <= len(ids) <= 2 for ids in before):
            raise ValueError("BatchViterbi expects BIO transitions: an I- label follows only its B- and I- labels")
        self._columns = (free, restricted, [ids[0] for ids in before], [ids[-1] for ids in before])
        self._on: dict[torch.device, tuple[torch.Tensor, ...]] = {}

    def _constants(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        if device not in self._on:
            start = torch.where(self._starts, torch.zeros((), dtype=torch.float64), NEG)
            columns = [torch.tensor(c, dtype=torch.long) for c in self._columns]
            order = torch.tensor(self._columns[0] + self._columns[1], dtype=torch.long).argsort()
            self._on[device] = tuple(x.to(device) for x in (start, *columns, order))
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
        if device.type == "cpu" and torch.get_num_threads() > 1:
            # Every op here is small ([batch, labels]): split over threads, each would cost more in
            # synchronisation than it saves (and far more on a busy machine).
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return self(log_probs, lengths, predicate)
            finally:
                torch.set_num_threads(threads)
        start = self._constants(device)[0]
        lengths = to_device(lengths, device)
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
        back = [None]
        for t in range(1, n):
            top, arg = self._step(best)
            back.append(arg)
            best = torch.where((t < lengths)[:, None], top + scores[:, t], best)  # frozen past the end
        current = best.max(dim=1).indices  # torch.max: the first index of the maximum
        for t in range(n - 1, 0, -1):
            out[:, t] = current
            previous = back[t].gather(1, current[:, None])[:, 0]
            current = torch.where(t < lengths, previous, current)
        out[:, 0] = current
        return out

    def _step(self, best: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The reference's ``cand = best[:, None] + trans``: each column's maximum over the previous
        labels and its first index, [B, K] each (see the module's docstring)."""
        _, free, restricted, first, second, columns = self._constants(best.device)
        b, k = best.shape
        allowed = best + 0.0  # what the reference adds for an allowed move: the same bits
        free_top, free_arg = allowed.max(dim=1)  # torch.max: the first index of the maximum
        if not len(restricted):
            return free_top[:, None].expand(b, k), free_arg[:, None].expand(b, k)
        # The largest barred score outside a column's (at most two) allowed labels: the first of the
        # three highest that is neither. Each is torch.max's first index once the higher ones are
        # set to -inf; an index is only wrong when its value is -inf, and then (below) unused.
        barred = best + NEG
        v1, i1 = barred.max(dim=1, keepdim=True)
        rest = barred.scatter(1, i1, float("-inf"))
        v2, i2 = rest.max(dim=1, keepdim=True)
        v3, i3 = rest.scatter_(1, i2, float("-inf")).max(dim=1, keepdim=True)
        take1 = (i1 != first) & (i1 != second)                          # [B, R]
        take2 = (i2 != first) & (i2 != second)
        other = torch.where(take1, v1, torch.where(take2, v2, v3))
        other_id = torch.where(take1, i1, torch.where(take2, i2, i3))
        via_first, via_second = allowed[:, first], allowed[:, second]
        top = torch.maximum(torch.maximum(via_first, via_second), other)
        arg = torch.minimum(torch.minimum(torch.where(via_first == top, first, k), torch.where(via_second == top, second, k)),
                            torch.where(other == top, other_id, k))
        arg = torch.where(top == float("-inf"), 0, arg)  # every candidate -inf: the reference takes label 0
        # Back to label order: free columns first, then the restricted ones, permuted.
        top = torch.cat([free_top[:, None].expand(b, len(free)), top], 1).index_select(1, columns)
        arg = torch.cat([free_arg[:, None].expand(b, len(free)), arg], 1).index_select(1, columns)
        return top, arg
