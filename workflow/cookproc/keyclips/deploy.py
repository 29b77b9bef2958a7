"""A key-clip selector trained on every benchmark recipe, saved for new transcripts (torch).

The neural text selector as cross-validation runs it (cookproc.keyclips.neural with fine-tuned
sentence vectors), fitted once on all benchmark recipes: the sentence encoder's top layers are
fine-tuned on the training recipes, the key-clip net learns on their finetuned vectors (plus context
and layout features and a term vocabulary of the training sentences), the finetuned head's probability
is blended in, and the decision threshold is chosen on the inner-validation recipes (the folds
file's ``inner_val`` flag, as every cross-validation fold does), never on clips it trained on.

An artifact is a folder (:func:`save_selector`, read back by :meth:`KeyClipSelector.load`):

* ``model.json``: format and version, the :class:`SelectorSpec` inference must follow, the
  workflow config that trained it, the code fingerprint and a training summary;
* ``encoder/``: the pretrained encoder and tokenizer it started from (Hugging Face layout);
* ``finetuned_top.safetensors``: the fine-tuned top layers and head; ``net.safetensors``: the net;
* ``vocabulary.json``: the net's terms; ``timing.json``: how long training took (every other file
  is byte-identical when the same inputs are trained again);
* ``MODEL_CARD.md``: written beside them by the rule (:func:`model_card`).

The folder's shape (format and version, checks on load, atomic save, the card's template) is
cookproc.learn.deployed_model's, shared with the tuple extractor. Its candidates of nested selection are
built as the cross-validated runs build theirs (cookproc.keyclips.neural.CandidateGrid).

Inference runs the training code path itself (the frozen bottom, then the finetuned top layers), so a
clip of the benchmark gets the score it got when the selector was trained.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from cookproc.core.errors import InputError
from cookproc.core.formatting import format_number, markdown_table
from cookproc.learn.deployed_model import DeployedModel, ModelFormat, training_summary
from cookproc.learn.deployed_model import model_card as card
from cookproc.learn.keyclip_crossval import blend_scores
from cookproc.keyclips.frozen_bottom import FrozenBottom, bottom_encoder, load_bottom
from cookproc.keyclips.finetune import (FinetuneConfig, FinetunedTop, train_top,
                                        finetuned_outputs)
from cookproc.learn.inputs import text_inputs
from cookproc.keyclips.lexical import build_vocabulary, token_matrix
from cookproc.keyclips.net import KeyClipNet
from cookproc.keyclips.neural import CandidateGrid
from cookproc.learn.selection import choose
from cookproc.keyclips.sentence_encoder import load_pretrained
from cookproc.learn.thresholds import best_threshold
from cookproc.keyclips.train import ClipInputs, KeyClipTrainConfig, predict, train_model

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class SelectorSpec:
    """Everything inference must do as training did."""

    finetuned_layers: int  # top layers of the encoder that were fine-tuned
    max_length: int  # tokens per sentence
    hidden_size: int  # the encoder's
    context_window: int  # neighbouring sentences on each side in the net's input
    layout_features: bool
    lexical: bool
    vocab_size: int  # the net's term embeddings (0 without lexical features)
    text_dim: int  # width of the net's sentence input
    dim: int
    hidden: int
    dropout: float
    head_weight: float  # score = (1 - w) * net + w * finetuned head
    threshold: float  # key iff score >= threshold (chosen on the inner-validation recipes)
    threshold_metric: str


ARTIFACT = ModelFormat("cookproc.keyclip-selector", 2, kind="key-clip selector", rule="deploy_keyclip_selector",
                       rebuild="train the selector again",
                       files=("model.json", "encoder", "finetuned_top.safetensors", "net.safetensors", "vocabulary.json"),
                       required=("code", "training"), spec=SelectorSpec)


@dataclass
class TrainedSelector:
    spec: SelectorSpec
    bottom: FrozenBottom
    finetuned: FinetunedTop
    net: KeyClipNet
    vocabulary: dict[str, int]
    info: dict  # deterministic summary (model.json)
    seconds: dict  # wall times (timing.json and the card): they differ from run to run


def _net_inputs(clips: pd.DataFrame, vectors: np.ndarray, context_window: int, layout: bool,
                vocabulary: dict | None, labels: np.ndarray) -> ClipInputs:
    """The net's inputs, built as cross-validation builds them (cookproc.keyclips.neural)."""
    text = text_inputs(clips, vectors, context_window=context_window, layout=layout)
    tokens = token_matrix(clips["sentence"].astype(str).tolist(), vocabulary) if vocabulary is not None else None
    return ClipInputs(text, None, labels, tokens)


def train_selector(clips: pd.DataFrame, inner_val: np.ndarray, *, encoder_path: str | None, finetune: FinetuneConfig,
                   net: KeyClipTrainConfig, context_window: int, layout_features: bool, head_weight: float, seed: int,
                   device: str = "cpu", candidates: Mapping[str, Sequence] | None = None,
                   objective: str = "f1_accuracy") -> TrainedSelector:
    """Fit the selector on every clip of ``clips`` (sorted by video, clip order): weights on the
    clips outside the inner-validation recipes, early stopping and the threshold on those inside.

    ``candidates`` (keyclips.neural.selection): lists of context windows, lexical flags, head weights
    and threshold rules, made a grid as the cross-validated runs make theirs
    (:class:`cookproc.keyclips.neural.CandidateGrid`); the combination chosen as each
    cross-validation fold chooses (cookproc.learn.selection, on the inner-validation recipes) is the
    one saved. Settings not listed take the single values given.
    """
    if finetune.layers < 1:
        raise ValueError("the deployed selector fine-tunes the encoder: keyclips.neural.finetune.layers must be >= 1")
    grid = CandidateGrid.from_config(candidates, context_window=context_window, lexical=net.lexical,
                                     head_weight=head_weight, threshold_metric=net.threshold_metric)
    weights, rules = grid.head_weights, list(grid.threshold_metrics)
    for weight in weights:
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"head_weight must be in [0, 1], got {weight}")
    inner_val = np.asarray(inner_val, dtype=bool)
    train, val = np.flatnonzero(~inner_val), np.flatnonzero(inner_val)
    if len(train) == 0 or len(val) == 0:
        raise ValueError(f"need training and inner-validation clips, got {len(train)} / {len(val)}")
    labels = clips["is_key"].to_numpy().astype(bool)
    sentences = clips["sentence"].astype(str).tolist()
    start = time.perf_counter()
    bottom = load_bottom(encoder_path, sentences, finetune.layers, max_length=finetune.max_length, device=device)
    finetuned, tune_info = train_top(bottom, labels, train, val, finetune, seed)
    vectors, head = finetuned_outputs(finetuned, bottom, len(labels))
    finetuned_s = time.perf_counter() - start
    fitted = []  # (settings, (net config, model, inputs, vocabulary, summary), validation scores)
    for settings in grid.nets():
        cfg = dataclasses.replace(net, lexical=settings["lexical"])
        vocabulary = (build_vocabulary([sentences[i] for i in train], min_count=cfg.lexical_min_count)
                      if cfg.lexical else None)
        data = _net_inputs(clips, vectors, settings["context_window"], layout_features, vocabulary, labels)
        model, net_info = train_model("text", data, train, val, cfg, seed)
        net_val = predict(model, data, val)
        for weight in weights:  # blended as cross-validation blends (learn.keyclip_crossval.candidates_with_heads)
            fitted.append(({**settings, "head_weight": weight}, (cfg, model, data, vocabulary, net_info),
                           blend_scores(net_val, head[val], weight)))
    selection = {}
    if len(fitted) * len(rules) > 1:
        choice = choose(labels[val], clips["recipe"].astype(str).to_numpy()[val],
                        [(settings, scores) for settings, _, scores in fitted], rules, objective)
        index, rule = choice.index, choice.threshold_metric
        selection = {"selected": {**fitted[index][0], "threshold_metric": rule}, "selection_value": choice.value,
                     "selection_objective": objective, "candidates": choice.table}
    else:
        index, rule = 0, rules[0]
    settings, (cfg, model, data, vocabulary, net_info), val_scores = fitted[index]
    threshold = best_threshold(labels[val], val_scores, rule)
    spec = SelectorSpec(finetuned_layers=finetune.layers, max_length=finetune.max_length,
                        hidden_size=bottom.hidden_size, context_window=settings["context_window"],
                        layout_features=layout_features, lexical=cfg.lexical,
                        vocab_size=len(vocabulary) if vocabulary else 0, text_dim=data.text_dim, dim=cfg.dim,
                        hidden=cfg.hidden, dropout=cfg.dropout, head_weight=settings["head_weight"],
                        threshold=float(threshold), threshold_metric=rule)
    # Which recipes the weights saw and which chose the settings, by name (the model card states both).
    info = {**training_summary(clips, inner_val), "seed": seed, **tune_info, **net_info, **selection}
    seconds = {"finetune": round(finetuned_s, 1), "total": round(time.perf_counter() - start, 1), "device": device}
    log.info("trained on %d clips (%d inner-validation): threshold %.4f, %s, %s", len(train), len(val), threshold,
             {k: v for k, v in info.items() if k != "candidates"}, seconds)
    return TrainedSelector(spec, bottom, finetuned, model, vocabulary or {}, info, seconds)


def _save_tensors(module: torch.nn.Module, path: Path) -> None:
    from safetensors.torch import save_file

    save_file({k: v.detach().cpu().contiguous() for k, v in module.state_dict().items()}, str(path))


def metadata(selector: TrainedSelector, *, config: dict, code: str) -> dict:
    """model.json's content: format, spec, the settings that trained it, the code fingerprint."""
    return ARTIFACT.stamp({"spec": dataclasses.asdict(selector.spec), "config": config, "code": code,
                           "training": selector.info})


def save_selector(selector: TrainedSelector, out_dir: str | os.PathLike, meta: dict, card: str | None = None) -> None:
    """Write the artifact folder (``meta``: :func:`metadata`) atomically: built beside ``out_dir``
    and renamed into place."""
    with ARTIFACT.saving(out_dir, meta, card) as (tmp, _):
        selector.bottom.model.save_pretrained(tmp / "encoder")
        selector.bottom.tokenizer.save_pretrained(tmp / "encoder")
        _save_tensors(selector.finetuned, tmp / "finetuned_top.safetensors")
        _save_tensors(selector.net, tmp / "net.safetensors")
        (tmp / "vocabulary.json").write_text(json.dumps(selector.vocabulary, indent=0, sort_keys=True) + "\n")
        (tmp / "timing.json").write_text(json.dumps(selector.seconds, indent=1, sort_keys=True) + "\n")


#: The artifact's model.json, checked for format, version, keys and spec (no weights are read).
read_model_json = ARTIFACT.read


class KeyClipSelector(DeployedModel):
    """A saved selector, ready to score the clips of new transcripts.

    The encoder's frozen bottom and the finetuned top are built and moved to ``device`` once, when the
    selector is made: :meth:`score` (called once per chunk of a corpus) only runs them.
    """

    def __init__(self, path: Path, spec: SelectorSpec, meta: dict, model, tokenizer, finetuned_state: dict,
                 net: KeyClipNet, vocabulary: dict[str, int], device: str):
        self.path, self.spec, self.meta = path, spec, meta
        self.model, self.tokenizer, self.finetuned_state = model, tokenizer, finetuned_state
        self.net, self.vocabulary, self.device = net, vocabulary, device
        self.bottom = bottom_encoder(model, spec.finetuned_layers).to(device)
        self.finetuned = self._finetuned_top(self._frozen([]))  # checks the finetuned weights' shapes too

    def _frozen(self, sentences: Sequence[str]) -> FrozenBottom:
        return FrozenBottom(self.model, self.tokenizer, sentences, self.spec.finetuned_layers,
                            max_length=self.spec.max_length, device=self.device, bottom=self.bottom)

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu") -> "KeyClipSelector":
        """Read and check an artifact folder; refuses one whose format, spec or weights do not match,
        or that holds pickles or code (before any weights are read)."""
        from safetensors.torch import load_file

        path, meta = ARTIFACT.open(path)
        spec = SelectorSpec(**meta["spec"])
        model, tokenizer = load_pretrained(path / "encoder")
        if int(model.config.hidden_size) != spec.hidden_size:
            raise InputError(path / "encoder", f"hidden size {model.config.hidden_size}, model.json says "
                                               f"{spec.hidden_size}")
        vocabulary = json.loads((path / "vocabulary.json").read_text(encoding="utf-8"))
        if len(vocabulary) != spec.vocab_size or (vocabulary and max(vocabulary.values()) != spec.vocab_size):
            raise InputError(path / "vocabulary.json", f"{len(vocabulary)} terms, model.json says {spec.vocab_size}")
        net = KeyClipNet("text", spec.text_dim, 0, vocab_size=spec.vocab_size, dim=spec.dim, hidden=spec.hidden,
                         dropout=spec.dropout)
        try:
            net.load_state_dict(load_file(str(path / "net.safetensors")))
        except RuntimeError as exc:
            raise InputError(path / "net.safetensors", f"weights do not match model.json's spec: {exc}") from exc
        finetuned_state = load_file(str(path / "finetuned_top.safetensors"))
        return cls(path, spec, meta, model, tokenizer, finetuned_state, net.eval(), vocabulary, device)

    def _finetuned_top(self, bottom: FrozenBottom) -> FinetunedTop:
        finetuned = FinetunedTop(bottom.top(), self.spec.hidden_size)
        try:
            finetuned.load_state_dict(self.finetuned_state)
        except RuntimeError as exc:
            raise InputError(self.path / "finetuned_top.safetensors",
                             f"weights do not match the encoder and model.json's spec: {exc}") from exc
        return finetuned.to(self.device)

    def score(self, clips: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Key-clip probability and decision of each clip. ``clips``: ``video_id``, ``clip_idx`` and
        ``sentence``, each video's clips together and in order (neighbours and position are features)."""
        if len(clips) == 0:
            return np.zeros(0), np.zeros(0, dtype=bool)
        if not _contiguous(clips["video_id"].to_numpy()):
            raise ValueError("the clips of each video must be consecutive rows")
        sentences = clips["sentence"].astype(str).tolist()
        bottom = self._frozen(sentences)
        vectors, head = finetuned_outputs(self.finetuned, bottom, len(sentences))
        vocabulary = self.vocabulary if self.spec.lexical else None
        data = _net_inputs(clips, vectors, self.spec.context_window, self.spec.layout_features, vocabulary,
                           np.zeros(len(sentences)))
        probability = blend_scores(predict(self.net, data, np.arange(len(sentences))), head, self.spec.head_weight)
        return probability, probability >= self.spec.threshold


def _contiguous(values: np.ndarray) -> bool:
    """Each value's rows form one run."""
    seen, previous = set(), object()
    for v in values.tolist():
        if v != previous:
            if v in seen:
                return False
            seen.add(v)
            previous = v
    return True


def model_card(name: str, meta: dict, seconds: dict, cv_rows: Sequence[dict], interval: dict | None) -> str:
    """MODEL_CARD.md (cookproc.learn.deployed_model's template): what the selector is, what its weights
    were trained on and what chose its settings (which recipes), how well cross-validation scored
    the same configuration and seed (``cv_rows``: Acc/P/R/F1 of that seed's run, one of those Table 4 averages, as
    model.json's ``crossval`` holds them; ``interval``: its bootstrap intervals), how long training
    took and how to use it."""
    spec, training = meta["spec"], meta["training"]
    metrics = ("accuracy", "precision", "recall", "f1")
    table = markdown_table(["run", "Acc", "P", "R", "F1"],
                           [[str(row["run"]), *(format_number(row[m], 1) for m in metrics)] for row in cv_rows])
    intervals = {"unit": interval["unit"], "resamples": interval["resamples"],
                 "metrics": ", ".join(f"{m} [{format_number(low, 1)}, {format_number(high, 1)}]"
                                      for m, (low, high) in interval["metrics"].items())} if interval else None
    selected = training.get("selected")
    selection = {"names": ", ".join(selected), "chosen": ", ".join(f"{k} {v}" for k, v in selected.items()),
                 "objective": training["selection_objective"],
                 "value": format_number(training["selection_value"], 4)} if selected else None
    return card(ARTIFACT.kind, name, meta, {
        "finetuned_layers": spec["finetuned_layers"], "context_window": spec["context_window"],
        "layout": spec["layout_features"], "lexical": spec["lexical"], "head_weight": spec["head_weight"],
        "threshold": format_number(spec["threshold"], 4), "threshold_metric": spec["threshold_metric"],
        "seed": training["seed"], "seconds": format_number(seconds["total"], 0),
        "finetune_seconds": format_number(seconds["finetune"], 0), "device": seconds["device"], "table": table,
        "intervals": intervals, "selection": selection})
