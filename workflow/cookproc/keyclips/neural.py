"""The neural key-clip selector under cross-validation (torch): one variant, one seed, every fold.

Builds the net's inputs per fold (its own term vocabulary, the held-out fold's finetuned sentence
vectors) and hands :func:`neural_fit_predict` to the torch-free driver
(cookproc.learn.keyclip_crossval.nested_cross_validate), which chooses each fold's candidate settings
and threshold on that fold's inner-validation recipes.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from cookproc.learn.keyclip_crossval import (CVResult, FitPredict, candidates_with_heads, held_out_fold,
                                             nested_cross_validate)
from cookproc.learn.folds import clip_folds
from cookproc.learn.inputs import VisualSets
from cookproc.learn.selection import candidate_grid
from cookproc.keyclips.lexical import build_vocabulary, token_matrix
from cookproc.keyclips.train import ClipInputs, KeyClipTrainConfig, predict, train_model
from cookproc.learn.finetuned_vectors import FoldVectors


@dataclass
class FinetunedSentences:
    """Per-fold fine-tuned sentences (rule keyclips_finetune): fold f's vectors come from an encoder
    that never saw fold f's recipes, so they can score fold f."""

    folds: dict[int, FoldVectors]
    text_input: Callable[[np.ndarray], np.ndarray]  # sentence vectors of all clips -> the net's text input
    head_weight: float = 0.0  # weight of the finetuned head's own probability in the clip score

    def __post_init__(self):
        if not 0.0 <= self.head_weight <= 1.0:
            raise ValueError(f"head_weight must be in [0, 1], got {self.head_weight}")


def neural_fit_predict(variant: str, data: ClipInputs, cfg: KeyClipTrainConfig, seed: int,
                       sentences: list[str] | None = None, finetuned: FinetunedSentences | None = None,
                       fold: np.ndarray | None = None) -> FitPredict:
    """A :data:`FitPredict` that trains the key-clip net (one seed per run, the same for every fold).

    With ``cfg.lexical`` (text and full variants) each fold gets a term vocabulary of its own
    training sentences, so no test word shapes the model. With ``finetuned`` (and the clips' ``fold``
    ids) the held-out fold's finetuned vectors become the text input; the finetuned head's probability is
    blended into the net's scores by :func:`run_nested_neural` (keyclip_crossval.candidates_with_heads).
    """
    lexical = cfg.lexical and variant != "visual"
    if lexical and sentences is None:
        raise ValueError("lexical features need the sentences")
    if finetuned is not None and variant == "visual":
        raise ValueError("the visual variant reads no sentences: it has no finetuned sentence vectors")
    if finetuned is not None and fold is None:
        raise ValueError("finetuned sentence vectors are per fold: the clips' fold ids are needed")

    def fit(train: np.ndarray, val: np.ndarray, test: np.ndarray):
        fold_data = data
        if finetuned is not None:
            vectors = finetuned.folds[held_out_fold(fold, test, finetuned.folds)]
            fold_data = fold_data.with_text(finetuned.text_input(vectors.vectors))
        if lexical:
            vocab = build_vocabulary([sentences[i] for i in train], min_count=cfg.lexical_min_count)
            fold_data = fold_data.with_tokens(token_matrix(sentences, vocab))
        net, summary = train_model(variant, fold_data, train, val, cfg, seed)
        return predict(net, fold_data, val), predict(net, fold_data, test), summary

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


@dataclass(frozen=True)
class CandidateGrid:
    """What nested selection chooses among for the neural selector: a net for every (context
    window, lexical features) pair, its scores blended with the finetuned head at every weight, its
    decisions made by every threshold rule; a setting without candidates keeps its configured value.

    The cross-validated runs (rule keyclips_neural_*, :func:`net_candidates`) and the deployed
    selector (cookproc.keyclips.deploy.train_selector) both build theirs with :meth:`from_config`,
    so the deployed model chooses among exactly the candidates of its Table 4 row, in the same order
    (which breaks ties).
    """

    context_windows: tuple[int, ...]
    lexical: tuple[bool, ...]
    head_weights: tuple[float, ...]
    threshold_metrics: tuple[str, ...]

    @classmethod
    def from_config(cls, candidates: Mapping[str, Sequence] | None, *, context_window: int, lexical: bool,
                    head_weight: float, threshold_metric: str) -> "CandidateGrid":
        """The grid of keyclips.neural.selection.candidates, each unset (or null) set its single value."""
        candidates = candidates or {}
        return cls(tuple(int(w) for w in candidates.get("context_window") or [context_window]),
                   tuple(bool(x) for x in candidates.get("lexical") or [lexical]),
                   tuple(candidates.get("head_weight") or [head_weight]),
                   tuple(candidates.get("threshold_metric") or [threshold_metric]))

    def nets(self) -> list[dict]:
        """The settings of each net to train: context windows outer, lexical flags inner."""
        return candidate_grid({"context_window": self.context_windows, "lexical": self.lexical})


@dataclass
class NetCandidate:
    """One way to build and train the net, a candidate of nested selection: its settings (recorded as
    chosen), training config and sentence input (frozen vectors, or per-fold finetuned ones)."""

    settings: dict
    cfg: KeyClipTrainConfig
    text: np.ndarray | None = None
    finetuned: FinetunedSentences | None = None


def net_candidates(variant: str, cfg: KeyClipTrainConfig, grid: CandidateGrid,
                   text_input: Callable[[np.ndarray, int], np.ndarray], frozen: np.ndarray | None = None,
                   finetuned: dict[int, FoldVectors] | None = None) -> list[NetCandidate]:
    """A net for each of ``grid``'s (context window, lexical features) pairs, for the variants that
    read sentences.

    ``text_input(vectors, context_window)`` builds the net's sentence input; ``frozen`` or ``finetuned``
    are the vectors. The visual variant reads no sentences: it has one candidate.
    """
    if variant == "visual":
        return [NetCandidate({}, cfg)]
    if (frozen is None) == (finetuned is None):
        raise ValueError("sentence candidates need either frozen or per-fold finetuned vectors")
    out = []
    for settings in grid.nets():
        def build(vectors, window=settings["context_window"]):
            return text_input(vectors, window)
        out.append(NetCandidate(settings, dataclasses.replace(cfg, lexical=settings["lexical"]),
                                text=build(frozen) if frozen is not None else None,
                                finetuned=FinetunedSentences(finetuned, build) if finetuned is not None else None))
    return out


def run_nested_neural(variant: str, clips: pd.DataFrame, folds: pd.DataFrame, nets: Sequence[NetCandidate],
                      visual: VisualSets | None, seed: int, head_weights: Sequence[float],
                      threshold_metrics: Sequence[str], objective: str = "f1_accuracy") -> CVResult:
    """Cross-validate the net, each outer fold choosing among ``nets`` x ``head_weights`` (with finetuned
    vectors) x ``threshold_metrics`` on its inner-validation recipes (nested selection)."""
    if not nets:
        raise ValueError("no net candidates")
    fold, inner = clip_folds(folds, clips)
    labels = clips["is_key"].to_numpy().astype(bool)
    sentences = clips["sentence"].astype(str).tolist()
    finetuned_sets = {id(n.finetuned.folds) for n in nets if n.finetuned is not None}
    if len(finetuned_sets) > 1 or (finetuned_sets and any(n.finetuned is None for n in nets)):
        raise ValueError("every net candidate must read the same per-fold finetuned vectors (their heads are shared)")
    fits = []
    for net in nets:
        text = net.text
        if net.finetuned is not None:  # a placeholder of the right width; every fold replaces it with its finetuned vectors
            some = next(iter(net.finetuned.folds.values()))
            text = net.finetuned.text_input(np.zeros_like(some.vectors))
        data = neural_inputs(variant, text, visual, labels)
        fits.append((net.settings, neural_fit_predict(variant, data, net.cfg, seed, sentences, net.finetuned, fold)))
    heads = ({f: v.head for f, v in nets[0].finetuned.folds.items()} if nets[0].finetuned is not None else None)
    candidates = candidates_with_heads(fits, fold, heads, head_weights)
    return nested_cross_validate(fold, inner, labels, candidates, threshold_metrics,
                                 clips["recipe"].astype(str).to_numpy(), objective)


def run_neural(variant: str, clips: pd.DataFrame, folds: pd.DataFrame, text: np.ndarray | None,
               visual: VisualSets | None, cfg: KeyClipTrainConfig, seed: int,
               finetuned: FinetunedSentences | None = None) -> CVResult:
    """Cross-validate one variant of the key-clip net with one seed and fixed settings (``text`` is
    ignored with ``finetuned``)."""
    net = NetCandidate({}, cfg, text=None if finetuned is not None else text, finetuned=finetuned)
    return run_nested_neural(variant, clips, folds, [net], visual, seed,
                             [finetuned.head_weight] if finetuned is not None else [0.0], [cfg.threshold_metric])
