"""Fitting the step model (:mod:`cookproc.captions.model`) on the training videos, and choosing its
three thresholds on the inner-validation videos.

Inner validation is fixed by the video id alone: the training videos whose SHA-1 starts with 4 or 5
(:data:`VALIDATION_PREFIXES`), as the people's test set is by 0-3. Cross-fitting folds are fixed the
same way (SHA-1 modulo ``folds``). Every choice of the fit is deterministic given the inputs and the
seed.
"""
from __future__ import annotations

import hashlib
import logging
from typing import NamedTuple, Sequence

import numpy as np

from cookproc.captions.features import (NounStatistics, VerbStatistics, noun_candidates, selector_features,
                                        sentence_candidates, unit_rows, video_candidates)
from cookproc.captions.model import StepModel, StepModelSettings, TrainingVideo, Transcripts, document
from cookproc.core.logs import Progress
from cookproc.learn import boosted_trees
from cookproc.scoring.people import document_frequency, macro, video_scores

log = logging.getLogger(__name__)

#: First hex digits of SHA-1(video id) of the inner-validation videos (among training videos).
VALIDATION_PREFIXES = ("4", "5")


def _sha1(video_id: str) -> str:
    return hashlib.sha1(video_id.encode("utf-8")).hexdigest()


def is_validation(video_id: str) -> bool:
    return _sha1(video_id).startswith(VALIDATION_PREFIXES)


def fold_of(video_id: str, folds: int) -> int:
    return int(_sha1(video_id), 16) % folds


def verb_statistics(videos: Sequence[TrainingVideo], min_videos: int) -> VerbStatistics:
    said_aligned: dict[str, int] = {}
    copied_aligned: dict[str, int] = {}
    said_video: dict[str, int] = {}
    copied_video: dict[str, int] = {}
    for video in videos:
        caption_verbs = video.caption_verbs()
        for verb in set().union(*video.text.word_verbs) if video.text.word_verbs else set():
            said_video[verb] = said_video.get(verb, 0) + 1
            copied_video[verb] = copied_video.get(verb, 0) + (verb in caption_verbs)
        for caption, j in zip(video.captions, video.alignment):
            for verb in video.text.word_verbs[j]:
                said_aligned[verb] = said_aligned.get(verb, 0) + 1
                copied_aligned[verb] = copied_aligned.get(verb, 0) + (verb in caption.verbs)
    sentence_default = sum(copied_aligned.values()) / max(1, sum(said_aligned.values()))
    video_default = sum(copied_video.values()) / max(1, sum(said_video.values()))
    df = document_frequency(v.caption_verbs() for v in videos)
    # Smoothed towards the overall rate by two pseudo-observations: a verb said once says little.
    return VerbStatistics(
        vocabulary=sorted(v for v, c in df.items() if c >= min_videos), df=df,
        n_videos=len(videos),
        sentence_copy={v: (copied_aligned[v] + 2 * sentence_default) / (said_aligned[v] + 2) for v in sorted(said_aligned)},
        video_copy={v: (copied_video[v] + 2 * video_default) / (said_video[v] + 2) for v in sorted(said_video)},
        default_sentence_copy=sentence_default, default_video_copy=video_default)


def noun_statistics(videos: Sequence[TrainingVideo]) -> NounStatistics:
    said: dict[str, int] = {}
    copied: dict[str, int] = {}
    for video in videos:
        caption_nouns = video.caption_nouns()
        for noun in {m for w in video.text.words for m in w.nouns}:
            said[noun] = said.get(noun, 0) + 1
            copied[noun] = copied.get(noun, 0) + (noun in caption_nouns)
    default = sum(copied.values()) / max(1, sum(said.values()))
    return NounStatistics(df=document_frequency(v.caption_nouns() for v in videos), n_videos=len(videos),
                          video_copy={m: (copied[m] + 2 * default) / (said[m] + 2) for m in sorted(said)},
                          default_video_copy=default)


def verb_centroids(videos: Sequence[TrainingVideo], vocabulary: Sequence[str]) -> np.ndarray:
    index = {v: k for k, v in enumerate(vocabulary)}
    dim = videos[0].caption_vectors.shape[1]
    sums = np.zeros((len(vocabulary), dim))
    for video in videos:
        vectors = unit_rows(video.caption_vectors)
        for caption, vector in zip(video.captions, vectors):
            for verb in caption.verbs:
                if verb in index:
                    sums[index[verb]] += vector
    return unit_rows(sums)


def fit_selector(videos: Sequence[TrainingVideo], settings: StepModelSettings) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    X = np.vstack([selector_features(v.text) for v in videos])
    y = np.concatenate([v.gold_key if settings.benchmark_labels and v.gold_key is not None else v.weak_key()
                        for v in videos]).astype(int)
    model = LogisticRegression(C=settings.selector_C, max_iter=5000).fit(X, y)
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


def sentence_labels(video: TrainingVideo, pairs: Sequence[tuple[int, str]], window: int) -> np.ndarray:
    """Is the pair's verb a verb of a caption aligned within ``window`` sentences of it?"""
    near: set[tuple[int, str]] = set()
    for caption, j in zip(video.captions, video.alignment):
        for verb in caption.verbs:
            near.update((j + d, verb) for d in range(-window, window + 1))
    return np.asarray([pair in near for pair in pairs], dtype=int)


def fit_transcripts(videos: Sequence[TrainingVideo], vocabulary: Sequence[str], settings: StepModelSettings,
                    with_classifier: bool = True) -> Transcripts:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=settings.tfidf_min_df,
                                 max_features=settings.tfidf_max_features, dtype=np.float64)
    matrix = vectorizer.fit_transform([document(v.text) for v in videos])
    terms = vectorizer.get_feature_names_out().tolist()
    labels = np.asarray([[verb in v.caption_verbs() for verb in vocabulary] for v in videos], dtype=int)
    used = labels.any(axis=0) & ~labels.all(axis=0)
    classifier_verbs = [v for v, u in zip(vocabulary, used) if u]
    if with_classifier and classifier_verbs:
        model = OneVsRestClassifier(LogisticRegression(C=settings.transcript_C, solver="liblinear", max_iter=1000))
        model.fit(matrix, labels[:, used])
        coef = np.vstack([e.coef_[0] for e in model.estimators_]).astype(np.float32)
        intercept = np.asarray([e.intercept_[0] for e in model.estimators_], dtype=np.float64)
    else:
        classifier_verbs, coef, intercept = [], np.zeros((0, len(terms)), np.float32), np.zeros(0)
    return Transcripts(terms=terms, idf=vectorizer.idf_.astype(np.float64), classifier_verbs=classifier_verbs,
                       coef=coef, intercept=intercept, fit_matrix=matrix.tocsr(),
                       fit_verbs=[sorted(v.caption_verbs()) for v in videos],
                       fit_nouns=[sorted(v.caption_nouns()) for v in videos], neighbours=settings.neighbours)


class VideoRows(NamedTuple):
    """A fit video's candidate verbs and nouns: their feature rows and whether its captions use them."""

    verb_X: np.ndarray
    verbs: list[str]
    verb_labels: np.ndarray
    noun_X: np.ndarray
    nouns: list[str]
    noun_labels: np.ndarray


def _trees(X, y, settings, seed):
    return boosted_trees.tree_arrays(boosted_trees.fit_classifier(
        X, y, max_iter=settings.max_iter, learning_rate=settings.learning_rate,
        max_leaf_nodes=settings.max_leaf_nodes, seed=seed))


def fit_step_model(videos: Sequence[TrainingVideo], settings: StepModelSettings) -> StepModel:
    """The step model of the training videos (module doc): fitted on those outside inner
    validation, its thresholds chosen on those inside."""
    videos = sorted(videos, key=lambda v: v.text.video_id)
    fit = [v for v in videos if not is_validation(v.text.video_id)]
    validation = [v for v in videos if is_validation(v.text.video_id)]
    if not fit or not validation:
        raise ValueError(f"{len(fit)} fit and {len(validation)} inner-validation videos: both are needed")
    log.info("step model: %d fit videos, %d inner-validation videos", len(fit), len(validation))
    verbs = verb_statistics(fit, settings.min_caption_videos)
    nouns = noun_statistics(fit)
    centroids = verb_centroids(fit, verbs.vocabulary)
    coef, intercept = fit_selector(fit, settings)
    partial = StepModel(settings, verbs, nouns, centroids, coef, intercept, transcripts=None, sentence_trees={},
                        video_trees={}, noun_trees={}, verb_threshold=np.nan, step_threshold=np.nan,
                        noun_threshold=np.nan)

    # Sentence candidates of every fit video, labelled; cross-fitted sentence scores.
    candidates = {}
    for video in Progress("sentence candidates", len(fit), log=log).iterate(fit):
        rows, pairs = sentence_candidates(video.text, verbs, centroids, partial.key_step(video.text))
        candidates[video.text.video_id] = (rows, pairs, sentence_labels(video, pairs, settings.label_window))
    folds = {v.text.video_id: fold_of(v.text.video_id, settings.folds) for v in fit}
    out_of_fold: dict[str, np.ndarray] = {}
    classified: dict[str, dict[str, float]] = {}
    for k in range(settings.folds):
        inside = [v for v in fit if folds[v.text.video_id] != k]
        held = [v for v in fit if folds[v.text.video_id] == k]
        trees = _trees(np.vstack([candidates[v.text.video_id][0] for v in inside]),
                       np.concatenate([candidates[v.text.video_id][2] for v in inside]),
                       settings.sentence_trees, settings.seed)
        fold_transcripts = fit_transcripts(inside, verbs.vocabulary, settings)
        for video, probability in zip(held, fold_transcripts.classify(
                fold_transcripts.transform([document(v.text) for v in held]))):
            out_of_fold[video.text.video_id] = boosted_trees.predict_proba(trees, candidates[video.text.video_id][0])
            classified[video.text.video_id] = probability
        log.info("cross-fitting: fold %d of %d done", k + 1, settings.folds)
    sentence_trees = _trees(np.vstack([candidates[v.text.video_id][0] for v in fit]),
                            np.concatenate([candidates[v.text.video_id][2] for v in fit]),
                            settings.sentence_trees, settings.seed)
    transcripts = fit_transcripts(fit, verbs.vocabulary, settings)
    neighbours = transcripts.neighbour_words(transcripts.fit_matrix, list(range(len(fit))))

    # Video verbs and nouns on the cross-fitted scores.
    rows_of: dict[str, VideoRows] = {}
    for video, neighbour in zip(fit, neighbours):
        rows, pairs, _ = candidates[video.text.video_id]
        verb_X, candidate_verbs = video_candidates(video.text, rows, pairs, out_of_fold[video.text.video_id],
                                                   classified[video.text.video_id], neighbour.verbs)
        noun_X, candidate_nouns = noun_candidates(video.text, nouns, neighbour.nouns)
        rows_of[video.text.video_id] = VideoRows(
            verb_X, candidate_verbs, np.asarray([v in video.caption_verbs() for v in candidate_verbs], dtype=int),
            noun_X, candidate_nouns, np.asarray([m in video.caption_nouns() for m in candidate_nouns], dtype=int))

    def stacked(videos, field):
        return np.vstack([getattr(rows_of[v.text.video_id], field) for v in videos])

    def labels(videos, field):
        return np.concatenate([getattr(rows_of[v.text.video_id], field) for v in videos])

    video_trees = _trees(stacked(fit, "verb_X"), labels(fit, "verb_labels"), settings.video_trees, settings.seed)
    noun_trees = _trees(stacked(fit, "noun_X"), labels(fit, "noun_labels"), settings.noun_trees, settings.seed)

    model = StepModel(settings, verbs, nouns, centroids, coef, intercept, transcripts, sentence_trees, video_trees,
                      noun_trees, verb_threshold=np.nan, step_threshold=np.nan, noun_threshold=np.nan)
    choose_thresholds(model, validation)
    model.training = {
        "n_videos": len(videos), "n_fit": len(fit), "n_validation": len(validation),
        "n_benchmark": sum(v.gold_key is not None for v in videos),
        "n_captions": sum(len(v.captions) for v in videos), "n_sentences": sum(len(v.text.sentences) for v in videos),
        "selector_labels": ("the benchmark's gold key clips where a video has them, the captions' weak labels elsewhere"
                            if settings.benchmark_labels else "the captions' weak labels"),
        "verb_vocabulary": len(verbs.vocabulary), "classifier_verbs": len(transcripts.classifier_verbs),
    }
    return model


def choose_thresholds(model: StepModel, validation: Sequence[TrainingVideo]) -> None:
    """The verb and step thresholds with the best mean step F1 on the inner-validation videos, then
    the noun threshold with the best mean nouns F1 (ties: the first in the grids' order); the
    grids' scores are kept in ``model.validation``. The videos' sentences are parsed here for the
    steps' texts (their clauses and phrases)."""
    import dataclasses

    from cookproc.data.step_words import transcript_words
    from cookproc.scoring.people import idf_weights, unseen_weight

    captions = {v.text.video_id: v.captions for v in validation}
    idf, unseen = idf_weights(captions), unseen_weight(len(captions))
    texts = [dataclasses.replace(v.text, words=transcript_words(v.text.sentences)) for v in validation]
    scored = [model.probabilities(t, c) for t, c in zip(texts, model.video_context(texts))]
    settings = model.settings

    def score(verb_threshold, step_threshold, noun_threshold):
        steps = {t.video_id: model.decode(t, s, verb_threshold=verb_threshold, step_threshold=step_threshold,
                                          noun_threshold=noun_threshold).step_words()
                 for t, s in zip(texts, scored)}
        scores = video_scores(steps, captions, idf, unseen)
        return {"verb_threshold": verb_threshold, "step_threshold": step_threshold, "noun_threshold": noun_threshold,
                "steps_per_video": float(scores["n_steps"].mean()), **macro(scores)}

    first_noun = settings.noun_thresholds[0]
    grid = [score(v, t, first_noun) for v in settings.verb_thresholds for t in settings.step_thresholds]
    best = max(grid, key=lambda r: r["steps_f1"])
    model.verb_threshold, model.step_threshold = best["verb_threshold"], best["step_threshold"]
    # The first noun threshold was scored with the grid above.
    nouns = [best] + [score(model.verb_threshold, model.step_threshold, t) for t in settings.noun_thresholds[1:]]
    model.noun_threshold = max(nouns, key=lambda r: r["nouns_f1"])["noun_threshold"]
    model.validation = grid + nouns[1:]
    log.info("chosen on %d inner-validation videos: verb threshold %.2f, step threshold %.2f, noun threshold %.2f",
             len(validation), model.verb_threshold, model.step_threshold, model.noun_threshold)
