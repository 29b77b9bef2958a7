"""The step model scored on the benchmark's key clips, as a separate, labelled row.

The step models users get learn from the benchmark videos' captions (and, for
``captions-benchmark``, their gold key clips), so their key steps on the benchmark are not a held-out
score. This module trains the same model on the YouCook2 videos *outside* the benchmark only (its
thresholds chosen on those of them in inner validation) and scores its key steps on every benchmark
video whose clips are its transcript's sentences, with Table 4's metrics over all clips. It is not
leave-recipes-out: the other videos show the same 89 recipes. A step model marks few steps (one
clip per verb it writes), so its recall of the benchmark's key clips is low by design.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from cookproc.captions.features import VideoText
from cookproc.captions.model import StepModel, TrainingVideo
from cookproc.scoring.metrics import score_keyclips

#: The row's name in results/captions/steps_on_benchmark.csv (and numbers.json).
SYSTEM = "steps-captions (trained on other YouCook2 videos of the same recipes)"
COLUMNS = ["system", "n_videos", "n_clips", "accuracy", "precision", "recall", "f1", "key_share", "step_share"]


def outside(videos: Sequence[TrainingVideo], benchmark: set[str]) -> list[TrainingVideo]:
    """The training videos that are not benchmark videos."""
    return [v for v in videos if v.text.video_id not in benchmark]


def key_step_scores(model: StepModel, texts: Sequence[VideoText], gold: Mapping[str, np.ndarray]) -> dict:
    """Accuracy, P, R, F1 (percent) of the model's steps as key clips against ``gold``, over every
    clip of ``texts``, and the shares of gold key clips and of steps among the clips."""
    flags_gold, flags_steps = [], []
    for text, steps in zip(texts, model.steps(texts)):
        flags = np.zeros(len(text.sentences), dtype=bool)
        flags[list(steps.verbs)] = True
        flags_steps.append(flags)
        flags_gold.append(np.asarray(gold[text.video_id], dtype=bool))
    g, p = np.concatenate(flags_gold), np.concatenate(flags_steps)
    score = score_keyclips(g, p)
    return {"system": SYSTEM, "n_videos": len(texts), "n_clips": int(g.size), "accuracy": 100 * score.accuracy,
            "precision": 100 * score.precision, "recall": 100 * score.recall, "f1": 100 * score.f1,
            "key_share": 100 * float(g.mean()), "step_share": 100 * float(p.mean())}
