"""The neural key-clip selector under cross-validation (torch): one variant, one seed, every fold.

Builds the net's inputs per fold (its own term vocabulary, the held-out fold's tuned sentence
vectors) and hands :func:`neural_fit_predict` to the torch-free driver
(cookproc.keyclips.crossval.cross_validate), which chooses each fold's threshold.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from cookproc.keyclips.crossval import CVResult, FitPredict, blend_with_heads, cross_validate, held_out_fold
from cookproc.keyclips.folds import clip_folds
from cookproc.keyclips.inputs import VisualSets
from cookproc.keyclips.lexical import build_vocabulary, token_matrix
from cookproc.keyclips.train import ClipInputs, KeyClipTrainConfig, predict, train_model
from cookproc.keyclips.tuned_vectors import FoldVectors


@dataclass
class TunedSentences:
    """Per-fold fine-tuned sentences (rule keyclips_finetune): fold f's vectors come from an encoder
    that never saw fold f's recipes, so they can score fold f."""

    folds: dict[int, FoldVectors]
    text_input: Callable[[np.ndarray], np.ndarray]  # sentence vectors of all clips -> the net's text input
    head_weight: float = 0.0  # weight of the tuned head's own probability in the clip score

    def __post_init__(self):
        if not 0.0 <= self.head_weight <= 1.0:
            raise ValueError(f"head_weight must be in [0, 1], got {self.head_weight}")


def neural_fit_predict(variant: str, data: ClipInputs, cfg: KeyClipTrainConfig, seed: int,
                       sentences: list[str] | None = None, tuned: TunedSentences | None = None,
                       fold: np.ndarray | None = None) -> FitPredict:
    """A :data:`FitPredict` that trains the key-clip net (one seed per run, the same for every fold).

    With ``cfg.lexical`` (text and full variants) each fold gets a term vocabulary of its own
    training sentences, so no test word shapes the model. With ``tuned`` (and the clips' ``fold``
    ids) the held-out fold's tuned vectors become the text input, and the clip score is
    ``(1 - w) * net + w * head`` with w = ``tuned.head_weight``: two views of the same encoder that
    average out some of each other's errors.
    """
    lexical = cfg.lexical and variant != "visual"
    if lexical and sentences is None:
        raise ValueError("lexical features need the sentences")
    if tuned is not None and variant == "visual":
        raise ValueError("the visual variant reads no sentences: it has no tuned sentence vectors")
    if tuned is not None and fold is None:
        raise ValueError("tuned sentence vectors are per fold: the clips' fold ids are needed")

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        fold_data = data
        if tuned is not None:
            vectors = tuned.folds[held_out_fold(fold, test, tuned.folds)]
            fold_data = fold_data.with_text(tuned.text_input(vectors.vectors))
        if lexical:
            vocab = build_vocabulary([sentences[i] for i in train], min_count=cfg.lexical_min_count)
            fold_data = fold_data.with_tokens(token_matrix(sentences, vocab))
        net, summary = train_model(variant, fold_data, train, val, cfg, seed)
        return predict(net, fold_data, val), predict(net, fold_data, test), summary

    if tuned is not None and tuned.head_weight > 0:
        return blend_with_heads(fit, fold, {f: v.head for f, v in tuned.folds.items()}, tuned.head_weight)
    return fit


def neural_inputs(variant: str, text: np.ndarray | None, visual: VisualSets | None, labels: np.ndarray) -> ClipInputs:
    """Only the inputs the variant uses (so an ablation can never peek at the other modality)."""
    if variant in ("text", "full") and text is None:
        raise ValueError(f"variant {variant} needs text features")
    if variant in ("visual", "full") and visual is None:
        raise ValueError(f"variant {variant} needs visual sets")
    return ClipInputs(text if variant != "visual" else None, visual if variant != "text" else None, labels)


def set_torch_threads(n: int) -> None:
    """Fix the intra-op thread count: results are reproducible for a given count."""
    torch.set_num_threads(max(1, int(n)))


def run_neural(variant: str, clips: pd.DataFrame, folds: pd.DataFrame, text: np.ndarray | None,
               visual: VisualSets | None, cfg: KeyClipTrainConfig, seed: int,
               tuned: TunedSentences | None = None) -> CVResult:
    """Cross-validate one variant of the key-clip net with one seed (``text`` is ignored with ``tuned``)."""
    fold, inner = clip_folds(folds, clips)
    labels = clips["is_key"].to_numpy().astype(bool)
    if tuned is not None:  # a placeholder of the right width; every fold replaces it with its tuned vectors
        some = next(iter(tuned.folds.values()))
        text = tuned.text_input(np.zeros_like(some.vectors))
    data = neural_inputs(variant, text, visual, labels)
    fit = neural_fit_predict(variant, data, cfg, seed, clips["sentence"].astype(str).tolist(), tuned, fold)
    return cross_validate(fold, inner, labels, fit, cfg.threshold_metric)
