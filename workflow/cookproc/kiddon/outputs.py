"""Segmenting the benchmark clips, and the frames / key-clip / tuple tables built from it.

Each clip's sentence is tokenized and split like a document (a clip is almost always one
sentence) and every sentence is segmented. Two tuple layouts come from the frames:

* ``all`` (default): every frame of the clip; verbs = PREDs, arguments = DOBJs and PARGs.
* ``first-frame`` (the paper's): upstream fed each video's sentences to the original program as one
  document, matched the output blocks back to clips by their SENT line and, because the writer
  puts a blank line after every frame, kept only the first frame of a sentence. A clip that the
  original splitter merged with its neighbour (e.g. after "... 2 cups.") matched no SENT line and
  got nothing; ``upstream_matched`` records this.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

import pyarrow as pa

from cookproc.core.schemas import KEYCLIPS, TUPLES

from .model import Model
from .roles import DOBJ, PARG, assign_roles
from .segmenter import Segmenter
from .text import split_sentences, tokenize

LAYOUTS = ("all", "first-frame")
PRED_ROLE = "PRED"

#: One row per predicate or argument of a frame of a clip's sentence.
FRAMES = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("sentence_idx", pa.int32(), nullable=False),  # sentence within the clip
        pa.field("frame_idx", pa.int32(), nullable=False),  # frame within the sentence
        pa.field("arg_idx", pa.int32(), nullable=False),  # 0 = the PRED row, then DOBJ, PARGs, OARGs
        pa.field("role", pa.string(), nullable=False),  # PRED, DOBJ, PARG or OARG
        pa.field("text", pa.string(), nullable=False),
        pa.field("prep", pa.string(), nullable=True),  # preposition of a PARG
        # Whether upstream's match-back would find this clip (it is one sentence of its video).
        pa.field("upstream_matched", pa.bool_(), nullable=False),
    ]
)
FRAMES_KEY = ("video_id", "clip_idx", "sentence_idx", "frame_idx", "arg_idx")


def _squeeze(text: str) -> str:
    return "".join(text.split())


def upstream_matched(sentences: Sequence[str]) -> list[bool]:
    """For a video's clip sentences (in order): whether the original splitter, reading them as one
    document, produces a sentence with exactly this clip's text (white space aside)."""
    tokens: list[str] = []
    for sentence in sentences:
        tokens.extend(tokenize(sentence))
    whole = {_squeeze("".join(tokens[a:b])) for a, b in split_sentences(tokens)}
    return [_squeeze("".join(tokenize(s))) in whole for s in sentences]


def segment_clips(clips: Iterable[tuple[str, int, str]], model: Model, segmenter: Segmenter) -> list[dict]:
    """Frame rows (schema FRAMES) for clips given as (video_id, clip_idx, sentence)."""
    by_video: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for video_id, clip_idx, sentence in clips:
        by_video[video_id].append((clip_idx, sentence))
    rows: list[dict] = []
    for video_id in sorted(by_video):
        video_clips = sorted(by_video[video_id])
        matched = upstream_matched([s for _, s in video_clips])
        for (clip_idx, sentence), is_matched in zip(video_clips, matched):
            tokens = tokenize(sentence)
            spans = split_sentences(tokens)
            for sentence_idx, (a, b) in enumerate(spans):
                parse = segmenter.parse(tuple(tokens[a:b]), model)
                for frame_idx, (verb, chunks) in enumerate(parse.frames):
                    base = dict(video_id=video_id, clip_idx=clip_idx, sentence_idx=sentence_idx,
                                frame_idx=frame_idx, upstream_matched=is_matched)
                    rows.append(dict(base, arg_idx=0, role=PRED_ROLE, text=verb, prep=None))
                    for arg_idx, arg in enumerate(assign_roles(chunks), start=1):
                        rows.append(dict(base, arg_idx=arg_idx, role=arg.role, text=arg.text, prep=arg.prep))
    return rows


def clip_tuples(frame_rows: Iterable[dict], clip_keys: Iterable[tuple[str, int]], layout: str
                ) -> dict[tuple[str, int], tuple[list[str], list[str]]]:
    """Verbs and arguments per clip (every clip of ``clip_keys`` present) in one layout."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    result = {key: ([], []) for key in clip_keys}
    ordered = sorted(frame_rows, key=lambda r: tuple(r[k] for k in FRAMES_KEY))
    for row in ordered:
        key = (row["video_id"], row["clip_idx"])
        if key not in result:
            raise KeyError(f"frame of clip {key} that is not among the benchmark clips")
        if layout == "first-frame" and not (row["upstream_matched"] and row["sentence_idx"] == 0
                                            and row["frame_idx"] == 0):
            continue
        verbs, args = result[key]
        if row["role"] == PRED_ROLE:
            verbs.append(row["text"])
        elif row["role"] in (DOBJ, PARG):
            args.append(row["text"])
    return result


def key_clips(frame_rows: Iterable[dict], clip_keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bool]:
    """A clip is key when the segmenter finds a predicate in its sentence."""
    with_pred = {(r["video_id"], r["clip_idx"]) for r in frame_rows if r["role"] == PRED_ROLE}
    return {key: key in with_pred for key in clip_keys}


def frames_table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=FRAMES)


def keyclips_table(keys: dict[tuple[str, int], bool], system: str) -> pa.Table:
    """KEYCLIPS rows: rule-based, so no score and no cross-validation fold."""
    return pa.Table.from_pylist(
        [dict(system=system, video_id=v, clip_idx=c, is_key=k, score=None, fold=None)
         for (v, c), k in sorted(keys.items())], schema=KEYCLIPS)


def tuples_table(tuples: dict[tuple[str, int], tuple[list[str], list[str]]], system: str) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(system=system, video_id=v, clip_idx=c, verbs=verbs, args=args)
         for (v, c), (verbs, args) in sorted(tuples.items())], schema=TUPLES)
