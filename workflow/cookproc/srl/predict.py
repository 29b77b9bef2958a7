"""Labelling sentences with a backend: the trained tagger or the spaCy rules.

Both tokenise and parse with spaCy (``syntax.parse_texts``) and take the same predicates, so the
backends differ only in how they find the arguments.
"""
from __future__ import annotations

import logging
import pickle
import time
from pathlib import Path
from typing import Sequence

import torch

from cookproc.core.errors import InputError
from cookproc.srl import spacy_backend, syntax
from cookproc.srl.bio import bio_to_spans
from cookproc.srl.word_encoder import WordEncoder
from cookproc.srl.parses import Chunk, chunks_from_tags
from cookproc.srl.tagger import Tagger

log = logging.getLogger(__name__)


def load_tagger(path: str | Path) -> Tagger:
    """Load a tagger written by ``training.save_tagger``. Only tensors and plain values are
    unpickled (``weights_only=True``), so a file crafted to run code is refused, not run."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        detail = " ".join(str(exc).split())[:300]
        raise InputError(path, "refused: not a tagger of tensors and plain values (the safe loader, "
                               f"torch.load(weights_only=True), says: {detail}); rebuild it with rule train_srl"
                         ) from None
    except (RuntimeError, EOFError, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise InputError(path, f"unreadable tagger file ({' '.join(str(exc).split())[:300]}); "
                               "rebuild it with rule train_srl") from None
    try:
        return Tagger.from_state(state)
    except (ValueError, KeyError, TypeError, AttributeError, RuntimeError) as exc:
        raise InputError(path, f"not a cookproc SRL tagger: {exc}") from None


def label_with_tagger(texts: Sequence[str], tagger: Tagger, *, encoder: WordEncoder | None = None,
                      device: str = "cpu", batch_size: int = 128) -> list[list[list[Chunk]]]:
    """Frames of each sentence (one per predicate, in word order)."""
    t0 = time.perf_counter()
    parsed = syntax.parse_texts(texts)
    log.info("spaCy: %d sentences in %.1fs", len(texts), time.perf_counter() - t0)
    encoder = encoder or WordEncoder(tagger.encoder, device=device)
    t0 = time.perf_counter()
    features = encoder.encode([p.words for p in parsed])
    log.info("encoder: %d sentences in %.1fs", len(texts), time.perf_counter() - t0)
    instances, owner = [], []
    for s, p in enumerate(parsed):
        for pred in p.predicates(tagger.predicate_tags):
            instances.append(tagger.instance(s, p, pred))
            owner.append(s)
    t0 = time.perf_counter()
    results = tagger.predict(instances, features, batch_size=batch_size, device=device)
    log.info("tagger: %d predicates in %.1fs", len(instances), time.perf_counter() - t0)
    parses: list[list[list[Chunk]]] = [[] for _ in texts]
    for s, (tags, probs) in zip(owner, results):
        parses[s].append(chunks_from_tags(parsed[s].words, bio_to_spans(tags), probs))
    return parses


def label_with_spacy(texts: Sequence[str], *, predicate_tags: Sequence[str] = syntax.DEFAULT_PREDICATE_TAGS
                     ) -> list[list[list[Chunk]]]:
    parsed = syntax.parse_texts(texts)
    return [spacy_backend.parse_of(p, p.predicates(predicate_tags)) for p in parsed]
