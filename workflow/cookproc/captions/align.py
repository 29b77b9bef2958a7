"""Aligning a video's human captions to its transcript sentences: the weak labels of key steps.

YouCook2's captions follow the video in order, and so do the transcript's sentences, but the
transcripts carry no times. Each caption is aligned to one sentence by a monotonic alignment (the
captions' sentences never go back in time: a_1 <= a_2 <= ... <= a_n) that maximises the summed
similarity of the aligned pairs, by dynamic programming over the caption × sentence matrix
(O(captions × sentences)). The similarity of caption i and sentence j is

    cos(caption_i, sentence_j) + lexical_weight * |words_i ∩ words_j| / |words_i|

with the captions' and sentences' MiniLM vectors and their step words (verb and head-noun lemmas,
:mod:`cookproc.data.step_words`). A sentence aligned to a caption is a weak key step and takes
that caption's verbs and nouns as what a person wrote for it.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from cookproc.data.step_words import StepWords


def lexical_overlap(captions: Sequence[StepWords], sentences: Sequence[StepWords]) -> np.ndarray:
    """(captions × sentences) share of each caption's verbs and nouns that the sentence has."""
    out = np.zeros((len(captions), len(sentences)))
    sentence_words = [set(s.verbs) | set(s.nouns) for s in sentences]
    for i, caption in enumerate(captions):
        words = set(caption.verbs) | set(caption.nouns)
        if words:
            out[i] = [len(words & s) / len(words) for s in sentence_words]
    return out


def similarity(caption_vectors: np.ndarray, sentence_vectors: np.ndarray, lexical: np.ndarray,
               lexical_weight: float) -> np.ndarray:
    def unit(x):
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    return unit(caption_vectors) @ unit(sentence_vectors).T + lexical_weight * lexical


def monotonic_alignment(score: np.ndarray) -> list[int]:
    """The non-decreasing sentence index of each caption (row) that maximises the summed score;
    among equal sums, the earliest sentences."""
    n_captions, n_sentences = score.shape
    if n_captions == 0:
        return []
    if n_sentences == 0:
        raise ValueError("a video with captions but no transcript sentence cannot be aligned")
    best = score[0].astype(float)
    back = np.zeros((n_captions, n_sentences), dtype=np.int64)
    for i in range(1, n_captions):
        # The best previous caption's sentence at or before j: running argmax, first one on ties.
        running = np.maximum.accumulate(best)
        is_new_max = np.concatenate([[True], best[1:] > running[:-1]])
        back[i] = np.maximum.accumulate(np.where(is_new_max, np.arange(n_sentences), 0))
        best = score[i] + running
    path = [int(np.argmax(best))]
    for i in range(n_captions - 1, 0, -1):
        path.append(int(back[i][path[-1]]))
    return path[::-1]


def align_video(caption_vectors: np.ndarray, sentence_vectors: np.ndarray, captions: Sequence[StepWords],
                sentences: Sequence[StepWords], lexical_weight: float) -> tuple[list[int], list[float]]:
    """Each caption's aligned sentence and the pair's similarity."""
    score = similarity(caption_vectors, sentence_vectors, lexical_overlap(captions, sentences), lexical_weight)
    path = monotonic_alignment(score)
    return path, [float(score[i, j]) for i, j in enumerate(path)]


ALIGNMENT = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("caption_idx", pa.int32(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=False),  # the aligned transcript sentence
    pa.field("similarity", pa.float64(), nullable=False),
])


def alignment_table(videos: Iterable[tuple[str, np.ndarray, np.ndarray, Sequence[StepWords], Sequence[StepWords]]],
                    lexical_weight: float) -> pa.Table:
    """One row per caption: ``videos`` yields (video id, caption vectors, sentence vectors, caption
    words, sentence words)."""
    columns = {"video_id": [], "caption_idx": [], "clip_idx": [], "similarity": []}
    for video_id, caption_vectors, sentence_vectors, captions, sentences in videos:
        path, scores = align_video(caption_vectors, sentence_vectors, captions, sentences, lexical_weight)
        columns["video_id"] += [video_id] * len(path)
        columns["caption_idx"] += list(range(len(path)))
        columns["clip_idx"] += path
        columns["similarity"] += scores
    return pa.table(columns, schema=ALIGNMENT)


def alignment_quality(aligned: Mapping[str, Sequence[int]], gold: Mapping[str, np.ndarray]) -> dict:
    """The caption-aligned sentences as key clips, against the benchmark's gold key clips, over the
    videos of both (pooled counts): precision, recall and F1 in percent, and the share of key clips
    (what precision would be by chance)."""
    tp = fp = fn = n = key = 0
    videos = sorted(set(aligned) & set(gold))
    for video in videos:
        flags = np.asarray(gold[video], dtype=bool)
        chosen = np.zeros(len(flags), dtype=bool)
        chosen[list(aligned[video])] = True
        tp += int((chosen & flags).sum())
        fp += int((chosen & ~flags).sum())
        fn += int((~chosen & flags).sum())
        n += len(flags)
        key += int(flags.sum())
    precision = 100 * tp / (tp + fp) if tp + fp else 0.0
    recall = 100 * tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"videos": len(videos), "clips": n, "aligned_clips": tp + fp, "key_clips": key, "precision": precision,
            "recall": recall, "f1": f1, "key_share": 100 * key / n if n else 0.0}
