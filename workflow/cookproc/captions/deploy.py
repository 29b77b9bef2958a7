"""The step model as a folder: ``model.json`` (its settings, statistics, vocabularies, thresholds and
the inner-validation grid), ``arrays.npz`` (vectors, coefficients, trees; read with
``allow_pickle=False``) and ``MODEL_CARD.md``. No pickle: the boosted trees are arrays
(:mod:`cookproc.learn.boosted_trees`), the TF-IDF its terms and weights.

The folder a training rule writes (``results/captions/models/<name>``) is the one the people's
procedures are made with; rule ``deploy_step_model`` copies it to ``results/models/<name>`` with
the card that states its people's scores (the user's model).
"""
from __future__ import annotations

import dataclasses
import io
import os
import zipfile
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from cookproc.captions.features import NounStatistics, VerbStatistics
from cookproc.captions.model import StepModel, StepModelSettings, Transcripts
from cookproc.core.errors import InputError
from cookproc.learn import boosted_trees
from cookproc.learn.deployed_model import DeployedModel, ModelFormat

ARRAYS = "arrays.npz"
# Version 3: steps decided first (the step threshold), then their words (the noun threshold); no pair model.
FORMAT = ModelFormat("cookproc.step-model", 3, kind="step model", rule="train_step_model",
                     rebuild="train the step model again", files=("model.json", ARRAYS),
                     required=("settings", "verbs", "nouns", "transcripts", "thresholds", "encoder"))
_TREES = ("sentence_trees", "video_trees", "noun_trees")


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """An .npz of the arrays with a fixed member date (np.savez stamps the time): same model, same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue(),
                             compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def model_arrays(model: StepModel) -> dict[str, np.ndarray]:
    matrix = model.transcripts.fit_matrix.tocsr()
    arrays = {"centroids": model.centroids, "selector_coef": model.selector_coef,
              "transcripts_idf": model.transcripts.idf, "transcripts_coef": model.transcripts.coef,
              "transcripts_intercept": model.transcripts.intercept, "fit_data": matrix.data,
              "fit_indices": matrix.indices.astype(np.int64), "fit_indptr": matrix.indptr.astype(np.int64)}
    for name in _TREES:
        arrays.update({f"{name}.{key}": value for key, value in getattr(model, name).items()})
    return arrays


def model_meta(model: StepModel) -> dict:
    verbs, nouns, transcripts = model.verbs, model.nouns, model.transcripts
    return {
        "settings": model.settings.to_dict(),
        "verbs": dataclasses.asdict(verbs),
        "nouns": dataclasses.asdict(nouns),
        "selector_intercept": model.selector_intercept,
        "transcripts": {"terms": transcripts.terms, "classifier_verbs": transcripts.classifier_verbs,
                        "fit_verbs": transcripts.fit_verbs, "fit_nouns": transcripts.fit_nouns,
                        "neighbours": transcripts.neighbours, "n_fit": transcripts.fit_matrix.shape[0]},
        "thresholds": {"verbs": model.verb_threshold, "steps": model.step_threshold, "nouns": model.noun_threshold},
        "validation": model.validation,
        "training": model.training,
    }


def save_step_model(out_dir: str | os.PathLike, model: StepModel, meta: Mapping,
                    card: str | Callable[[dict], str] | None = None) -> None:
    """Write the folder atomically; ``meta``: what else model.json says (encoder, training, code)."""
    with FORMAT.saving(out_dir, {**meta, **model_meta(model)}, card) as (tmp, _):
        (tmp / ARRAYS).write_bytes(_npz_bytes(model_arrays(model)))


class StepModelFolder(DeployedModel):
    """A loaded step model folder: the model, and model.json."""

    def __init__(self, path: Path, meta: dict, model: StepModel):
        self.path, self.meta, self.model = path, meta, model

    @property
    def encoder(self) -> dict:
        return self.meta["encoder"]

    @classmethod
    def load(cls, path: str | os.PathLike) -> "StepModelFolder":
        from scipy import sparse

        path, meta = FORMAT.open(path)
        try:
            with np.load(path / ARRAYS, allow_pickle=False) as npz:
                arrays = {key: npz[key] for key in npz.files}
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise InputError(path / ARRAYS, f"not readable as the step model's arrays ({exc})") from exc
        t = meta["transcripts"]
        transcripts = Transcripts(
            terms=t["terms"], idf=arrays["transcripts_idf"], classifier_verbs=t["classifier_verbs"],
            coef=arrays["transcripts_coef"], intercept=arrays["transcripts_intercept"],
            fit_matrix=sparse.csr_matrix((arrays["fit_data"], arrays["fit_indices"], arrays["fit_indptr"]),
                                         shape=(t["n_fit"], len(t["terms"]))),
            fit_verbs=t["fit_verbs"], fit_nouns=t["fit_nouns"], neighbours=t["neighbours"])
        trees = {name: {key: arrays[f"{name}.{key}"] for key in boosted_trees.ARRAY_KEYS} for name in _TREES}
        verbs, nouns = VerbStatistics(**meta["verbs"]), NounStatistics(**meta["nouns"])
        model = StepModel(
            settings=StepModelSettings.from_config(meta["settings"]), verbs=verbs, nouns=nouns,
            centroids=arrays["centroids"],
            selector_coef=arrays["selector_coef"], selector_intercept=meta["selector_intercept"],
            transcripts=transcripts, **trees, verb_threshold=meta["thresholds"]["verbs"],
            step_threshold=meta["thresholds"]["steps"], noun_threshold=meta["thresholds"]["nouns"],
            validation=meta["validation"], training=meta["training"])
        return cls(path, meta, model)


def _cell(value, digits: int = 1) -> str:
    from cookproc.core.formatting import format_number

    return format_number(None if value is None or value != value else value, digits)  # NaN: undefined


def card_facts(meta: Mapping, people: Mapping | None = None, benchmark: Mapping | None = None) -> dict:
    """The step model card's facts (:data:`cookproc.learn.deployed_model.CARDS`): model.json's, the
    model's row of the people's table when it has been scored (``people``: its row of
    results/people.csv), and the benchmark row of a step model trained without the benchmark
    (``benchmark``: results/captions/steps_on_benchmark.csv, :mod:`cookproc.captions.benchmark`)."""
    from cookproc.core.formatting import markdown_table

    thresholds = meta["thresholds"]
    [chosen] = [r for r in meta["validation"] if (r["verb_threshold"], r["step_threshold"], r["noun_threshold"])
                == (thresholds["verbs"], thresholds["steps"], thresholds["nouns"])][:1] or [{}]
    kinds = (("steps_f1", "step F1"), ("strict_steps_f1", "strict step F1"), ("verbs_f1", "verbs F1"),
             ("idf_verbs_f1", "IDF-weighted verbs F1"), ("nouns_f1", "nouns F1"), ("pairs_f1", "pairs F1"))
    validation_table = markdown_table([label for _, label in kinds] + ["order tau"],
                                      [[_cell(chosen.get(key)) for key, _ in kinds] + [_cell(chosen.get("order_tau"), 2)]])
    facts = {**meta["training"], "name": meta["name"],
             "verb_threshold": thresholds["verbs"], "step_threshold": thresholds["steps"],
             "noun_threshold": thresholds["nouns"], "validation_table": validation_table, "people": None,
             "benchmark": None}
    if benchmark is not None:
        facts["benchmark"] = {"n_videos": benchmark["n_videos"], "table": markdown_table(
            ["Acc", "P", "R", "F1", "clips marked as steps"],
            [[_cell(benchmark[k]) for k in ("accuracy", "precision", "recall", "f1")]
             + [_cell(benchmark["step_share"]) + " %"]])}
    if people is not None:
        rows = [[_cell(people[f"{k}"]) + f" [{_cell(people[f'{k}_low'])}, {_cell(people[f'{k}_high'])}]" for k, _ in kinds]
                + [_cell(people["order_tau"], 2) + f" [{_cell(people['order_tau_low'], 2)}, "
                   f"{_cell(people['order_tau_high'], 2)}]"]]
        facts["people"] = {"n_test": people["n_videos"], "resamples": people["resamples"],
                           "table": markdown_table([label for _, label in kinds] + ["order tau"], rows)}
    return facts


def training_card(meta: Mapping, people: Mapping | None = None, benchmark: Mapping | None = None) -> str:
    from cookproc.learn.deployed_model import model_card

    return model_card("step model", meta["name"], meta, card_facts(meta, people, benchmark))


def _defined(row: Mapping) -> dict:
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}  # NaN: JSON's null


def deploy_step_model(source: str | os.PathLike, out_dir: str | os.PathLike, people: Mapping, benchmark: Mapping, *,
                      code: str) -> None:
    """The trained folder ``source`` as a user's model at ``out_dir``: the same arrays, model.json
    with its people's scores (``people``: its row of the people's table) and the benchmark row of a
    step model trained without the benchmark, and the card stating both."""
    source, out_dir = Path(source), Path(out_dir)
    _, meta = FORMAT.open(source)
    meta = {**meta, "name": out_dir.name, "path": str(out_dir), "deploy_code": code,
            "people": _defined(people), "benchmark_row": _defined(benchmark)}
    with FORMAT.saving(out_dir, meta, lambda m: training_card(m, people, benchmark)) as (tmp, _):
        (tmp / ARRAYS).write_bytes((source / ARRAYS).read_bytes())
