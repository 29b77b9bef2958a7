"""YouCook2's human step captions beside the ASR transcripts, and the people's test set.

The upstream mirror holds, for 1,736 YouCook2 videos, the ASR transcript (``youcook2/transcript/
<video_id>.txt``, one sentence a line, no times) and the imperative step captions YouCook2's
annotators wrote (``youcook2/split/<video_id>.txt``, one a line, in order).

**The people's test set** is fixed by the video id alone: the videos outside the benchmark whose
SHA-1 (of the id's UTF-8 bytes, hex digest) starts with 0, 1, 2 or 3 (315 of the mirror's 1,419
non-benchmark videos). Their captions are the reference the procedures are scored against
(:mod:`cookproc.evaluation.people`) and are written to a file of their own, which no training rule
reads: nothing is trained, fitted, counted or chosen on them. Every other video (the other
non-benchmark videos and the benchmark's) is a training video.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from cookproc.core.errors import InputError

#: First hex digits of SHA-1(video id) of the people's test videos (among non-benchmark videos).
TEST_PREFIXES = ("0", "1", "2", "3")
SPLITS = ("train", "test")

VIDEOS = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("split", pa.string(), nullable=False),  # train | test (the people's test set)
    pa.field("in_benchmark", pa.bool_(), nullable=False),
    pa.field("n_sentences", pa.int32(), nullable=False),
    pa.field("n_captions", pa.int32(), nullable=False),
])
#: A transcript's sentences: each is a clip, (video_id, clip_idx) as everywhere, with its step words.
SENTENCES = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=False),
    pa.field("sentence", pa.string(), nullable=False),
    pa.field("verbs", pa.list_(pa.string()), nullable=False),
    pa.field("nouns", pa.list_(pa.string()), nullable=False),
])
CAPTIONS = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("caption_idx", pa.int32(), nullable=False),
    pa.field("caption", pa.string(), nullable=False),
    # The caption's words as people write them (cookproc.data.step_words): verb and head-noun lemmas.
    pa.field("verbs", pa.list_(pa.string()), nullable=False),
    pa.field("nouns", pa.list_(pa.string()), nullable=False),
])


def people_split(video_id: str, in_benchmark: bool) -> str:
    """``test`` for a video of the people's test set (module doc), else ``train``."""
    if in_benchmark:
        return "train"
    return "test" if hashlib.sha1(video_id.encode("utf-8")).hexdigest().startswith(TEST_PREFIXES) else "train"


def _read_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not UTF-8 text ({exc.reason})", line=line) from exc
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise InputError(path, "an empty line: expected one sentence (caption) a line", line=number)
    return lines


def read_video_texts(transcript_dir: str | Path, caption_dir: str | Path) -> dict[str, tuple[list[str], list[str]]]:
    """{video id: (transcript sentences, captions)} of every video with both files, sorted by id;
    a video with only one of them is an error naming it (the mirror has both for every video)."""
    transcript_dir, caption_dir = Path(transcript_dir), Path(caption_dir)
    for folder in (transcript_dir, caption_dir):
        if not folder.is_dir():
            raise InputError(folder, "expected a folder of <video_id>.txt files")
    transcripts = {p.stem: p for p in transcript_dir.glob("*.txt")}
    captions = {p.stem: p for p in caption_dir.glob("*.txt")}
    unpaired = sorted(set(transcripts) ^ set(captions))
    if unpaired:
        missing = caption_dir if unpaired[0] in transcripts else transcript_dir
        raise InputError(missing / f"{unpaired[0]}.txt", f"missing: {len(unpaired)} video(s) have a transcript or "
                         "captions but not both")
    if not transcripts:
        raise InputError(transcript_dir, "no transcript (*.txt) found")
    return {v: (_read_lines(transcripts[v]), _read_lines(captions[v])) for v in sorted(transcripts)}


def videos_table(texts: dict[str, tuple[list[str], list[str]]], benchmark_ids: Iterable[str]) -> pa.Table:
    benchmark = set(benchmark_ids)
    ids = sorted(texts)
    return pa.table({
        "video_id": ids,
        "split": [people_split(v, v in benchmark) for v in ids],
        "in_benchmark": [v in benchmark for v in ids],
        "n_sentences": [len(texts[v][0]) for v in ids],
        "n_captions": [len(texts[v][1]) for v in ids],
    }, schema=VIDEOS)


def sentences_table(texts: dict[str, tuple[list[str], list[str]]]) -> pa.Table:
    """Every video's transcript sentences with their step words (parsed here: spaCy and WordNet)."""
    from cookproc.data.step_words import transcript_words

    rows = [(v, i, s) for v in sorted(texts) for i, s in enumerate(texts[v][0])]
    words = transcript_words([r[2] for r in rows])
    return pa.table({"video_id": [r[0] for r in rows], "clip_idx": [r[1] for r in rows],
                     "sentence": [r[2] for r in rows], "verbs": [list(w.verbs) for w in words],
                     "nouns": [list(w.nouns) for w in words]}, schema=SENTENCES)


def captions_table(texts: dict[str, tuple[list[str], list[str]]], videos: Iterable[str]) -> pa.Table:
    """The captions of ``videos`` with their step words (parsed here: spaCy and WordNet)."""
    from cookproc.data.step_words import caption_words

    rows = [(v, i, c) for v in sorted(videos) for i, c in enumerate(texts[v][1])]
    words = caption_words([r[2] for r in rows])
    return pa.table({"video_id": [r[0] for r in rows], "caption_idx": [r[1] for r in rows],
                     "caption": [r[2] for r in rows], "verbs": [list(w.verbs) for w in words],
                     "nouns": [list(w.nouns) for w in words]}, schema=CAPTIONS)


def read_caption_segments(path: str | Path) -> tuple[dict[str, list[tuple[float, float, str]]], list[int]]:
    """YouCook2's captions with their segment times (``youcook2/urlsegmentcaption.txt``: URL, start
    and end in seconds, caption, tab-separated): {video id: [(start, end, caption)] in file order},
    and the lines whose first cell names no video (the pinned file has five whose URL is ``cc``: they
    belong to no video, so no video's segments lose anything; the caller reports them)."""
    path = Path(path)
    out: dict[str, list[tuple[float, float, str]]] = {}
    no_video = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 4:
            raise InputError(path, "expected URL (…watch?v=<id>), start, end and caption, tab-separated", line=number)
        try:
            start, end = float(cells[1]), float(cells[2])
        except ValueError:
            raise InputError(path, f"start and end must be seconds, not {cells[1]!r} and {cells[2]!r}",
                             line=number) from None
        if not 0 <= start <= end:
            raise InputError(path, f"a segment from {start} s to {end} s", line=number)
        if "v=" not in cells[0]:
            no_video.append(number)
            continue
        out.setdefault(cells[0].split("v=", 1)[1].split("&", 1)[0], []).append((start, end, cells[3]))
    return out, no_video
