"""Supervised tuple extraction: generate candidates per clip, score each with a classifier, select.

Candidates for verbs: WordNet verb lemmas of the clip's words, SRL predicate lemmas, verbs of the
previous two clips' sentences (ellipsis: "then the onions" continues the last step) and the TSM verb
labels. Candidates for arguments: SRL argument chunks (determiners stripped), word n-grams of the
sentence, the previous clips' SRL objects (coreference: "put it in") and the TSM noun labels.
A candidate's label is whether it matches a gold item (verbs: exact lemma; arguments: fuzz.ratio
with some gold item at least ``arg_match``). Features are source flags, SRL role, position, length,
lexicon membership and smoothed training-fold gold rates of the candidate string and its head word;
the classifier is scikit-learn's histogram gradient boosting (seeded, deterministic).

Selection per clip: the best candidate always (an empty prediction scores 0 on any counted clip),
then every further candidate with probability >= the fold's threshold (chosen on inner-validation
clips), skipping argument candidates that overlap one already taken.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

from cookproc.scoring.similarity import fuzz_ratio
from cookproc.supervised.clipfeatures import ARG_ROLES

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
STOP = frozenset("""a an the this that these those it its them they their there here your you yours my our we i
he she his her me us some any all and or but so then now just also to of in on at for with from by up down out
into onto over about as if is are was were be been being 'll 're 've 's do does did not n't no yes ok okay
very really little bit gonna going go get got will would can could should want like kind sort thing things one
what which who how when where while again too well right let 's""".split())
DETERMINERS = frozenset("a an the this that these those your my our his her their some any its".split())
PRONOUNS = frozenset("it them that this those these".split())
SOURCES = ("sentence", "srl", "prev1", "prev2", "tsm", "prior")
#: Particles that make phrasal verbs of the gold ("put in", "take out", "set aside").
PARTICLES = frozenset("in out off on up aside with down over into".split())
ROLE_FEATURES = ("V",) + ARG_ROLES


def words(sentence: str) -> list[str]:
    return _WORD.findall(sentence.lower())


def strip_determiners(text: str) -> str:
    toks = text.lower().split()
    while toks and toks[0] in DETERMINERS:
        toks = toks[1:]
    return " ".join(toks).strip(" ,.")


def _merge(rows: list[dict], flag_cols: list[str], num_cols: list[str], str_cols: tuple[str, ...] = ()) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for c in flag_cols + num_cols:
        if c not in df:
            df[c] = 0.0
    df[flag_cols + num_cols] = df[flag_cols + num_cols].fillna(0.0)
    for c in str_cols:
        df[c] = df[c].fillna("") if c in df else ""
    agg = {c: "max" for c in flag_cols + num_cols}
    agg.update({c: "max" for c in str_cols})
    agg["pos"] = "min"
    return df.groupby(["clip", "text"], sort=True, as_index=False).agg(agg)


def verb_candidates(sentences: list[str], video: np.ndarray, parses: list[list[list[dict]]],
                    tsm: list[list[tuple[str, str, float]]], lexicon: frozenset[str], lemma) -> pd.DataFrame:
    """Verb candidates: one row per (clip, lemma) with source flags and position features."""
    rows = []
    clip_words = [words(s) for s in sentences]
    for i, toks in enumerate(clip_words):
        n = max(len(toks), 1)
        for p, w in enumerate(toks):
            if w in STOP and w not in lexicon:
                continue
            lem = lemma(w)
            # The words around tell verb from noun use ("to chop", "you add the" vs "the chop").
            rows.append({"clip": i, "text": lem, "src_sentence": 1, "pos": p / n, "inflected": float(lem != w),
                         "prevword": toks[p - 1] if p else "<s>", "nextword": toks[p + 1] if p + 1 < len(toks) else "</s>"})
            if p + 1 < len(toks) and toks[p + 1] in PARTICLES:
                rows.append({"clip": i, "text": f"{lem} {toks[p + 1]}", "src_sentence": 1, "pos": p / n,
                             "phrasal": 1.0, "prevword": toks[p - 1] if p else "<s>", "nextword": toks[p + 1]})
        for frame in parses[i]:
            for c in frame:
                if c["role"] == "V":
                    roles = {x["role"] for x in frame}
                    rows.append({"clip": i, "text": lemma(c["text"].lower()), "src_srl": 1, "pos": c["start"] / n,
                                 "srl_arg1": float("ARG1" in roles), "srl_nargs": float(len(frame) - 1)})
        for back in (1, 2):
            j = i - back
            if j < 0 or video[j] != video[i]:
                continue
            for w in clip_words[j]:
                lem = lemma(w)
                if lem in lexicon and w not in STOP:
                    rows.append({"clip": i, "text": lem, f"src_prev{back}": 1, "pos": 1.0})
        for verb, _, weight in tsm[i]:
            rows.append({"clip": i, "text": verb.split("-")[0].lower(), "src_tsm": 1, "pos": 1.0, "tsm_w": weight})
    flags = [f"src_{s}" for s in SOURCES]
    df = _merge(rows, flags, ["inflected", "srl_arg1", "srl_nargs", "tsm_w", "phrasal"],
                ("prevword", "nextword"))
    df["in_lexicon"] = df["text"].isin(lexicon).astype(float)
    df["n_words_clip"] = np.log1p([len(clip_words[c]) for c in df["clip"]])
    return df


def _ngrams(toks: list[str], max_n: int):
    for n in range(1, max_n + 1):
        for p in range(len(toks) - n + 1):
            gram = toks[p:p + n]
            if gram[0] in STOP or gram[-1] in STOP:
                continue
            yield p, " ".join(gram)


def arg_candidates(sentences: list[str], video: np.ndarray, parses: list[list[list[dict]]],
                   tsm: list[list[tuple[str, str, float]]], lexicon: frozenset[str], *, max_ngram: int,
                   max_chunk_words: int) -> pd.DataFrame:
    """Argument candidates: one row per (clip, phrase)."""
    rows = []
    clip_words = [words(s) for s in sentences]
    srl_objects: list[list[str]] = []
    for i, toks in enumerate(clip_words):
        n = max(len(toks), 1)
        objects, has_pronoun = [], 0.0
        for frame in parses[i]:
            lem = next((c["lemma"] for c in frame if c["role"] == "V"), "")
            for c in frame:
                if c["role"] not in ARG_ROLES:
                    continue
                text = strip_determiners(c["text"])
                if text in PRONOUNS or c["text"].lower() in PRONOUNS:
                    has_pronoun = 1.0
                    continue
                if not text or len(text.split()) > max_chunk_words:
                    continue
                rows.append({"clip": i, "text": text, "src_srl": 1, "pos": c["start"] / n,
                             f"role_{c['role']}": 1, "lex_frame": float(lem in lexicon)})
                if c["role"] == "ARG1":
                    objects.append(text)
        srl_objects.append(objects)
        for p, gram in _ngrams(toks, max_ngram):
            rows.append({"clip": i, "text": gram, "src_sentence": 1, "pos": p / n})
        for back in (1, 2):
            j = i - back
            if j < 0 or video[j] != video[i]:
                continue
            for text in srl_objects[j]:
                rows.append({"clip": i, "text": text, f"src_prev{back}": 1, "pos": 1.0, "pronoun": has_pronoun})
        for _, noun, weight in tsm[i]:
            noun = noun.split(":")[0].lower()
            rows.append({"clip": i, "text": noun, "src_tsm": 1, "pos": 1.0, "tsm_w": weight})
    flags = [f"src_{s}" for s in SOURCES] + [f"role_{r}" for r in ARG_ROLES]
    df = _merge(rows, flags, ["lex_frame", "pronoun", "tsm_w"])
    df["pronoun"] = df.groupby("clip")["pronoun"].transform("max")
    df["n_words"] = df["text"].str.count(" ") + 1
    df["n_chars"] = np.log1p(df["text"].str.len())
    df["n_words_clip"] = np.log1p([len(clip_words[c]) for c in df["clip"]])
    df["head"] = df["text"].str.rsplit(" ", n=1).str[-1]
    return df


def add_prior_candidates(df: pd.DataFrame, items: list[str], n_clips: int) -> pd.DataFrame:
    """Every clip also proposes ``items`` (flag ``src_prior``): the gold verbs most frequent in the
    training folds, which annotators often add when the sentence names only the ingredient
    ("and some salt" -> add). Existing rows for an item get the flag."""
    df = df.copy()
    df["src_prior"] = df["text"].isin(items).astype(float)
    return add_proposed(df, [(c, t) for c in range(n_clips) for t in items], "src_prior")


def add_proposed(df: pd.DataFrame, pairs: list[tuple[int, str]], flag: str) -> pd.DataFrame:
    """``df`` plus the (clip, verb) ``pairs`` it lacks, flagged ``flag``: a proposed verb has no
    position or context words in the sentence (blank), counts as a lexicon verb, and copies its
    clip's columns."""
    have = pd.MultiIndex.from_frame(df[["clip", "text"]])
    extra = pd.DataFrame(pairs, columns=["clip", "text"]).drop_duplicates()
    extra = extra[~pd.MultiIndex.from_frame(extra).isin(have)]
    for col in df.columns:
        if col not in ("clip", "text"):
            extra[col] = 0.0 if pd.api.types.is_numeric_dtype(df[col]) else ""
    extra[flag] = 1.0
    extra["pos"] = 1.0
    extra["in_lexicon"] = 1.0
    per_clip = df.groupby("clip")["n_words_clip"].first()
    extra["n_words_clip"] = extra["clip"].map(per_clip).fillna(0.0).to_numpy()
    return pd.concat([df, extra], ignore_index=True).sort_values(["clip", "text"], kind="stable").reset_index(drop=True)


def label_verbs(df: pd.DataFrame, gold: list[frozenset[str]]) -> np.ndarray:
    return np.array([t in gold[c] for c, t in zip(df["clip"], df["text"])], dtype=bool)


def label_args(df: pd.DataFrame, gold: list[frozenset[str]], threshold: int) -> np.ndarray:
    lower = [frozenset(g.lower() for g in s) for s in gold]
    return np.array([bool(lower[c]) and max(fuzz_ratio(t, g) for g in lower[c]) >= threshold
                     for c, t in zip(df["clip"], df["text"])], dtype=bool)


def rate_features(df: pd.DataFrame, labels: np.ndarray, train_clips: np.ndarray, group: np.ndarray,
                  columns: tuple[str, ...], smoothing: float) -> pd.DataFrame:
    """Smoothed gold rates of each value of ``columns`` among training candidates (labelled clips only).

    A training candidate's own video is left out of its rate (a video repeats its own words, so the
    in-video rate would overstate how reliable a word is on unseen recipes). Clips outside
    ``train_clips`` never contribute: their labels are not read.
    """
    in_train = np.isin(df["clip"].to_numpy(), train_clips)
    out = pd.DataFrame(index=df.index)
    prior = labels[in_train].mean() if in_train.any() else 0.0
    for col in columns:
        key = df[col].to_numpy()
        tr = pd.DataFrame({"key": key[in_train], "group": group[in_train], "y": labels[in_train].astype(float)})
        total = tr.groupby("key")["y"].agg(["sum", "count"])
        own = tr.groupby(["group", "key"])["y"].agg(["sum", "count"])
        s = pd.Series(key).map(total["sum"]).fillna(0.0).to_numpy()
        c = pd.Series(key).map(total["count"]).fillna(0.0).to_numpy()
        idx = pd.MultiIndex.from_arrays([group, key])
        own_s = own["sum"].reindex(idx).fillna(0.0).to_numpy()
        own_c = own["count"].reindex(idx).fillna(0.0).to_numpy()
        s = np.where(in_train, s - own_s, s)
        c = np.where(in_train, c - own_c, c)
        out[f"rate_{col}"] = (s + smoothing * prior) / (c + smoothing)
        out[f"count_{col}"] = np.log1p(c)
    return out


def select(df: pd.DataFrame, prob: np.ndarray, clips: np.ndarray, threshold: float, max_items: int,
           dedupe_overlap: bool) -> dict[int, list[str]]:
    """Per clip: the best candidate, then the others above ``threshold`` (best first, at most ``max_items``)."""
    sub = pd.DataFrame({"clip": df["clip"].to_numpy(), "text": df["text"].to_numpy(), "p": prob})
    sub = sub[np.isin(sub["clip"].to_numpy(), clips)]
    sub = sub.sort_values(["clip", "p", "text"], ascending=[True, False, True], kind="stable")
    out: dict[int, list[str]] = {}
    for clip, group in sub.groupby("clip", sort=True):
        taken: list[str] = []
        for text, p in zip(group["text"], group["p"]):
            if taken and (p < threshold or len(taken) >= max_items):
                break
            if dedupe_overlap and any(set(text.split()) & set(t.split()) for t in taken):
                continue
            taken.append(text)
        out[int(clip)] = taken
    return out


def fit_model(X: np.ndarray, y: np.ndarray, seed: int, max_iter: int, learning_rate: float, max_leaf_nodes: int):
    model = HistGradientBoostingClassifier(max_iter=max_iter, learning_rate=learning_rate,
                                           max_leaf_nodes=max_leaf_nodes, random_state=seed,
                                           early_stopping=False)
    return model.fit(X, y)
