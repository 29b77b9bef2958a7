"""The BIO tagger: frozen-encoder layer mix + dependency features + predicate-aware BiLSTM head.

Input per (sentence, predicate): every word's encoder layers (mixed by learned softmax weights),
the predicate word's mixed vector copied to every position, and small embeddings of the word's
PTB tag, its dependency label, its syntactic relation to the predicate (``syntax``), its signed
distance to the predicate and a predicate indicator. A 2-layer BiLSTM and a linear layer give
per-word label scores; decoding is constrained Viterbi (valid BIO, the predicate is ``B-V``).

A tagger may hold several heads trained independently (different seeds) on the same features and
vocabularies; their per-word log-probabilities are averaged before decoding (an ensemble).
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import nn

from cookproc.core.logs import Progress
from cookproc.srl import syntax
from cookproc.srl.bio import viterbi_decode
from cookproc.srl.viterbi import BatchViterbi, to_device
from cookproc.srl.word_encoder import WordFeatures

log = logging.getLogger(__name__)

UNK = "<unk>"


@dataclass
class Vocab:
    items: list[str]
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self):
        self.index = {s: i for i, s in enumerate(self.items)}

    @classmethod
    def build(cls, values, *, unk: bool = True) -> "Vocab":
        return cls(([UNK] if unk else []) + sorted(set(values) - {UNK}))

    def ids(self, values: Sequence[str]) -> list[int]:
        unk = self.index.get(UNK, 0)
        return [self.index.get(v, unk) for v in values]

    def __len__(self):
        return len(self.items)


@dataclass
class HeadConfig:
    n_layers: int
    dim: int
    hidden: int = 128
    proj: int = 256
    dropout: float = 0.3


@dataclass
class Instance:
    """One predicate of one sentence, featurised (ids are into the tagger's vocabularies)."""
    sentence: int          # index of the sentence's encoder features
    predicate: int
    tag_ids: list[int]
    dep_ids: list[int]
    rel_ids: list[int]
    label_ids: list[int] | None = None


class SrlHead(nn.Module):
    """Per-sentence work (layer mix, word projection) is done once per sentence in the batch and
    shared by its predicates; only the BiLSTM runs per (sentence, predicate)."""

    def __init__(self, cfg: HeadConfig, n_tags: int, n_deps: int, n_rels: int, n_labels: int):
        super().__init__()
        self.cfg = cfg
        self.mix = nn.Parameter(torch.zeros(cfg.n_layers))
        self.word_proj = nn.Linear(cfg.dim, cfg.proj)
        self.pred_proj = nn.Linear(cfg.dim, cfg.proj, bias=False)
        # Symbolic features are embedded straight into the projection space and summed.
        self.tag = nn.Embedding(n_tags, cfg.proj)
        self.dep = nn.Embedding(n_deps, cfg.proj)
        self.rel = nn.Embedding(n_rels, cfg.proj)
        self.dist = nn.Embedding(2 * syntax.DISTANCE_CLIP + 1, cfg.proj)
        self.drop = nn.Dropout(cfg.dropout)
        self.lstm = nn.LSTM(cfg.proj, cfg.hidden, num_layers=2, bidirectional=True, batch_first=True,
                            dropout=cfg.dropout)
        self.out = nn.Linear(2 * cfg.hidden, n_labels)

    def forward(self, feats, sent_index, lengths, predicate, tag_ids, dep_ids, rel_ids):
        """feats [U, N, L, D] of U sentences; sent_index/lengths/predicate [B]; ids [B, N] -> [B, N, K]."""
        b, n = tag_ids.shape
        words = self.drop(torch.einsum("unld,l->und", feats, torch.softmax(self.mix, 0)))
        word_part = self.word_proj(words)[sent_index]                            # [B, N, P]
        pred_part = self.pred_proj(words[sent_index, predicate])[:, None, :]      # [B, 1, P]
        positions = torch.arange(n, device=tag_ids.device)[None, :]
        dist = (positions - predicate[:, None]).clamp(-syntax.DISTANCE_CLIP, syntax.DISTANCE_CLIP) + syntax.DISTANCE_CLIP
        x = word_part + pred_part + self.tag(tag_ids) + self.dep(dep_ids) + self.rel(rel_ids) + self.dist(dist)
        x = self.drop(torch.relu(x))
        return self.out(self.drop(self._bilstm(x, lengths)))

    def _bilstm(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``self.lstm`` over right-padded ``x`` [B, N, P], equal to running it on the packed
        sequences (zeros after each length).

        On CUDA it is that: one cuDNN call on the packed sequences with the LSTM's weights as one
        contiguous block (per-direction calls would make cuDNN re-pack the weights every time).
        Elsewhere each direction runs as a one-layer LSTM on padded input, the backward one on every
        sequence reversed within its own length, so padding only ever follows a sequence's words and
        never reaches them. Torch's LSTM is faster on padded than on packed input on CPUs: the same
        weights and outputs, less time (docs/benchmarks.md)."""
        b, n, _ = x.shape
        if x.device.type == "cuda":
            return self._packed_bilstm(x, lengths)
        lengths = lengths.to(x.device)
        hidden = self.lstm.hidden_size
        positions = torch.arange(n, device=x.device)[None, :]
        reversed_at = lengths[:, None] - 1 - positions
        reversed_at = torch.where(reversed_at >= 0, reversed_at, positions)[:, :, None]  # pads stay put
        zeros = x.new_zeros(1, b, hidden)
        h = x
        for layer in range(self.lstm.num_layers):
            forward = self._direction(h, zeros, f"_l{layer}")
            backward = self._direction(h.gather(1, reversed_at.expand(-1, -1, h.shape[2])), zeros, f"_l{layer}_reverse")
            h = torch.cat([forward, backward.gather(1, reversed_at.expand(-1, -1, hidden))], -1)
            if layer < self.lstm.num_layers - 1:
                h = nn.functional.dropout(h, self.lstm.dropout, self.training)
        return h * (positions < lengths[:, None])[:, :, None]

    def _packed_bilstm(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``self.lstm`` in one call on the packed sequences (cuDNN's way): the batch sorted by
        length on the host, the order copied to the device without waiting for it, and restored
        there (torch's own unsorting would read the device's indices back: a sync every batch)."""
        self.lstm.flatten_parameters()  # a no-op once the weights are one block
        lengths = lengths.cpu()
        ordered = torch.sort(lengths, descending=True, stable=True)
        orders = to_device(torch.stack([ordered.indices, ordered.indices.argsort()]), x.device)
        packed = nn.utils.rnn.pack_padded_sequence(x.index_select(0, orders[0]), ordered.values, batch_first=True)
        output = nn.utils.rnn.pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=x.shape[1])[0]
        return output.index_select(0, orders[1])

    def _direction(self, x: torch.Tensor, zeros: torch.Tensor, suffix: str) -> torch.Tensor:
        """One direction of one layer of ``self.lstm`` (its weights named ``*{suffix}``), left to right."""
        weights = [getattr(self.lstm, f"{name}{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        # torch.lstm(input, (h0, c0), weights, has_biases, num_layers, dropout, train, bidirectional, batch_first)
        return torch.lstm(x, (zeros, zeros), weights, True, 1, 0.0, self.training, False, True)[0]


class Tagger:
    """The head plus its vocabularies: featurises, batches and decodes."""

    def __init__(self, cfg: HeadConfig, tags: Vocab, deps: Vocab, rels: Vocab, labels: Vocab,
                 encoder: str, predicate_tags: Sequence[str] = syntax.DEFAULT_PREDICATE_TAGS):
        self.cfg, self.tags, self.deps, self.rels, self.labels = cfg, tags, deps, rels, labels
        self.encoder = encoder
        self.predicate_tags = tuple(predicate_tags)
        self.head = SrlHead(cfg, len(tags), len(deps), len(rels), len(labels))
        self.extra_heads: list[SrlHead] = []  # further ensemble members
        self.v_label = labels.index["B-V"]
        self.banned = [labels.index[x] for x in ("B-V", "I-V") if x in labels.index]
        self.decoder = BatchViterbi(labels.items, forced_label=self.v_label, banned=self.banned)

    def instance(self, sentence: int, parsed: syntax.ParsedSentence, predicate: int,
                 labels: Sequence[str] | None = None) -> Instance:
        return Instance(
            sentence=sentence, predicate=predicate, tag_ids=self.tags.ids(parsed.tags),
            dep_ids=self.deps.ids(parsed.deps), rel_ids=self.rels.ids(syntax.predicate_relations(parsed, predicate)),
            label_ids=None if labels is None else self.labels.ids(labels))

    def batch(self, instances: Sequence[Instance], features: WordFeatures | Sequence[np.ndarray],
              device: str = "cpu"):
        """The head's inputs and the gold label ids [B, N] (-100 where none) of ``instances``."""
        return Batcher(instances, WordFeatures.of(features), device)(range(len(instances)))

    def decode(self, log_probs: np.ndarray, predicate: int) -> list[str]:
        """One instance's tags, on the host (``predict`` decodes whole batches on the device with
        ``self.decoder``: the same tags)."""
        path = viterbi_decode(log_probs, self.labels.items, forced={predicate: self.v_label}, banned=self.banned)
        return [self.labels.items[i] for i in path]

    @property
    def heads(self) -> list[SrlHead]:
        return [self.head, *self.extra_heads]

    def add_heads(self, others: Sequence["Tagger"]) -> None:
        """Make the heads of ``others`` (trained on the same vocabularies) ensemble members."""
        for other in others:
            if [v.items for v in (other.tags, other.deps, other.rels, other.labels)] != \
                    [v.items for v in (self.tags, self.deps, self.rels, self.labels)] or other.cfg != self.cfg:
                raise ValueError("ensemble members must share the configuration and vocabularies")
            self.extra_heads.extend(other.heads)

    def log_probs(self, *inputs) -> torch.Tensor:
        """Per-word label log-probabilities, averaged over the heads: [B, N, K]."""
        logp = [torch.log_softmax(head(*inputs), -1) for head in self.heads]
        return logp[0] if len(logp) == 1 else torch.stack(logp).mean(0)

    def predict(self, instances: Sequence[Instance], features: WordFeatures | Sequence[np.ndarray], *,
                batch_size: int = 128, device: str = "cpu") -> list[tuple[list[str], list[float]]]:
        """Tags of each instance and each word's probability of its chosen tag.

        Scoring and decoding stay on ``device``; the paths come back to the host once, at the end."""
        if not instances:
            return []
        for head in self.heads:
            head.to(device).eval()
        batcher = Batcher(instances, WordFeatures.of(features), device)
        order = sorted(range(len(instances)), key=lambda i: (len(instances[i].tag_ids), instances[i].sentence, i))
        progress = Progress("SRL labelling", -(-len(order) // batch_size), unit="batches", log=log)
        decoded = []
        with torch.inference_mode():
            for s in range(0, len(order), batch_size):
                idx = order[s:s + batch_size]
                inputs, _ = batcher(idx)
                logp = self.log_probs(*inputs)
                paths = self.decoder(logp, inputs[2], inputs[3])
                decoded.append((idx, paths, logp.gather(-1, paths[:, :, None])[:, :, 0]))
                progress.step()
        out: list = [None] * len(instances)
        for idx, paths, chosen in decoded:
            paths, chosen = paths.cpu().numpy(), chosen.cpu().numpy()
            for r, i in enumerate(idx):
                m = len(instances[i].tag_ids)
                out[i] = ([self.labels.items[k] for k in paths[r, :m]], np.exp(chosen[r, :m]).tolist())
        return out

    def state(self) -> dict:
        return {
            "format": "cookproc-srl-tagger/1", "cfg": asdict(self.cfg), "encoder": self.encoder,
            "predicate_tags": list(self.predicate_tags),
            "vocabs": {k: getattr(self, k).items for k in ("tags", "deps", "rels", "labels")},
            "head": _on_cpu(self.head.state_dict()),
            "extra_heads": [_on_cpu(head.state_dict()) for head in self.extra_heads],
        }

    @classmethod
    def from_state(cls, state: dict) -> "Tagger":
        if state.get("format") != "cookproc-srl-tagger/1":
            raise ValueError(f"not a cookproc SRL tagger checkpoint (format {state.get('format')!r})")
        v = state["vocabs"]
        tagger = cls(HeadConfig(**state["cfg"]), Vocab(v["tags"]), Vocab(v["deps"]), Vocab(v["rels"]),
                     Vocab(v["labels"]), state["encoder"], state["predicate_tags"])
        tagger.head.load_state_dict(state["head"])
        for head_state in state.get("extra_heads", []):
            head = SrlHead(tagger.cfg, len(tagger.tags), len(tagger.deps), len(tagger.rels), len(tagger.labels))
            head.load_state_dict(head_state)
            tagger.extra_heads.append(head)
        for head in tagger.heads:
            head.eval()
        return tagger


def _on_cpu(state: dict) -> dict:
    """A state dict with its tensors on the CPU (a checkpoint loads anywhere)."""
    return {k: v.cpu() for k, v in state.items()}


class Batcher:
    """Instances (their ids) and the word features, as tensors on one device: a batch is a few
    gathers there, not a rebuild on the host. ``batcher(indices)`` -> (head inputs, gold ids)."""

    def __init__(self, instances: Sequence[Instance], features: WordFeatures, device: str = "cpu"):
        self.device = torch.device(device)
        self.lengths = [len(i.tag_ids) for i in instances]
        self.sentence = [i.sentence for i in instances]
        starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64) if instances else []

        def flat(values) -> torch.Tensor:
            return torch.tensor([v for vs in values for v in vs], dtype=torch.long).to(self.device)

        self.ids = torch.stack([flat(i.tag_ids for i in instances), flat(i.dep_ids for i in instances),
                                flat(i.rel_ids for i in instances)])                     # [3, n_words]
        self.gold = flat(i.label_ids if i.label_ids is not None else [-100] * len(i.tag_ids) for i in instances)
        self.start = torch.as_tensor(starts, dtype=torch.long).to(self.device)
        self.length = torch.tensor(self.lengths, dtype=torch.long).to(self.device)
        self.predicate = torch.tensor([i.predicate for i in instances], dtype=torch.long).to(self.device)
        self.words, self.first_word, self.n_words = features.on(self.device)

    def __call__(self, indices: Sequence[int]):
        indices = list(indices)
        n = max(self.lengths[i] for i in indices)
        sentences = sorted({self.sentence[i] for i in indices})
        slot = {s: k for k, s in enumerate(sentences)}
        # One small copy to the device: instance indices, sentence slots, the batch's sentences.
        host = torch.tensor(indices + [slot[self.sentence[i]] for i in indices] + sentences, dtype=torch.long)
        b = len(indices)
        on_device = to_device(host, self.device)
        rows, sent_index, sent = on_device[:b], on_device[b:2 * b], on_device[2 * b:]
        positions = torch.arange(n, device=self.device)[None, :]

        def spans(first: torch.Tensor, count: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            inside = positions < count[:, None]
            return torch.where(inside, first[:, None] + positions, 0), inside

        at, inside = spans(self.start[rows], self.length[rows])
        ids = self.ids[:, at].masked_fill(~inside, 0)                                   # [3, B, N]
        gold = self.gold[at].masked_fill(~inside, -100)
        at, inside = spans(self.first_word[sent], self.n_words[sent])
        feats = self.words[at].masked_fill(~inside[:, :, None, None], 0).float()       # [U, N, L, D]
        lengths = torch.tensor([self.lengths[i] for i in indices])  # host: cuDNN's packing reads them there
        return (feats, sent_index, lengths, self.predicate[rows], ids[0], ids[1], ids[2]), gold
