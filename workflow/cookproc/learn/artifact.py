"""Deployed models: the shape the key-clip selector (cookproc.keyclips.deploy) and the tuple
extractor (cookproc.supervised.deploy) share, written once (torch-free).

A deployed model is a folder under results/models/ built from every benchmark recipe: a
``model.json`` (format and version, the settings that built it, the code fingerprint, a summary of
the training and inner-validation recipes), the files of its kind, and a ``MODEL_CARD.md``.
:class:`ModelFormat` writes such a folder atomically and reads it back checked: an unknown format
or version, a missing file or model.json key, or a spec that is not this code's is refused, and so
is a folder holding pickles or code, before anything else is read. The card's common sentences and
its layout are here too, so that both cards say the same thing the same way.
"""
from __future__ import annotations

import dataclasses
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from cookproc.core.artifacts import building_folder, read_model_json, refuse_unsafe_model_files
from cookproc.core.errors import InputError


@dataclass(frozen=True)
class ModelFormat:
    """One kind of deployed model folder."""

    name: str  # model.json's "format"
    #: Bumped whenever the files or the meaning of a field change: folders of another version are refused.
    version: int
    kind: str  # the model in messages ("key-clip selector")
    rule: str  # the workflow rule that builds it
    rebuild: str  # what a folder of another version needs ("train the selector again")
    files: tuple[str, ...]  # what every folder holds
    required: tuple[str, ...] = ()  # model.json keys the loader and the card read
    spec: type | None = None  # a dataclass that model.json's "spec" must match field for field
    #: Files refused by suffix that their loader reads without running code (torch.load(weights_only=True)).
    trusted: tuple[str, ...] = ()

    def stamp(self, meta: Mapping) -> dict:
        """``meta`` with this format and version."""
        return {**meta, "format": self.name, "format_version": self.version}

    @contextmanager
    def saving(self, out_dir: str | os.PathLike, meta: Mapping,
               card: str | Callable[[dict], str] | None = None) -> Iterator[tuple[Path, dict]]:
        """A fresh folder beside ``out_dir`` and model.json's content (``meta`` stamped with the format)
        for the block to fill; then model.json and MODEL_CARD.md (``card``: its text, or a function of
        the final model.json) are written and the folder replaces ``out_dir``. A failed block leaves
        nothing."""
        with building_folder(out_dir) as tmp:
            meta = self.stamp(meta)
            yield tmp, meta
            (tmp / "model.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            if card is not None:
                (tmp / "MODEL_CARD.md").write_text(card(meta) if callable(card) else card, encoding="utf-8")

    def read(self, path: str | os.PathLike) -> dict:
        """The folder's model.json, checked for format, version, files, keys and spec (nothing else read)."""
        meta_path = Path(path) / "model.json"
        meta = read_model_json(path, kind=self.kind, files=self.files, format=self.name, version=self.version,
                               rebuild=self.rebuild)
        for key in self.required:
            if key not in meta:
                raise InputError(meta_path, f"no {key!r}: not written by this workflow's rule {self.rule}")
        if self.spec is not None:
            fields = {f.name for f in dataclasses.fields(self.spec)}
            spec = meta.get("spec")
            got = set(spec) if isinstance(spec, dict) else set()
            if not isinstance(spec, dict) or got != fields:
                raise InputError(meta_path, f"spec does not match this code: missing {sorted(fields - got)}, "
                                            f"unknown {sorted(got - fields)}")
        return meta

    def open(self, path: str | os.PathLike) -> tuple[Path, dict]:
        """The folder and its checked model.json, once the folder is known to hold no pickles and no
        code (:func:`cookproc.core.artifacts.refuse_unsafe_model_files`): read its files after this."""
        path = Path(path)
        meta = self.read(path)
        refuse_unsafe_model_files(path, trusted=self.trusted)
        return path, meta


class DeployedModel:
    """A loaded deployed model: its folder (``path``) and model.json (``meta``)."""

    path: Path
    meta: dict

    @property
    def name(self) -> str:
        return self.path.name


def training_summary(clips: pd.DataFrame, inner: np.ndarray) -> dict:
    """model.json's account of the clips a model was built from (``inner``: the inner-validation
    clips): counts, and which recipes fitted it and which chose its settings, by name (sorted)."""
    inner = np.asarray(inner, dtype=bool)
    summary = {"n_clips": len(clips), "n_videos": int(clips["video_id"].nunique()),
               "n_recipes": int(clips["recipe"].nunique()) if "recipe" in clips else None,
               "n_train": int((~inner).sum()), "n_val": int(inner.sum())}
    if "recipe" in clips:
        recipes = clips["recipe"].astype(str).to_numpy()
        summary.update(train_recipes=sorted(set(recipes[~inner].tolist())),
                       val_recipes=sorted(set(recipes[inner].tolist())))
    return summary


# The model card.

def card_text(name: str, intro: str, sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    """MODEL_CARD.md: the title, ``intro``, then each section's heading and paragraphs (a paragraph
    may be several lines: a table, a list)."""
    blocks = [f"# Model card: {name}", intro]
    for title, paragraphs in sections:
        blocks += [f"## {title}", *paragraphs]
    return "\n\n".join(blocks) + "\n"


def _recipes(training: Mapping, key: str) -> str:
    names = training.get(key)
    return f"{len(names)} recipes" if names else "recipes"


def training_clips(training: Mapping) -> str:
    """"The N clips of the V benchmark videos (R recipes)" (``training``: :func:`training_summary`)."""
    return (f"The {training['n_clips']} clips of the {training['n_videos']} benchmark videos"
            + (f" ({training['n_recipes']} recipes)" if training.get("n_recipes") else ""))


def training_split(training: Mapping) -> str:
    """How many clips of how many recipes fitted the weights, and how many chose the settings."""
    return (f"{training['n_train']} clips of the {_recipes(training, 'train_recipes')} outside inner validation. "
            f"The {training['n_val']} clips of the {_recipes(training, 'val_recipes')} of inner validation")


def validation_recipes(training: Mapping) -> str:
    """The end of a sentence: the inner-validation recipes, by name when known."""
    names = training.get("val_recipes")
    return f": {', '.join(names)}." if names else "."


def no_held_out_score(what: str) -> str:
    return (f"No held-out score of {what} exists (every recipe took part in building it): the numbers above "
            "estimate how it does on unseen recipes.")
