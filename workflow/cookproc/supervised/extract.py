"""The supervised tuple system end to end: candidates, out-of-fold classification, TUPLES rows, and
an analysis of where the gains over a baseline come from (items absent from the sentence)."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pyarrow as pa

from cookproc.scoring.similarity import SimilarityCache, fuzz_partial_ratio
from cookproc.supervised import tuples as T
from cookproc.supervised.crossval import FieldSetup, ModelCandidate, cross_validate_field
from cookproc.supervised.verbclf import VerbClassifier

log = logging.getLogger(__name__)


def verb_classifier(clips: pd.DataFrame, embeddings: np.ndarray | None, p: dict) -> VerbClassifier | None:
    """The clip-level verb classifier of ``p`` (``verb_classifier`` settings), or None when disabled."""
    vc = p.get("verb_classifier") or {"enabled": False}
    if not vc["enabled"]:
        return None
    if vc["sentence_vectors"] and embeddings is None:
        raise ValueError("supervised.tuples.verb_classifier.sentence_vectors is true but no sentence vectors were given")
    return VerbClassifier(clips["sentence"].astype(str).tolist(), clips["video_id"].to_numpy(),
                          embeddings if vc["sentence_vectors"] else None, min_count=vc["min_count"], C=vc["C"],
                          context_weight=vc["context_weight"], candidates=vc["candidates"])


def build_setups(clips: pd.DataFrame, parses: dict, tsm: list, lexicon: frozenset[str], lemma, p: dict,
                 embeddings: np.ndarray | None = None) -> dict[str, FieldSetup]:
    """Candidates, labels and settings of both fields; ``embeddings`` (clip order) feed the verb classifier."""
    sentences = clips["sentence"].astype(str).tolist()
    video = clips["video_id"].to_numpy()
    per_clip = [parses.get(k, []) for k in zip(clips["video_id"], clips["clip_idx"].astype(int))]
    gold_v = [frozenset(v) for v in clips["gold_verbs"]]
    gold_a = [frozenset(a) for a in clips["gold_args"]]
    vc = T.verb_candidates(sentences, video, per_clip, tsm, lexicon, lemma)
    ac = T.arg_candidates(sentences, video, per_clip, tsm, lexicon, max_ngram=p["max_ngram"],
                          max_chunk_words=p["max_chunk_words"])
    log.info("candidates: %d verbs, %d arguments", len(vc), len(ac))
    return {
        "verbs": FieldSetup("verbs", vc, T.label_verbs(vc, gold_v), gold_v, ("text", "text_src", "prevword", "nextword"),
                            False, p["max_verbs"], p["prior_verbs"], verb_classifier(clips, embeddings, p)),
        "arguments": FieldSetup("arguments", ac, T.label_args(ac, gold_a, p["arg_match"]), gold_a,
                                ("text", "head"), True, p["max_args"]),
    }


BOOSTING = ("max_iter", "learning_rate", "max_leaf_nodes")


def model_candidates(p: dict, setup: FieldSetup) -> list[ModelCandidate]:
    """The field's candidates of nested selection (``p["selection"]["candidates"]``: boosting settings,
    verb classifier on or off); a candidate set that is absent or null keeps the single value of ``p``."""
    listed = (p.get("selection") or {}).get("candidates") or {}
    boosting = [dict(b) for b in listed.get("boosting") or [{k: p[k] for k in BOOSTING}]]
    for b in boosting:
        if sorted(b) != sorted(BOOSTING):
            raise ValueError(f"a boosting candidate needs exactly {list(BOOSTING)}, got {sorted(b)}")
    # Only a field that has the verb classifier can choose to leave it out.
    flags = listed.get("verb_classifier") or [None] if setup.classifier is not None else [None]
    return [ModelCandidate(b, flag) for b in boosting for flag in flags]


def run(clips: pd.DataFrame, fold: np.ndarray, inner: np.ndarray, setups: dict[str, FieldSetup], p: dict,
        cache: SimilarityCache | None = None, held_out: list[int] | None = None
        ) -> tuple[dict[str, list[list[str]]], dict]:
    """Out-of-fold predictions per field (clip order) and per-fold info; with candidates in
    ``p["selection"]``, each fold chooses among them on its inner-validation recipes. ``held_out``:
    only these folds are scored (other clips' predictions are None)."""
    cache = cache or SimilarityCache()
    group = pd.factorize(clips["video_id"], sort=True)[0]
    model_params = {k: p[k] for k in BOOSTING}
    recipes = clips["recipe"].astype(str).to_numpy() if "recipe" in clips else None
    preds, info = {}, {}
    for name in ("verbs", "arguments"):
        preds[name], info[name] = cross_validate_field(
            setups[name], fold, inner, group, seed=p["seed"], model_params=model_params,
            smoothing=p["smoothing"], thresholds=list(p["thresholds"]), cache=cache,
            model_candidates=model_candidates(p, setups[name]), recipes=recipes, held_out=held_out)
    return preds, info


def tuples_table(system: str, clips: pd.DataFrame, preds: dict[str, list[list[str]]]) -> pa.Table:
    return pa.table({
        "system": pa.array([system] * len(clips), pa.string()),
        "video_id": pa.array(clips["video_id"].astype(str).tolist(), pa.string()),
        "clip_idx": pa.array(clips["clip_idx"].to_numpy().astype(np.int32)),
        "verbs": pa.array(preds["verbs"], pa.list_(pa.string())),
        "args": pa.array(preds["arguments"], pa.list_(pa.string())),
    })


def in_sentence(field: str, item: str, sentence: str, lemma) -> bool:
    """Whether a gold item is stated in its clip's sentence (verbs: a word's lemma; args: verbatim)."""
    if field == "verbs":
        toks = T.words(sentence)
        return item.lower() in toks or item.lower() in {lemma(w) for w in toks}
    return item.lower() in sentence.lower()


def gain_by_presence(clips: pd.DataFrame, ours: dict[str, list], baseline: dict[str, list], lemma) -> pd.DataFrame:
    """Gold items recovered by ours vs the baseline, split by whether the item is in the sentence.

    An item counts as recovered when a predicted item equals it (verbs) or has partial fuzzy
    similarity >= 90 with it (arguments); only annotated clips count, as with oracle key clips.
    """
    rows = []
    for field, col in (("verbs", "gold_verbs"), ("arguments", "gold_args")):
        for i, (gold, sentence) in enumerate(zip(clips[col], clips["sentence"])):
            for item in gold:
                def hit(pred):
                    if field == "verbs":
                        return item in pred
                    return any(fuzz_partial_ratio(item.lower(), x.lower()) >= 90 for x in pred)
                rows.append({"field": field, "present": in_sentence(field, item, sentence, lemma),
                             "ours": hit(ours[field][i]), "baseline": hit(baseline[field][i])})
    df = pd.DataFrame(rows)
    out = df.groupby(["field", "present"], sort=True).agg(items=("ours", "size"), ours=("ours", "sum"),
                                                          baseline=("baseline", "sum")).reset_index()
    out["gain"] = out["ours"] - out["baseline"]
    out["share_of_gain"] = out["gain"] / out.groupby("field")["gain"].transform("sum")
    return out
