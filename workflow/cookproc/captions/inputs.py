"""The caption stage's tables read back, joined per video (torch-free).

``results/captions/``: ``videos.parquet`` (the people's split), ``sentences.parquet`` (every
transcript sentence, a clip, with its step words), ``captions.train.parquet`` (the training videos'
captions; the test videos' are in a file of their own that only the scoring reads),
``sentence_vectors.parquet`` and ``caption_vectors.parquet`` (the frozen encoder's vectors; in the
latter, ``clip_idx`` is the caption's index), ``alignment.parquet``.
"""
from __future__ import annotations

import os
from typing import Mapping

import numpy as np
import pandas as pd

from cookproc.captions.align import ALIGNMENT
from cookproc.captions.features import VideoText
from cookproc.captions.model import TrainingVideo
from cookproc.core.errors import InputError
from cookproc.core.parquet_io import read_parquet
from cookproc.data.captions import CAPTIONS, SENTENCES, VIDEOS
from cookproc.data.step_words import StepWords
from cookproc.learn.sentence_vectors import read_text_features


def read_videos(path: str | os.PathLike) -> pd.DataFrame:
    return read_parquet(path, VIDEOS).to_pandas()


def read_sentences(path: str | os.PathLike) -> dict[str, pd.DataFrame]:
    """{video id: its sentences in clip order (clip_idx, sentence, verbs, nouns)}."""
    table = read_parquet(path, SENTENCES).to_pandas().sort_values(["video_id", "clip_idx"], kind="stable")
    return {v: g.reset_index(drop=True) for v, g in table.groupby("video_id", sort=True)}


def read_captions(path: str | os.PathLike) -> dict[str, list[StepWords]]:
    """{video id: its captions' step words, in caption order}."""
    table = read_parquet(path, CAPTIONS).to_pandas().sort_values(["video_id", "caption_idx"], kind="stable")
    return {v: [StepWords(tuple(r.verbs), tuple(r.nouns)) for r in g.itertuples()]
            for v, g in table.groupby("video_id", sort=True)}


def read_vectors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """{video id: its rows' vectors in index order}."""
    keys, vectors = read_text_features(path)
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    out: dict[str, list[int]] = {}
    for i in order:
        out.setdefault(keys[i][0], []).append(i)
    return {v: vectors[rows] for v, rows in out.items()}


def read_alignment(path: str | os.PathLike) -> dict[str, list[int]]:
    """{video id: each caption's aligned sentence, in caption order}."""
    table = read_parquet(path, ALIGNMENT).to_pandas().sort_values(["video_id", "caption_idx"], kind="stable")
    return {v: g["clip_idx"].astype(int).tolist() for v, g in table.groupby("video_id", sort=True)}


def video_text(video_id: str, sentences: pd.DataFrame, vectors: np.ndarray) -> VideoText:
    return VideoText(video_id, [s.lower() for s in sentences["sentence"]],
                     [StepWords(tuple(v), tuple(n)) for v, n in zip(sentences["verbs"], sentences["nouns"])], vectors)


def benchmark_key_clips(clips: pd.DataFrame, sentences: Mapping[str, pd.DataFrame]) -> dict[str, np.ndarray]:
    """The benchmark's gold key flags of each benchmark video whose clips are its transcript's
    sentences (the same number, in order; the benchmark's clips are the transcript's lines)."""
    out = {}
    for video, group in clips.sort_values(["video_id", "clip_idx"]).groupby("video_id", sort=True):
        if video in sentences and len(sentences[video]) == len(group):
            out[video] = group["is_key"].to_numpy(dtype=bool)
    return out


def training_videos(paths: Mapping[str, str | os.PathLike], clips: pd.DataFrame) -> list[TrainingVideo]:
    """Every training video with its sentences, vectors, captions and alignment, and the benchmark's
    gold key clips where it has them. ``paths``: videos, sentences, train, sentence_vectors,
    caption_vectors, alignment."""
    videos = read_videos(paths["videos"])
    train = sorted(videos.loc[videos["split"] == "train", "video_id"])
    sentences, captions = read_sentences(paths["sentences"]), read_captions(paths["train"])
    sentence_vectors, caption_vectors = read_vectors(paths["sentence_vectors"]), read_vectors(paths["caption_vectors"])
    alignment, gold = read_alignment(paths["alignment"]), benchmark_key_clips(clips, sentences)
    out = []
    for video in train:
        for what, table in (("sentences", sentences), ("captions", captions), ("sentence vectors", sentence_vectors),
                            ("caption vectors", caption_vectors), ("alignment", alignment)):
            if video not in table:
                raise InputError(paths["videos"], f"training video {video} has no {what}")
        out.append(TrainingVideo(video_text(video, sentences[video], sentence_vectors[video]), captions[video],
                                 caption_vectors[video], alignment[video], gold.get(video)))
    return out
