"""The supervised tuple extractor trained on every benchmark recipe, for new transcripts.

The text-only extractor of cookproc.supervised (`supervised-text` in Table 5: candidates from the
sentence, its SRL frames and the previous clips, the clip-level verb classifier, gradient boosting;
no TSM labels), applied to sentences that are not in the benchmark.

No model is pickled. An artifact (:func:`save_extractor`, read back by :meth:`TupleExtractor.load`)
holds what training reads: the benchmark's sentences, gold items, folds and inner-validation flags
(``training.parquet``), their SRL frames (``srl.parquet``), their frozen sentence vectors
(``vectors.parquet``, when the verb classifier reads them) and the settings (``model.json``, with
the code fingerprint). :meth:`TupleExtractor.extract` fits the models again on every call, with the
new clips as the held-out fold of cross-validation (:func:`cookproc.supervised.extract.run`): the
classifiers are fitted on the benchmark's training recipes, the selection thresholds and the nested
selection's choices are made on its inner-validation recipes, exactly as a cross-validation fold
is scored. The fits are seeded and their solvers deterministic, so the same call gives the same
tuples; a clip's tuples depend on its own video's clips only, never on the other files of a call.
Torch-free: the new sentences' vectors and SRL frames are computed by the caller
(cookproc.procedures).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.core.artifacts import building_folder, read_model_json
from cookproc.core.errors import InputError
from cookproc.core.schemas import read_table, write_parquet
from cookproc.keyclips.sentence_vectors import clip_text_features
from cookproc.supervised import extract
from cookproc.supervised.clipfeatures import read_srl

log = logging.getLogger(__name__)

FORMAT = "cookproc.tuple-extractor"
#: Bumped whenever the files or the meaning of a field change: older artifacts are then refused.
FORMAT_VERSION = 1
FILES = ("model.json", "training.parquet", "srl.parquet")
#: The verb classifier's sentence vectors, when it reads them.
VECTORS = "vectors.parquet"
#: The trained SRL tagger, when the extractor's frames come from it (srl_backend tagger).
TAGGER = "tagger.pt"
#: Video ids of new clips are prefixed so that they can never meet a benchmark video's.
NEW_VIDEO = "new:"

TRAINING = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=False),
    pa.field("recipe", pa.string(), nullable=False),
    pa.field("sentence", pa.string(), nullable=False),
    pa.field("gold_verbs", pa.list_(pa.string()), nullable=False),
    pa.field("gold_args", pa.list_(pa.string()), nullable=False),
    pa.field("fold", pa.int32(), nullable=False),
    pa.field("inner_val", pa.bool_(), nullable=False),
])


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
                   vectors: str | os.PathLike | None, meta: dict, card: str | None = None,
                   tagger: str | os.PathLike | None = None) -> None:
    """Write the artifact folder atomically (built beside ``out_dir``, then renamed into place):
    ``training`` (:data:`TRAINING`), copies of the SRL parse table, of the sentence-vector table of
    the same clips when the verb classifier reads them, and of the SRL tagger when the frames come
    from it (new sentences must be labelled alike); ``meta``: model.json's content."""
    with building_folder(out_dir) as tmp:
        write_parquet(training, tmp / "training.parquet", TRAINING)
        shutil.copyfile(srl, tmp / "srl.parquet")
        if vectors is not None:
            shutil.copyfile(vectors, tmp / VECTORS)
        if tagger is not None:
            shutil.copyfile(tagger, tmp / TAGGER)
        (tmp / "model.json").write_text(json.dumps({**meta, "format": FORMAT, "format_version": FORMAT_VERSION},
                                                   indent=1, sort_keys=True) + "\n", encoding="utf-8")
        if card is not None:
            (tmp / "MODEL_CARD.md").write_text(card, encoding="utf-8")


def read_extractor_json(path: str | os.PathLike) -> dict:
    """The artifact's model.json, checked for format, version, settings and files."""
    path = Path(path)
    meta_path = path / "model.json"
    meta = read_model_json(path, kind="tuple extractor", files=FILES, format=FORMAT, version=FORMAT_VERSION,
                           rebuild="build the extractor again")
    for key in ("settings", "srl_backend", "sentence_vectors", "lexicon"):
        if key not in meta:
            raise InputError(meta_path, f"no {key!r}: not written by this workflow's rule deploy_tuple_extractor")
    if meta["sentence_vectors"] and not (path / VECTORS).exists():
        raise InputError(path, f"incomplete tuple extractor: missing {VECTORS}")
    if meta["srl_backend"] == "tagger" and not (path / TAGGER).exists():
        raise InputError(path, f"incomplete tuple extractor: missing {TAGGER} (its SRL frames come from the tagger)")
    return meta


class TupleExtractor:
    """A saved text-only supervised extractor: verbs and arguments of new clips."""

    def __init__(self, path: Path, meta: dict, training: pd.DataFrame, parses: dict, vectors: np.ndarray | None):
        self.path, self.meta, self.training, self.parses, self.vectors = path, meta, training, parses, vectors

    @property
    def name(self) -> str:
        return self.path.name

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
        path = Path(path)
        meta = read_extractor_json(path)
        training = read_table(path / "training.parquet").to_pandas()
        missing = [c for c in TRAINING.names if c not in training.columns]
        if missing:
            raise InputError(path / "training.parquet", f"missing columns {missing}")
        training["gold_verbs"] = [list(v) for v in training["gold_verbs"]]
        training["gold_args"] = [list(a) for a in training["gold_args"]]
        vectors = clip_text_features(path / VECTORS, training) if meta["sentence_vectors"] else None
        return cls(path, meta, training, read_srl(path / "srl.parquet"), vectors)

    def extract(self, sentences: Sequence[str], videos: Sequence, frames: Sequence[list[list[dict]]],
                vectors: np.ndarray | None = None, *, lemma=None) -> tuple[list[list[str]], list[list[str]]]:
        """Verbs and arguments of each new clip (one sentence each, a video's clips consecutive and
        in time order). ``frames``: each sentence's SRL frames from the artifact's backend, as
        :func:`cookproc.supervised.clipfeatures.read_srl` gives them; ``vectors``: the sentences'
        frozen vectors when the artifact's verb classifier reads them (:attr:`encoder`)."""
        if lemma is None:
            from cookproc.wordnet import verb_lemma as lemma
        n_new = len(sentences)
        if len(videos) != n_new or len(frames) != n_new:
            raise ValueError(f"{n_new} sentences, {len(videos)} video ids and {len(frames)} SRL results")
        if (vectors is None) != (self.vectors is None):
            raise ValueError("the extractor's verb classifier reads sentence vectors: give them"
                             if vectors is None else "this extractor reads no sentence vectors")
        if n_new == 0:
            return [], []
        train = self.training
        held_out = int(train["fold"].max()) + 1
        video_ids = [f"{NEW_VIDEO}{v}" for v in videos]
        clip_idx = pd.Series(video_ids).groupby(video_ids, sort=False).cumcount().to_numpy()
        new = pd.DataFrame({"video_id": video_ids, "clip_idx": clip_idx.astype(np.int32),
                            "recipe": video_ids, "sentence": [str(s) for s in sentences],
                            "gold_verbs": [[] for _ in range(n_new)], "gold_args": [[] for _ in range(n_new)],
                            "fold": held_out, "inner_val": False})
        clips = pd.concat([train, new], ignore_index=True)
        parses = dict(self.parses)
        parses.update({(v, int(c)): f for v, c, f in zip(video_ids, clip_idx, frames)})
        embeddings = None if vectors is None else np.vstack([self.vectors, np.asarray(vectors, dtype=self.vectors.dtype)])
        settings = dict(self.meta["settings"])
        setups = extract.build_setups(clips, parses, [[] for _ in range(len(clips))], frozenset(self.meta["lexicon"]),
                                      lemma, settings, embeddings)
        preds, info = extract.run(clips, clips["fold"].to_numpy(), clips["inner_val"].to_numpy(), setups, settings,
                                  held_out=[held_out])
        log.info("%s: %d new clips; verbs %s, arguments %s", self.name, n_new,
                 {k: v for k, v in info["verbs"][held_out].items() if k != "candidates"},
                 {k: v for k, v in info["arguments"][held_out].items() if k != "candidates"})
        first = len(train)
        return preds["verbs"][first:], preds["arguments"][first:]


def oracle_scores(clips: pd.DataFrame, verbs: Sequence[Sequence[str]], args: Sequence[Sequence[str]], *,
                  bootstrap: dict, system: str = "supervised-text") -> list[dict]:
    """Table 5's oracle-key-clip cells of a cross-validated run (verbs exact, arguments partial;
    percent) with their bootstrap intervals (``bootstrap``: the config's tables.bootstrap)."""
    from cookproc.bootstrap import table5_intervals
    from cookproc.core.schemas import CLIP_SCORES
    from cookproc.metrics import SimilarityCache, clip_scores, counted_clips

    cache = SimilarityCache()
    rows = []
    for field, gold_column, predicted, mode in (("verbs", "gold_verbs", verbs, "exact"),
                                                ("arguments", "gold_args", args, "partial")):
        gold = [frozenset(g) for g in clips[gold_column]]
        scores = clip_scores(gold, [frozenset(p) for p in predicted], counted_clips(gold, None), mode, cache)
        rows += [{"system": system, "keyclips": "oracle", "counting": "oracle", "field": field, "mode": mode,
                  "video_id": str(clips["video_id"].iloc[i]), "clip_idx": int(clips["clip_idx"].iloc[i]),
                  "precision": p, "recall": r} for i, p, r in zip(scores.positions, scores.precision, scores.recall)]
    intervals, _ = table5_intervals(pa.Table.from_pandas(clips[["video_id", "recipe"]], preserve_index=False),
                                    pa.Table.from_pylist(rows, schema=CLIP_SCORES), unit=bootstrap["unit"],
                                    resamples=bootstrap["resamples"], seed=bootstrap["seed"],
                                    confidence=bootstrap["confidence"])
    return intervals.to_pylist()


def model_card(name: str, meta: dict, cells: Sequence[dict], bootstrap: dict, seconds: float) -> str:
    """MODEL_CARD.md: what the extractor is, what it is trained on, its cross-validated Table 5
    scores with intervals (``cells``: :func:`oracle_scores`), and how to use it."""
    training = meta["training"]
    by = {(c["field"], c["metric"]): c for c in cells}
    lines = [f"# Model card: {name}", "",
             "Tuple extractor of the cookproc workflow (`supervised-text` in Table 5): verb and argument "
             "candidates from the sentence, its SRL frames "
             f"(`{meta['srl_backend']}` backend) and the previous clips, and the verbs of a clip-level verb "
             "classifier, ranked by gradient boosting; no video input.", "",
             "## Training data", "",
             f"All {training['n_clips']} clips of the {training['n_videos']} benchmark videos "
             f"({training['n_recipes']} recipes) and their gold verbs and arguments. The models are fitted "
             "again whenever the extractor runs (no pickled model is stored): on the clips outside the "
             f"inner-validation recipes ({training['n_train']}), with the selection thresholds and the "
             f"configured candidates chosen on the {training['n_val']} clips of the inner-validation "
             "recipes, as each cross-validation fold does. Building the artifact took "
             f"{seconds:.0f} s.", "",
             "## Cross-validated scores", "",
             "The same configuration under the benchmark's leave-recipes-out cross-validation, oracle key "
             f"clips, percent, with 95% bootstrap intervals ({bootstrap['unit']}s resampled, "
             f"{bootstrap['resamples']} resamples):", "",
             "| field (mode) | P | R | F1 |", "|---|---|---|---|"]
    for field, mode in (("verbs", "exact"), ("arguments", "partial")):
        cell = [by[(field, m)] for m in ("precision", "recall", "f1")]
        lines.append(f"| {field} ({mode}) | " + " | ".join(f"{c['value']:.1f} [{c['ci_low']:.1f}, {c['ci_high']:.1f}]"
                                                          for c in cell) + " |")
    lines += ["", "The artifact is trained on every recipe, so no held-out score of it exists: the numbers above "
              "estimate how it does on unseen recipes. Its settings were fixed beforehand except those the "
              "configuration lists as candidates of nested selection.", "",
              "## Use", "",
              "Key clips come from a key-clip selector (`user.keyclip_model`); this extractor gives every "
              "clip's verbs and arguments:", "",
              f"    snakemake -c2 results/procedures/<name>.json --config 'user={{tuple_model: {meta['path']}}}'",
              f"    cookproc extract talk.srt --tuples {meta['path']}", ""]
    return "\n".join(lines)
