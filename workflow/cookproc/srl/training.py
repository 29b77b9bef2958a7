"""Training the tagger on the EWT training data and scoring it (CoNLL-style exact span match).

The encoder is frozen: its per-word layer features are computed once per sentence and kept in
memory (float16), so an epoch costs only the BiLSTM head. Batches hold instances of similar length
(little padding); batch order is shuffled by a seeded generator. Over the last epochs (the tail of
the cosine schedule) the weights are also averaged; of those epochs and their average, the one with
the best dev F1 is kept.
"""
from __future__ import annotations

import logging
import math
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import torch

from cookproc.core.logs import Progress
from cookproc.core.parquet_io import atomic_output
from cookproc.srl import syntax
from cookproc.srl.bio import bio_to_spans
from cookproc.srl.word_encoder import WordEncoder, WordFeatures
from cookproc.srl.tagger import Batcher, HeadConfig, Instance, Tagger, Vocab

log = logging.getLogger(__name__)


@dataclass
class TaggerTrainConfig:
    """The tagger's training settings. Rule train_srl passes config section ``srl.tagger`` whole
    (plus ``srl.predicate_tags`` and ``srl.device``) and the script builds this from it: the fields
    the config holds have no default here, theirs is the schema's
    (workflow/schemas/config/srl.schema.yaml)."""

    encoder: str
    epochs: int
    average_checkpoints: bool  # also try the mean of the last epochs' weights (kept if best on dev)
    ensemble: int  # heads trained with seeds seed, seed + 1, ... (train_ensemble)
    batch_size: int
    learning_rate: float
    hidden: int
    projection: int
    dropout: float
    max_train_words: int  # longer training sentences are skipped (rare; they dominate cost)
    seed: int
    predicate_tags: tuple[str, ...]
    device: str
    threads: int = 1
    eval_last_epochs: int = 5  # dev F1 (to keep the best epoch) over the last epochs only
    weight_decay: float = 0.0
    max_train_instances: int | None = None  # for quick trials / tests

    def __post_init__(self):
        self.predicate_tags = tuple(self.predicate_tags)  # a YAML list in the config


@dataclass
class Prepared:
    """Corpus rows grouped by sentence, with their spaCy parse and encoder features."""
    sentences: list[tuple[str, str, int]]   # (split, doc, sent_idx)
    words: list[list[str]]
    parsed: list[syntax.ParsedSentence]
    features: WordFeatures | list[np.ndarray]
    parses: list[tuple[int, int, list[str]]]  # (sentence, predicate, gold tags)
    split_of: list[str]


def prepare(rows: Sequence[dict], encoder: WordEncoder, *, batch_size: int = 64) -> Prepared:
    key_index: dict[tuple, int] = {}
    sentences, words, parses = [], [], []
    for row in sorted(rows, key=lambda r: (r["split"], r["doc"], r["sent_idx"], r["predicate_idx"])):
        key = (row["split"], row["doc"], row["sent_idx"])
        if key not in key_index:
            key_index[key] = len(sentences)
            sentences.append(key)
            words.append(list(row["words"]))
        parses.append((key_index[key], int(row["predicate_idx"]), list(row["tags"])))
    t0 = time.perf_counter()
    parsed = syntax.parse_words(words)
    log.info("spaCy parsed %d sentences in %.1fs", len(words), time.perf_counter() - t0)
    t0 = time.perf_counter()
    features = encoder.encode(words, batch_size=batch_size)
    log.info("encoded %d sentences (%d words) in %.1fs", len(words), sum(map(len, words)), time.perf_counter() - t0)
    return Prepared(sentences, words, parsed, features, parses, [s[0] for s in sentences])


def build_tagger(prep: Prepared, cfg: TaggerTrainConfig, n_layers: int, dim: int) -> Tagger:
    train = [i for i, s in enumerate(prep.sentences) if s[0] == "train"]
    tags = Vocab.build(t for i in train for t in prep.parsed[i].tags)
    deps = Vocab.build(d for i in train for d in prep.parsed[i].deps)
    rels = Vocab.build(r for s, p, _ in prep.parses if prep.split_of[s] == "train"
                       for r in syntax.predicate_relations(prep.parsed[s], p))
    labels = Vocab.build((t for s, _, tg in prep.parses if prep.split_of[s] == "train" for t in tg), unk=False)
    head = HeadConfig(n_layers=n_layers, dim=dim, hidden=cfg.hidden, proj=cfg.projection, dropout=cfg.dropout)
    return Tagger(head, tags, deps, rels, labels, cfg.encoder, cfg.predicate_tags)


def instances_for(tagger: Tagger, prep: Prepared, split: str) -> tuple[list[Instance], list[list[str]]]:
    out, gold = [], []
    for s, p, tg in prep.parses:
        if prep.split_of[s] != split:
            continue
        known = [t if t in tagger.labels.index else "O" for t in tg]
        out.append(tagger.instance(s, prep.parsed[s], p, known))
        gold.append(tg)
    return out, gold


def span_scores(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], *,
                skip_roles: Sequence[str] = ("V",)) -> dict[str, dict[str, float]]:
    """Per-role and overall precision/recall/F1 of exact labelled spans (CoNLL-05 style, V skipped)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for g, p in zip(gold, pred):
        gs = {s for s in bio_to_spans(g) if s[0] not in skip_roles}
        ps = {s for s in bio_to_spans(p) if s[0] not in skip_roles}
        for role, *_ in gs & ps:
            counts[role]["tp"] += 1
            counts["overall"]["tp"] += 1
        for role, *_ in gs:
            counts[role]["gold"] += 1
            counts["overall"]["gold"] += 1
        for role, *_ in ps:
            counts[role]["pred"] += 1
            counts["overall"]["pred"] += 1
    scores = {}
    for role, c in counts.items():
        p = c["tp"] / c["pred"] if c["pred"] else 0.0
        r = c["tp"] / c["gold"] if c["gold"] else 0.0
        scores[role] = {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
                        "gold": c["gold"], "pred": c["pred"], "tp": c["tp"]}
    return scores


def _batches(instances: Sequence[Instance], batch_size: int, rng: random.Random) -> list[list[int]]:
    # Sort by length, then by a random number per sentence (a sentence's predicates stay together
    # and share its per-sentence work), cut into batches, shuffle the batch order.
    draw = {}
    for inst in instances:
        if inst.sentence not in draw:
            draw[inst.sentence] = rng.random()
    order = sorted(range(len(instances)), key=lambda i: (len(instances[i].tag_ids), draw[instances[i].sentence], i))
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def train(prep: Prepared, cfg: TaggerTrainConfig, n_layers: int, dim: int) -> tuple[Tagger, list[dict]]:
    """Train on ``train``, keep the epoch with the best dev F1; returns the tagger and epoch log."""
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = random.Random(cfg.seed)
    tagger = build_tagger(prep, cfg, n_layers, dim)
    head = tagger.head.to(cfg.device)
    train_inst, _ = instances_for(tagger, prep, "train")
    train_inst = [i for i in train_inst if len(i.tag_ids) <= cfg.max_train_words]
    if cfg.max_train_instances:
        train_inst = train_inst[: cfg.max_train_instances]
    dev_inst, dev_gold = instances_for(tagger, prep, "dev")
    features = WordFeatures.of(prep.features)
    batcher = Batcher(train_inst, features, cfg.device)  # the training set, on the device once
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * math.ceil(len(train_inst) / cfg.batch_size)
    # Linear warm-up over 5% of the steps, then cosine decay: stable with a high head learning rate.
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps))))
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    history, best_f1, best_state = [], -1.0, None
    weight_sum, averaged = None, []
    progress = Progress(f"tagger training (seed {cfg.seed})", steps, unit="batches", log=log)
    for epoch in range(1, cfg.epochs + 1):
        head.train()
        # The loss sum stays on the device (float64, as the float sum it replaces): read when a
        # progress line is logged and once at the end of the epoch, never once a batch.
        t0, n = time.perf_counter(), 0
        total = torch.zeros((), dtype=torch.float64, device=cfg.device)
        for idx in _batches(train_inst, cfg.batch_size, rng):
            inputs, gold = batcher(idx)
            logits = head(*inputs)
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), 5.0)
            opt.step()
            sched.step()
            total += loss.detach().to(torch.float64) * len(idx)
            n += len(idx)
            progress.step(epoch=f"{epoch}/{cfg.epochs}", loss=lambda: float(total) / n)
        train_loss = float(total) / max(n, 1)
        train_s = time.perf_counter() - t0
        entry = {"epoch": epoch, "train_loss": train_loss, "train_seconds": train_s}
        if dev_inst and epoch > cfg.epochs - cfg.eval_last_epochs:
            pred = [t for t, _ in tagger.predict(dev_inst, features, device=cfg.device)]
            entry["dev_f1"] = span_scores(dev_gold, pred)["overall"]["f1"]
            if entry["dev_f1"] > best_f1:
                best_f1 = entry["dev_f1"]
                best_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
            if cfg.average_checkpoints:
                state = head.state_dict()
                weight_sum = ({k: v.detach().double().clone() for k, v in state.items()} if weight_sum is None
                              else {k: weight_sum[k] + state[k].detach().double() for k in state})
                averaged.append(epoch)
        entry["seconds"] = time.perf_counter() - t0
        log.info("epoch %d: %s", epoch, entry)
        history.append(entry)
    if len(averaged) >= 2:
        # Weight averaging over the flat end of the schedule (as in stochastic weight averaging):
        # kept only when it beats every single epoch on dev.
        t0 = time.perf_counter()
        current = head.state_dict()
        head.load_state_dict({k: (weight_sum[k] / len(averaged)).to(current[k].dtype) for k in current})
        pred = [t for t, _ in tagger.predict(dev_inst, features, device=cfg.device)]
        dev_f1 = span_scores(dev_gold, pred)["overall"]["f1"]
        kept = dev_f1 > best_f1
        if kept:
            best_f1 = dev_f1
            best_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
        entry = {"epoch": f"mean of epochs {averaged[0]}-{averaged[-1]}", "dev_f1": dev_f1, "kept": kept,
                 "seconds": time.perf_counter() - t0}
        log.info("weight average: %s", entry)
        history.append(entry)
    if best_state is not None:
        head.load_state_dict(best_state)
    head.to("cpu")
    head.eval()
    return tagger, history


def train_ensemble(prep: Prepared, cfg: TaggerTrainConfig, n_layers: int, dim: int, members: int | None = None
                   ) -> tuple[Tagger, list[dict]]:
    """``members`` heads (default ``cfg.ensemble``) trained independently (seeds ``cfg.seed``,
    ``cfg.seed + 1``, ...) on the same features, joined into one tagger that averages their
    log-probabilities. Returns the tagger and, per member, its seed and epoch log."""
    members = cfg.ensemble if members is None else members
    taggers, log_per_member = [], []
    for member in range(members):
        member_cfg = replace(cfg, seed=cfg.seed + member)
        tagger, history = train(prep, member_cfg, n_layers, dim)
        taggers.append(tagger)
        log_per_member.append({"seed": member_cfg.seed, "epochs": history})
    taggers[0].add_heads(taggers[1:])
    return taggers[0], log_per_member


def evaluate(tagger: Tagger, prep: Prepared, split: str, device: str = "cpu") -> dict[str, dict[str, float]]:
    inst, gold = instances_for(tagger, prep, split)
    pred = [t for t, _ in tagger.predict(inst, prep.features, device=device)]
    return span_scores(gold, pred)


def _unsafe_part(value, where: str = "state") -> str | None:
    """Where ``value`` holds something other than tensors and plain values (None when nowhere)."""
    if isinstance(value, torch.Tensor) or value is None or isinstance(value, (str, bool, int, float)):
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int)):
                return f"{where} (key {key!r})"
            found = _unsafe_part(item, f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _unsafe_part(item, f"{where}[{i}]")
            if found:
                return found
        return None
    return f"{where} ({type(value).__name__})"


def save_tagger(tagger: Tagger, path) -> None:
    """Write ``tagger`` atomically as tensors and plain values only (dicts, lists, str, numbers),
    so that ``predict.load_tagger`` can load it with ``torch.load(weights_only=True)``."""
    state = tagger.state()
    unsafe = _unsafe_part(state)
    if unsafe:
        raise TypeError(f"tagger state holds a non-plain value at {unsafe}; "
                        "convert it to plain values in Tagger.state and back in Tagger.from_state")
    with atomic_output(path) as tmp:
        torch.save(state, tmp)
