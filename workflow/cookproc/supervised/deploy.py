"""The supervised tuple extractor trained on every benchmark recipe, for new transcripts.

The text-only extractor of cookproc.supervised (`supervised-text` in Table 5: candidates from the
sentence, its SRL parses and the previous clips, the clip-level verb classifier, gradient boosting;
no TSM labels), applied to sentences that are not in the benchmark.

No model is pickled. An artifact (:func:`save_extractor`, read back by :meth:`TupleExtractor.load`)
holds what training reads: the benchmark's sentences, gold items, folds and inner-validation flags
(``training.parquet``), their SRL parses (``srl.parquet``), their frozen sentence vectors
(``vectors.parquet``, when the verb classifier reads them) and the settings (``model.json``, with
the code fingerprint). :meth:`TupleExtractor.extract` scores the new clips as the held-out fold of
cross-validation (:func:`cookproc.supervised.crossval.cross_validate_field`): the classifiers are
fitted on the benchmark's training recipes, the selection thresholds and the nested selection's
choices are made on its inner-validation recipes, exactly as a cross-validation fold is scored.

What of that does not depend on the new clips is computed once, when the artifact is built
(:func:`fit_once`), and stored as data: each field's candidate of nested selection, and the verb
classifier's probabilities on the benchmark clips (``classifier.parquet``; cross-fitted, five
classifier fits). A call then fits only the chosen boosting model of each field and the verb
classifier that scores the new clips, and gives the same tuples as fitting everything again
(tested). The fits are seeded and their solvers deterministic, so the same call gives the same
tuples; a clip's tuples depend on its own video's clips only, never on the other files of a call.
Torch-free: the new sentences' vectors and SRL parses are computed by the caller
(cookproc.app.extractors). The folder's shape (format and version, checks on load, atomic save,
the card's template) is cookproc.learn.deployed_model's, shared with the key-clip selector.
"""
from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.formatting import format_number, markdown_table
from cookproc.core.parquet_io import copy_parquet, read_table, write_parquet
from cookproc.learn.deployed_model import DeployedModel, ModelFormat
from cookproc.learn.deployed_model import model_card as card
from cookproc.learn.sentence_vectors import clip_text_features
from cookproc.scoring.similarity import SimilarityCache
from cookproc.supervised import extract
from cookproc.supervised.clipfeatures import read_srl
from cookproc.supervised.crossval import cross_validate_field
from cookproc.supervised.verbclf import KnownProbabilities

log = logging.getLogger(__name__)

#: The trained SRL tagger, when the extractor's parses come from it (srl_backend tagger); read with
#: torch.load(weights_only=True), which unpickles no code.
TAGGER = "tagger.pt"
ARTIFACT = ModelFormat("cookproc.tuple-extractor", 2, kind="tuple extractor", rule="deploy_tuple_extractor",
                       rebuild="build the extractor again", files=("model.json", "training.parquet", "srl.parquet"),
                       required=("settings", "srl_backend", "sentence_vectors", "lexicon", "fitted"),
                       trusted=(TAGGER,))
#: The verb classifier's probabilities on the benchmark clips, when the extractor has the classifier.
CLASSIFIER = "classifier.parquet"
#: The verb classifier's sentence vectors, when it reads them.
VECTORS = "vectors.parquet"
#: Video ids of new clips are prefixed so that they can never meet a benchmark video's.
NEW_VIDEO = "new:"

TRAINING = pa.schema([pa.field(name, kind, nullable=False) for name, kind in [
    ("video_id", pa.string()), ("clip_idx", pa.int32()), ("recipe", pa.string()), ("sentence", pa.string()),
    ("gold_verbs", pa.list_(pa.string())), ("gold_args", pa.list_(pa.string())), ("fold", pa.int32()),
    ("inner_val", pa.bool_())]])
#: One row per benchmark clip (clip order): the verb classifier's probability of each of its verbs
#: (model.json's ``fitted.classifier_verbs``, in that order).
CLASSIFIER_TABLE = pa.schema([pa.field(name, kind, nullable=False) for name, kind in [
    ("video_id", pa.string()), ("clip_idx", pa.int32()), ("probabilities", pa.list_(pa.float64()))]])
FIELDS = ("verbs", "arguments")


def training_table(clips: pd.DataFrame, fold: np.ndarray, inner: np.ndarray) -> pa.Table:
    """The benchmark clips as the artifact keeps them (clip order), with their folds."""
    return pa.table({
        "video_id": pa.array(clips["video_id"].astype(str).tolist(), pa.string()),
        "clip_idx": pa.array(clips["clip_idx"].to_numpy().astype(np.int32)),
        "recipe": pa.array(clips["recipe"].astype(str).tolist(), pa.string()),
        "sentence": pa.array(clips["sentence"].astype(str).tolist(), pa.string()),
        "gold_verbs": pa.array([list(v) for v in clips["gold_verbs"]], pa.list_(pa.string())),
        "gold_args": pa.array([list(a) for a in clips["gold_args"]], pa.list_(pa.string())),
        "fold": pa.array(np.asarray(fold).astype(np.int32)),
        "inner_val": pa.array(np.asarray(inner).astype(bool)),
    }, schema=TRAINING)


def save_extractor(out_dir: str | os.PathLike, training: pa.Table, srl: str | os.PathLike,
                   vectors: str | os.PathLike | None, meta: dict, card: Callable[[dict], str] | None = None,
                   tagger: str | os.PathLike | None = None, *, lemma=None) -> None:
    """Write the artifact folder atomically (built beside ``out_dir``, then renamed into place):
    ``training`` (:data:`TRAINING`), copies of the SRL parse table, of the sentence-vector table of
    the same clips when the verb classifier reads them, and of the SRL tagger when the parses come
    from it (new sentences must be labelled alike), and what :func:`fit_once` computes from them;
    ``meta``: model.json's content; ``card``: MODEL_CARD.md's text from the final model.json."""
    with ARTIFACT.saving(out_dir, meta, card) as (tmp, meta):
        write_parquet(training, tmp / "training.parquet", TRAINING)
        # Written again, not byte-copied: a file inside the folder must carry this job's provenance.
        copy_parquet(srl, tmp / "srl.parquet")
        if vectors is not None:
            copy_parquet(vectors, tmp / VECTORS)
        if tagger is not None:
            shutil.copyfile(tagger, tmp / TAGGER)
        model = TupleExtractor(tmp, meta, _training_frame(tmp / "training.parquet"), read_srl(tmp / "srl.parquet"),
                               None if vectors is None else clip_text_features(tmp / VECTORS, training.to_pandas()))
        fitted, probabilities = fit_once(model, lemma=lemma)
        if probabilities is not None:
            write_parquet(pa.table({"video_id": training.column("video_id"), "clip_idx": training.column("clip_idx"),
                                    "probabilities": pa.array(list(probabilities), pa.list_(pa.float64()))},
                                   schema=CLASSIFIER_TABLE), tmp / CLASSIFIER, CLASSIFIER_TABLE)
        meta["fitted"] = fitted


def _check_files(path: Path, meta: dict) -> None:
    """The files model.json's settings call for."""
    if meta["sentence_vectors"] and not (path / VECTORS).exists():
        raise InputError(path, f"incomplete tuple extractor: missing {VECTORS}")
    if meta["srl_backend"] == "tagger" and not (path / TAGGER).exists():
        raise InputError(path, f"incomplete tuple extractor: missing {TAGGER} (its SRL parses come from the tagger)")
    if meta["fitted"].get("classifier_verbs") is not None and not (path / CLASSIFIER).exists():
        raise InputError(path, f"incomplete tuple extractor: missing {CLASSIFIER} (its verb classifier's "
                               "probabilities on the benchmark clips)")


def _training_frame(path: Path) -> pd.DataFrame:
    training = read_table(path).to_pandas()
    missing = [c for c in TRAINING.names if c not in training.columns]
    if missing:
        raise InputError(path, f"missing columns {missing}")
    training["gold_verbs"] = [list(v) for v in training["gold_verbs"]]
    training["gold_args"] = [list(a) for a in training["gold_args"]]
    return training


def _classifier_probabilities(path: Path, training: pd.DataFrame, verbs: list[str]) -> np.ndarray:
    """classifier.parquet as a (benchmark clips x verbs) matrix, checked against training.parquet."""
    table = read_table(path)
    keys = list(zip(table.column("video_id").to_pylist(), table.column("clip_idx").to_pylist()))
    if keys != list(zip(training["video_id"], training["clip_idx"].astype(int))):
        raise InputError(path, "its clips are not training.parquet's, in its order: build the extractor again")
    values = table.column("probabilities").combine_chunks()
    widths = set(np.diff(values.offsets.to_numpy()).tolist())
    if widths != {len(verbs)}:
        raise InputError(path, f"rows of {sorted(widths)} probabilities; model.json lists {len(verbs)} verbs")
    return values.flatten().to_numpy().reshape(len(training), len(verbs))


def _choice(info: dict, settings: dict) -> dict:
    """A field's model candidate as one fold's info records it (the boosting settings, and whether the
    verb classifier joins when that was a choice)."""
    return dict(info.get("selected") or {k: settings[k] for k in extract.BOOSTING})


def fit_once(model: "TupleExtractor", *, lemma=None) -> tuple[dict, np.ndarray | None]:
    """What scoring new clips computes from the benchmark alone, done once when the artifact is built:
    each field's candidate of nested selection, chosen on the inner-validation recipes, and the verb
    classifier's probabilities on the benchmark clips (None without the classifier). Neither reads the
    new clips, so :meth:`TupleExtractor.extract` can take them as given. A copy of the first benchmark
    video stands for the new clips (the held-out fold needs candidates to score); nothing fitted reads it."""
    start = time.perf_counter()
    record: dict = {}
    train = model.training
    first = np.flatnonzero(train["video_id"].to_numpy() == train["video_id"].iloc[0])
    parses = [model.parses.get((train["video_id"].iloc[i], int(train["clip_idx"].iloc[i])), []) for i in first]
    _, info = model._score(train["sentence"].iloc[first].tolist(), ["placeholder"] * len(first), parses,
                           None if model.vectors is None else model.vectors[first], lemma=lemma, record=record)
    settings = model.meta["settings"]
    fitted = {"choices": {name: _choice(info[name], settings) for name in FIELDS},
              "thresholds": {name: info[name]["threshold"] for name in FIELDS},
              "classifier_verbs": record.get("verbs")}
    # Not in model.json: the same inputs must give the same files.
    log.info("fitted once in %.1f s: %s", time.perf_counter() - start,
             {k: v for k, v in fitted.items() if k != "classifier_verbs"})
    probabilities = record.get("probabilities")
    return fitted, None if probabilities is None else probabilities[:len(model.training)]


class TupleExtractor(DeployedModel):
    """A saved text-only supervised extractor: verbs and arguments of new clips."""

    def __init__(self, path: Path, meta: dict, training: pd.DataFrame, parses: dict, vectors: np.ndarray | None,
                 classifier_probabilities: np.ndarray | None = None):
        self.path, self.meta, self.training, self.parses, self.vectors = path, meta, training, parses, vectors
        self.classifier_probabilities = classifier_probabilities

    @property
    def srl_backend(self) -> str:
        return self.meta["srl_backend"]

    @property
    def tagger_model(self) -> Path | None:
        """The SRL tagger that labels new sentences (srl_backend tagger), or None (spaCy)."""
        return self.path / TAGGER if self.srl_backend == "tagger" else None

    @property
    def encoder(self) -> dict | None:
        """How the new sentences' vectors must be computed (the frozen encoder's settings), or None."""
        return self.meta.get("encoder") if self.meta["sentence_vectors"] else None

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TupleExtractor":
        path, meta = ARTIFACT.open(path)
        _check_files(path, meta)
        training = _training_frame(path / "training.parquet")
        vectors = clip_text_features(path / VECTORS, training) if meta["sentence_vectors"] else None
        verbs = meta["fitted"].get("classifier_verbs")
        known = None if verbs is None else _classifier_probabilities(path / CLASSIFIER, training, verbs)
        return cls(path, meta, training, read_srl(path / "srl.parquet"), vectors, known)

    def extract(self, sentences: Sequence[str], videos: Sequence, parses: Sequence[list[list[dict]]],
                vectors: np.ndarray | None = None, *, lemma=None) -> tuple[list[list[str]], list[list[str]]]:
        """Verbs and arguments of each new clip (one sentence each, a video's clips consecutive and
        in time order). ``parses``: each sentence's SRL parses from the artifact's backend, as
        :func:`cookproc.supervised.clipfeatures.read_srl` gives them; ``vectors``: the sentences'
        frozen vectors when the artifact's verb classifier reads them (:attr:`encoder`)."""
        if (vectors is None) != (self.vectors is None):
            raise ValueError("the extractor's verb classifier reads sentence vectors: give them"
                             if vectors is None else "this extractor reads no sentence vectors")
        if len(sentences) == 0:
            return [], []
        preds, info = self._score(sentences, videos, parses, vectors, lemma=lemma, fitted=self.meta["fitted"])
        log.info("%s: %d new clips; verbs %s, arguments %s", self.name, len(sentences),
                 {k: v for k, v in info["verbs"].items() if k != "candidates"},
                 {k: v for k, v in info["arguments"].items() if k != "candidates"})
        first = len(self.training)
        return preds["verbs"][first:], preds["arguments"][first:]

    def _score(self, sentences, videos, parses, vectors, *, lemma=None, fitted: dict | None = None,
               record: dict | None = None) -> tuple[dict, dict]:
        """Predictions (benchmark and new clips, clip order) and the held-out fold's info per field.
        ``fitted`` (:func:`fit_once`): fit only each field's chosen candidate, and take the verb
        classifier's benchmark probabilities as given; None: nested selection and every fit, as the
        cross-validation runs them (the verb classifier's result then goes to ``record``)."""
        if lemma is None:
            from cookproc.data.wordnet import verb_lemma as lemma
        n_new = len(sentences)
        if len(videos) != n_new or len(parses) != n_new:
            raise ValueError(f"{n_new} sentences, {len(videos)} video ids and {len(parses)} SRL results")
        train = self.training
        held_out = int(train["fold"].max()) + 1
        video_ids = [f"{NEW_VIDEO}{v}" for v in videos]
        clip_idx = pd.Series(video_ids).groupby(video_ids, sort=False).cumcount().to_numpy()
        new = pd.DataFrame({"video_id": video_ids, "clip_idx": clip_idx.astype(np.int32),
                            "recipe": video_ids, "sentence": [str(s) for s in sentences],
                            "gold_verbs": [[] for _ in range(n_new)], "gold_args": [[] for _ in range(n_new)],
                            "fold": held_out, "inner_val": False})
        clips = pd.concat([train, new], ignore_index=True)
        all_parses = dict(self.parses)
        all_parses.update({(v, int(c)): f for v, c, f in zip(video_ids, clip_idx, parses)})
        embeddings = None if vectors is None else np.vstack([self.vectors, np.asarray(vectors, dtype=self.vectors.dtype)])
        settings = dict(self.meta["settings"])
        setups = extract.build_setups(clips, all_parses, [[] for _ in range(len(clips))], frozenset(self.meta["lexicon"]),
                                      lemma, settings, embeddings)
        classifier = setups["verbs"].classifier
        fold, inner = clips["fold"].to_numpy(), clips["inner_val"].to_numpy()
        if fitted is None:
            if classifier is not None:
                setups["verbs"] = replace(setups["verbs"], classifier=KnownProbabilities.wrap(classifier, record=record))
            preds, info = extract.run(clips, fold, inner, setups, settings, held_out=[held_out])
            return preds, {name: info[name][held_out] for name in FIELDS}
        if classifier is not None:
            if fitted["classifier_verbs"] is None:
                raise RuntimeError(f"{self.path}: the settings enable the verb classifier but none was fitted")
            setups["verbs"] = replace(setups["verbs"], classifier=KnownProbabilities.wrap(
                classifier, known=self.classifier_probabilities, known_verbs=tuple(fitted["classifier_verbs"])))
        # extract.run's loop, with each field's chosen candidate as its only one.
        group = pd.factorize(clips["video_id"], sort=True)[0]
        cache = SimilarityCache()
        preds, info = {}, {}
        for name in FIELDS:
            choice = dict(fitted["choices"][name])
            setup = setups[name] if choice.pop("verb_classifier", None) is not False else replace(setups[name],
                                                                                                   classifier=None)
            preds[name], per_fold = cross_validate_field(
                setup, fold, inner, group, seed=settings["seed"], model_params=choice, smoothing=settings["smoothing"],
                thresholds=list(settings["thresholds"]), cache=cache, held_out=[held_out])
            info[name] = per_fold[held_out]
            if info[name]["threshold"] != fitted["thresholds"][name]:
                raise RuntimeError(f"{self.path}: {name} threshold {info[name]['threshold']} differs from the "
                                   f"{fitted['thresholds'][name]} chosen when the artifact was built")
        return preds, info


def model_card(name: str, meta: dict, cells: Sequence[dict], bootstrap: dict, seconds: float) -> str:
    """MODEL_CARD.md (cookproc.learn.deployed_model's template): what the extractor is, what it is
    trained on, its cross-validated Table 5 scores with intervals (``cells``:
    :func:`cookproc.evaluation.bootstrap.oracle_cell_intervals`), and how to use it."""
    by = {(c["field"], c["metric"]): c for c in cells}
    fitted = meta["fitted"]
    choices = "\n".join(f"- {name}: " + ", ".join(f"{k} {v}" for k, v in sorted(fitted["choices"][name].items()))
                        + f", threshold {fitted['thresholds'][name]}" for name in FIELDS)
    table = markdown_table(["field (mode)", "P", "R", "F1"], [
        [f"{field} ({mode})", *(f"{format_number(c['value'], 1)} [{format_number(c['ci_low'], 1)}, "
                                f"{format_number(c['ci_high'], 1)}]"
                                for c in (by[(field, m)] for m in ("precision", "recall", "f1")))]
        for field, mode in (("verbs", "exact"), ("arguments", "partial"))])
    return card(ARTIFACT.kind, name, meta, {
        "srl_backend": meta["srl_backend"], "seconds": format_number(seconds, 0), "choices": choices,
        "unit": bootstrap["unit"], "resamples": bootstrap["resamples"], "table": table})
