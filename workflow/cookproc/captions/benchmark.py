"""The step model scored on the benchmark's key clips, as a separate, labelled row.

The step models users get learn from the benchmark videos' captions (and, for
``captions-benchmark``, their gold key clips), so their key steps on the benchmark are not a held-out
score. This module trains the same model on the YouCook2 videos *outside* the benchmark only (its
thresholds chosen on those of them in inner validation) and scores its key steps on every benchmark
video whose clips are its transcript's sentences, with Table 4's metrics over all clips. It is not
leave-recipes-out: the other videos show the same 89 recipes.

The benchmark's sentences have times, and so do YouCook2's captions (their segments), so the same
steps are also checked in time (:func:`time_scores`): the share of steps whose sentence lies in a
caption's segment (its midpoint, from its start to the next sentence's), the share of caption
segments that hold a step, and, of the steps in a segment, the share that share a verb with that
segment's caption; beside them what chance gives (the share of all sentences in a segment) and the
benchmark's gold key clips.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from cookproc.captions.features import VideoText
from cookproc.captions.model import StepModel, TrainingVideo
from cookproc.scoring.metrics import score_keyclips

#: The row's name in results/captions/steps_on_benchmark.csv (and numbers.json).
SYSTEM = "steps-captions (trained on other YouCook2 videos of the same recipes)"
COLUMNS = ["system", "n_videos", "n_clips", "accuracy", "precision", "recall", "f1", "key_share", "step_share",
           "time_videos", "time_steps", "segments", "steps_in_segments", "segments_with_step",
           "verb_shared_in_segment", "sentences_in_segments", "key_clips_in_segments"]


def outside(videos: Sequence[TrainingVideo], benchmark: set[str]) -> list[TrainingVideo]:
    """The training videos that are not benchmark videos."""
    return [v for v in videos if v.text.video_id not in benchmark]


def key_step_scores(model: StepModel, texts: Sequence[VideoText], gold: Mapping[str, np.ndarray],
                    steps: Sequence | None = None) -> dict:
    """Accuracy, P, R, F1 (percent) of the model's steps as key clips against ``gold``, over every
    clip of ``texts``, and the shares of gold key clips and of steps among the clips (``steps``: the
    model's steps of ``texts``, when already decoded)."""
    flags_gold, flags_steps = [], []
    for text, steps in zip(texts, model.steps(texts) if steps is None else steps):
        flags = np.zeros(len(text.sentences), dtype=bool)
        flags[list(steps.verbs)] = True
        flags_steps.append(flags)
        flags_gold.append(np.asarray(gold[text.video_id], dtype=bool))
    g, p = np.concatenate(flags_gold), np.concatenate(flags_steps)
    score = score_keyclips(g, p)
    return {"system": SYSTEM, "n_videos": len(texts), "n_clips": int(g.size), "accuracy": 100 * score.accuracy,
            "precision": 100 * score.precision, "recall": 100 * score.recall, "f1": 100 * score.f1,
            "key_share": 100 * float(g.mean()), "step_share": 100 * float(p.mean())}


def sentence_times(clips) -> dict[str, np.ndarray]:
    """{video id: each clip's time in seconds}: the midpoint from its start to its end (the next
    clip's start), or its start where the end is unknown (a video's last clip)."""
    out = {}
    for video, group in clips.sort_values(["video_id", "clip_idx"]).groupby("video_id", sort=True):
        start, end = group["start_s"].to_numpy(dtype=float), group["end_s"].to_numpy(dtype=float)
        out[video] = np.where(np.isnan(end), start, (start + end) / 2)
    return out


def time_scores(step_sentences: Mapping[str, Mapping[int, Sequence[str]]], times: Mapping[str, np.ndarray],
                segments: Mapping[str, Sequence[tuple[float, float, Sequence[str]]]],
                gold: Mapping[str, np.ndarray]) -> dict:
    """The steps checked in time (module doc), in percent, over the videos with steps' times and
    caption segments: ``step_sentences`` {video: {sentence: the step's verbs}}, ``times`` {video:
    each sentence's time}, ``segments`` {video: [(start, end, the caption's verbs)]}, ``gold`` the
    benchmark's key flags."""
    videos = sorted(set(step_sentences) & set(times) & set(segments))
    steps = inside = held = shared = all_sentences = all_inside = key = key_inside = n_segments = 0
    for video in videos:
        t, spans = times[video], segments[video]

        def containing(j):
            return [k for k, (start, end, _) in enumerate(spans) if start <= t[j] <= end]

        holding = set()
        for j, verbs in step_sentences[video].items():
            steps += 1
            found = containing(j)
            inside += bool(found)
            holding.update(found)
            shared += any(set(verbs) & set(spans[k][2]) for k in found)
        n_segments += len(spans)
        held += len(holding)
        flags = np.asarray(gold.get(video, np.zeros(len(t), dtype=bool)), dtype=bool)
        for j in range(len(t)):
            found = bool(containing(j))
            all_sentences, all_inside = all_sentences + 1, all_inside + found
            key, key_inside = key + bool(flags[j]), key_inside + (found and bool(flags[j]))

    def share(a, b):
        return 100 * a / b if b else float("nan")

    return {"time_videos": len(videos), "time_steps": steps, "segments": n_segments,
            "steps_in_segments": share(inside, steps), "segments_with_step": share(held, n_segments),
            "verb_shared_in_segment": share(shared, inside), "sentences_in_segments": share(all_inside, all_sentences),
            "key_clips_in_segments": share(key_inside, key)}
