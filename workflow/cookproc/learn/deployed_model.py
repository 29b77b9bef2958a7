"""Deployed models: the shape the key-clip selector (cookproc.keyclips.deploy) and the tuple
extractor (cookproc.supervised.deploy) share, written once (torch-free).

A deployed model is a folder under results/models/ built from every benchmark recipe: a
``model.json`` (format and version, the settings that built it, the code fingerprint, a summary of
the training and inner-validation recipes), the files of its kind, and a ``MODEL_CARD.md``.
:class:`ModelFormat` writes such a folder atomically and reads it back checked: an unknown format
or version, a missing file or model.json key, or a spec that is not this code's is refused, and so
is a folder holding pickles or code, before anything else is read. The model card's template is
here too (its layout and both kinds' prose; the deploy modules give the facts), so that both
cards say the same thing the same way.
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

from cookproc.core.model_folders import building_folder, read_model_json, refuse_unsafe_model_files
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
        code (:func:`cookproc.core.model_folders.refuse_unsafe_model_files`): read its files after this."""
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


# The model card: one layout (:func:`card_text`), the prose of both kinds of model
# (:data:`CARDS`), filled from facts the deploy modules compute (:func:`model_card`).

#: Each kind of model's card: its intro, then each section's paragraphs, every one a format string
#: of the model's facts; a paragraph that fills to nothing (an optional sentence without its fact)
#: is left out. ``{clips}``, ``{split}``, ``{validation_recipes}`` and ``{path}`` come from model.json
#: (:func:`training_facts`).
CARDS = {
    "key-clip selector": (
        "Key-clip selector of the cookproc workflow (the neural text variant, `neural-text` in Table 4): the top "
        "{finetuned_layers} layers of the sentence encoder fine-tuned on key-clip labels, a key-clip net over the "
        "finetuned sentence vectors with {context_window} neighbouring sentence(s) each side{layout}{lexical}, "
        "blended with the finetuned encoder's head (weight {head_weight}).",
        [("Training data", [
            "{clips}, in two parts. The weights (fine-tuned encoder layers, head and net) were fitted on the {split} "
            "(the folds file's `inner_val` flag) trained no weight: they chose the early-stopping epoch, the settings "
            "among the configured candidates, if any, and the decision threshold ({threshold}, maximising "
            "{threshold_metric}){validation_recipes} Seed {seed}. Training took {seconds} s (fine-tuning "
            "{finetune_seconds} s) on `{device}`."]),
         ("Cross-validated scores", [
             "The same configuration and seed under the benchmark's leave-recipes-out cross-validation (every clip "
             "scored by a model that never saw its recipe; this seed's run, one of the runs whose mean is Table 4's "
             "row, percent):",
             "{table}", "{intervals}",
             "No held-out score of this very model exists (every recipe took part in building it): the numbers above "
             "estimate how it does on unseen recipes. {selection} The fine-tuning (layers, epochs), the net's size and "
             "the candidate sets themselves were fixed beforehand, some of them by comparing an earlier run's "
             "out-of-fold scores on the test folds (docs/benchmarks.md): the estimate may be optimistic by what those "
             "choices gained."]),
         ("Use", [
             "`cookproc extract talk.vtt --keyclips {path}`, or the workflow's `procedures.keyclip_model` "
             "(results/procedures/<name>.md). Clips must be cut as in training: one transcript sentence, or one cue "
             "of unpunctuated captions."]),
         ("Provenance", [
             "Format {format} version {format_version}; code fingerprint `{code}`; the workflow settings used are in "
             "model.json (`config`), the scores above in its `crossval`."])]),
    "tuple extractor": (
        "Tuple extractor of the cookproc workflow (`supervised-text` in Table 5): verb and argument candidates from "
        "the sentence, its SRL parses (`{srl_backend}` backend) and the previous clips, and the verbs of a clip-level "
        "verb classifier, ranked by gradient boosting; no video input.",
        [("Training data", [
            "{clips} and their gold verbs and arguments, used as a cross-validation fold uses its training recipes, in "
            "two parts. The boosting models and the verb classifier are fitted on the {split} fit nothing: they "
            "choose the decision thresholds and, among the configured candidates, the settings (nested selection)"
            "{validation_recipes} No pickled model is stored: the choices and the verb classifier's probabilities on "
            "the benchmark clips are stored as data, and each run fits the chosen boosting models and the classifier "
            "that scores the new clips again (seeded, deterministic). Building the artifact took {seconds} s; the "
            "choices:",
            "{choices}"]),
         ("Cross-validated scores", [
             "The same configuration under the benchmark's leave-recipes-out cross-validation (the oracle-key-clip row "
             "of Table 5; model.json's `crossval`), percent, with 95% bootstrap intervals ({unit}s resampled, "
             "{resamples} resamples):",
             "{table}",
             "No held-out score of the artifact itself exists (every recipe took part in building it): the numbers "
             "above estimate how it does on unseen recipes. Its settings were fixed beforehand except those the "
             "configuration lists as candidates of nested selection; some of the fixed ones (the verb classifier's C "
             "and class floor, the candidate sets' ranges) were chosen by comparing an earlier run's out-of-fold "
             "scores on the test folds (docs/benchmarks.md), so the estimate may be optimistic by what those choices "
             "gained."]),
         ("Use", [
             "Key clips come from a key-clip selector (`procedures.keyclip_model`); this extractor gives every clip's "
             "verbs and arguments:",
             "    snakemake -c2 results/procedures/<name>.json --config 'procedures={{tuple_model: {path}}}'\n"
             "    cookproc extract talk.srt --tuples {path}"])]),
    "step model": (
        "Step model of the cookproc workflow (`{name}` in results/people.md): which clips of a transcript are steps, "
        "then the verbs and nouns a person would write for each and a short text, learnt from YouCook2's human step "
        "captions (cookproc.captions.model). A step is a sentence that gives an instruction; its verbs come from the "
        "caption vocabulary or its own words, its nouns only from what its run of sentences says.",
        [("Training data", [
            "The {n_videos} YouCook2 videos with a transcript and captions outside the people's test set "
            "({n_benchmark} of them benchmark videos), {n_captions} captions aligned to their {n_sentences} transcript "
            "sentences. The key-step selector learnt from {selector_labels}. Fitted on the {n_fit} videos outside inner "
            "validation; the {n_validation} inner-validation videos (SHA-1 of the id starting with 4 or 5) fitted "
            "nothing: they chose the verb threshold ({verb_threshold}), the step threshold ({step_threshold}) and the "
            "noun threshold ({noun_threshold}). "
            "Caption vocabulary: {verb_vocabulary} verbs. Its training time is in "
            "benchmarks/captions/train_step_model/ (docs/benchmarks.md)."]),
         ("Inner-validation scores", [
             "Mean per-video scores on the inner-validation videos at the chosen settings, percent (the choice was made "
             "on these, so they are optimistic):", "{validation_table}"]),
         ("Scores against people", ["{people}"]),
         ("Scores on the benchmark", ["{benchmark}"]),
         ("Use", [
             "The default of `cookproc extract` and of the workflow's `procedures.step_model`; "
             "`cookproc extract talk.srt --steps {path}`."]),
         ("Provenance", [
             "Format {format} version {format_version}; code fingerprint `{code}`; its settings are in model.json "
             "(`settings`), the inner-validation grid in its `validation`."])]),
}
#: The parts of a card that depend on a fact: (the text where the fact holds, the text where it does
#: not); a fact that is a mapping fills its text's fields.
CARD_CLAUSES = {
    "layout": (", the clip's position in the video", ""),
    "lexical": (" and a term vocabulary", ""),
    "intervals": ("95% bootstrap intervals of that run ({unit}s resampled, {resamples} resamples): {metrics}.", ""),
    "people": (
        "On the {n_test} videos of the people's test set (never trained, counted or chosen on), against their "
        "captions, mean per video with 95% bootstrap intervals over videos ({resamples} resamples), percent "
        "(results/people.md has every system):\n\n{table}",
        "Not scored against people yet: results/people.md (rule people_table) scores it; rule deploy_step_model "
        "writes this card again with those scores."),
    "benchmark": (
        "This model learnt from the benchmark videos' captions (and, trained on the benchmark's labels, their "
        "key clips), so its key steps on the benchmark are no held-out score. The same model trained on the "
        "YouCook2 videos outside the benchmark only (not leave-recipes-out: they show the same 89 recipes; a "
        "separate row, never in Table 4), its steps taken as key clips, on the {n_videos} benchmark videos, "
        "percent:\n\n{table}\n\nA step model marks one clip per verb it writes, so its recall of the "
        "benchmark's key clips is low by design.",
        "Not scored on the benchmark (rule step_model_on_benchmark, rules/captions.smk)."),
    "selection": (
        "Its {names} were chosen among the configured candidates on the inner-validation recipes only ({chosen}; "
        "{objective} {value}, each candidate's threshold chosen on one half of those recipes and scored on the "
        "other), as every cross-validation fold above chose its own (nested selection).",
        "Its settings (context window, head weight, threshold rule, fine-tuned layers) were fixed in the config, not "
        "selected on inner-validation recipes."),
}


def card_text(name: str, intro: str, sections: Sequence[tuple[str, Sequence[str]]]) -> str:
    """MODEL_CARD.md: the title, ``intro``, then each section's heading and paragraphs (a paragraph
    may be several lines: a table, a list)."""
    blocks = [f"# Model card: {name}", intro]
    for title, paragraphs in sections:
        blocks += [f"## {title}", *paragraphs]
    return "\n\n".join(blocks) + "\n"


def model_card(kind: str, name: str, meta: Mapping, facts: Mapping) -> str:
    """MODEL_CARD.md of a model of ``kind`` (:data:`CARDS`): the template filled with ``facts`` and
    what model.json (``meta``) says of its training data. A fact named in :data:`CARD_CLAUSES`
    picks its clause's text (a mapping fills it; None or False gives the other text)."""
    values = {**training_facts(name, meta), **facts}
    for key, (given, absent) in CARD_CLAUSES.items():
        if key in values:
            fact = values[key]
            values[key] = given.format(**fact) if isinstance(fact, Mapping) else (given if fact else absent)
    intro, sections = CARDS[kind]
    return card_text(name, intro.format(**values),
                     [(title, [text for text in (p.format(**values) for p in paragraphs) if text])
                      for title, paragraphs in sections])


def training_facts(name: str, meta: Mapping) -> dict:
    """What every card says of the model's training data and place, from model.json (the
    benchmark's clips and recipes for the models trained on them)."""
    training = meta["training"]
    facts = {"path": meta.get("path", f"results/models/{name}"), "format": meta.get("format"),
             "format_version": meta.get("format_version"), "code": meta.get("code")}
    if "n_clips" in training:
        facts.update(clips=training_clips(training), split=training_split(training),
                     validation_recipes=validation_recipes(training))
    return facts


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
