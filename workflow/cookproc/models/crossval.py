"""Cross-validated key-clip systems: every clip is scored once, by the model that did not see its recipe.

For each fold f: fit on the other folds' training recipes, early-stop and choose the decision
threshold on their inner-validation recipes, score fold f. The output is one row per clip with the
out-of-fold probability, the fold's threshold decision and the fold id (the KEYCLIPS schema).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from cookproc.models.data import VisualSets, context_features, layout_features
from cookproc.models.finetune import FoldVectors
from cookproc.models.folds import clip_folds, split_indices
from cookproc.models.lexical import build_vocabulary, token_matrix
from cookproc.models.train import ClipInputs, TrainConfig, best_threshold, predict, train_model

log = logging.getLogger(__name__)

#: fit(train_idx, val_idx, test_idx) -> (validation scores, test scores, info dict)
FitPredict = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, dict]]


@dataclass
class CVResult:
    score: np.ndarray  # out-of-fold probability per clip
    is_key: np.ndarray  # decision with the clip's fold threshold
    fold: np.ndarray
    thresholds: dict[int, float]
    info: dict[int, dict] = field(default_factory=dict)


def cross_validate(fold: np.ndarray, inner: np.ndarray, labels: np.ndarray, fit_predict: FitPredict,
                   threshold_metric: str = "f1") -> CVResult:
    """Run ``fit_predict`` for every held-out fold; thresholds from inner-validation scores only."""
    n = len(labels)
    score = np.full(n, np.nan)
    is_key = np.zeros(n, dtype=bool)
    thresholds, info = {}, {}
    for f in sorted(np.unique(fold).tolist()):
        train, val, test = split_indices(fold, inner, f)
        if len(val) == 0 or len(train) == 0:
            raise ValueError(f"fold {f}: {len(train)} training and {len(val)} inner-validation clips; every "
                             "fold needs at least two recipes (fewer folds, or more recipes)")
        start = time.perf_counter()
        val_scores, test_scores, fold_info = fit_predict(train, val, test)
        t = best_threshold(labels[val], val_scores, threshold_metric)
        if not np.isnan(score[test]).all():
            raise RuntimeError(f"fold {f}: clips scored twice")
        score[test] = test_scores
        is_key[test] = test_scores >= t
        thresholds[f] = t
        info[f] = {**fold_info, "n_train": len(train), "n_val": len(val), "n_test": len(test),
                   "threshold": t, "seconds": round(time.perf_counter() - start, 1)}
        log.info("fold %d: %s", f, info[f])
    if np.isnan(score).any():
        raise RuntimeError(f"{int(np.isnan(score).sum())} clips were never scored")
    return CVResult(score, is_key, fold.astype(np.int64), thresholds, info)


def held_out_fold(fold: np.ndarray, test: np.ndarray, available) -> int:
    """The one fold that ``test`` clips belong to, checked against the folds that have inputs."""
    held_out = np.unique(fold[test]).tolist()
    if len(held_out) != 1 or held_out[0] not in available:
        raise ValueError(f"test clips of folds {held_out}; inputs exist for folds {sorted(available)}")
    return held_out[0]


def per_fold_fit_predict(fold: np.ndarray, fits: dict[int, FitPredict]) -> FitPredict:
    """A :data:`FitPredict` that hands each held-out fold to its own ``fits[f]`` (inputs built per fold)."""

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        return fits[held_out_fold(fold, test, fits)](train, val, test)

    return fit


def blend_with_heads(fit_predict: FitPredict, fold: np.ndarray, heads: dict[int, np.ndarray],
                     weight: float) -> FitPredict:
    """``(1 - weight) * fit_predict + weight * heads[f]`` on validation and test clips of held-out fold f.

    ``heads[f]``: every clip's probability from a model that never saw fold f's recipes (a tuned
    encoder's head). Blended with fixed weights, not learned: a model trained on the heads' scores
    of training clips would learn to trust them more than they deserve on unseen recipes.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"head weight must be in [0, 1], got {weight}")

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        val_scores, test_scores, info = fit_predict(train, val, test)
        head = heads[held_out_fold(fold, test, heads)]
        return ((1 - weight) * val_scores + weight * head[val], (1 - weight) * test_scores + weight * head[test],
                {**info, "head_weight": weight})

    return fit


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


def neural_fit_predict(variant: str, data: ClipInputs, cfg: TrainConfig, seed: int,
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


def keyclips_table(system: str, clips: pd.DataFrame, result: CVResult) -> pa.Table:
    """A KEYCLIPS table (cookproc.schemas) for a cross-validated system."""
    return pa.table(
        {
            "system": pa.array([system] * len(clips), pa.string()),
            "video_id": pa.array(clips["video_id"].astype(str).tolist(), pa.string()),
            "clip_idx": pa.array(clips["clip_idx"].to_numpy().astype(np.int32)),
            "is_key": pa.array(result.is_key.astype(bool)),
            "score": pa.array(result.score.astype(np.float64)),
            "fold": pa.array(result.fold.astype(np.int32)),
        }
    )


def set_torch_threads(n: int) -> None:
    """Fix the intra-op thread count: results are reproducible for a given count."""
    torch.set_num_threads(max(1, int(n)))


def text_inputs(clips: pd.DataFrame, embeddings: np.ndarray, *, context_window: int, layout: bool) -> np.ndarray:
    """The sentence-side input: embeddings (with ``context_window`` neighbours) and layout features."""
    parts = [context_features(embeddings, clips, context_window)]
    if layout:
        parts.append(layout_features(clips))
    return np.hstack(parts).astype(np.float32)


def run_neural(variant: str, clips: pd.DataFrame, folds: pd.DataFrame, text: np.ndarray | None,
               visual: VisualSets | None, cfg: TrainConfig, seed: int, tuned: TunedSentences | None = None) -> CVResult:
    """Cross-validate one variant of the key-clip net with one seed (``text`` is ignored with ``tuned``)."""
    fold, inner = clip_folds(folds, clips)
    labels = clips["is_key"].to_numpy().astype(bool)
    if tuned is not None:  # a placeholder of the right width; every fold replaces it with its tuned vectors
        some = next(iter(tuned.folds.values()))
        text = tuned.text_input(np.zeros_like(some.vectors))
    data = neural_inputs(variant, text, visual, labels)
    fit = neural_fit_predict(variant, data, cfg, seed, clips["sentence"].astype(str).tolist(), tuned, fold)
    return cross_validate(fold, inner, labels, fit, cfg.threshold_metric)
