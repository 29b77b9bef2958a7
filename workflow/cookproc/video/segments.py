"""Import upstream's TSM predictions into the TSM_SEGMENTS table (source ``upstream``).

``clip_manifest_10s.txt``: ``<youtubeid>_<NNNN> <youtubeid> <start> <end>`` (seconds) per 10-second
segment k = NNNN. ``clip_prediction_5s.txt``: ``imgs_cliped_5s/<youtubeid>_<MMMM> <frames> <x>
<verb_key> <noun_key>``: top-1 of the 5-second half M; as in upstream's get_video_pred.py, segment
k longer than 5 s splits into 2k-1 = [start, start+5] and 2k = [start+5, end], otherwise it is
2k-1 = [start, end] alone.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.schemas import TSM_SEGMENTS
from cookproc.video.epic import EpicClasses

HALF_S = 5.0
_SEGMENT_ID = re.compile(r"^(?P<video>.+)_(?P<num>\d{4})$")


def _parse_segment_id(path: Path, line: int, text: str) -> tuple[str, int]:
    match = _SEGMENT_ID.match(text)
    if not match:
        raise InputError(path, f"segment id {text!r} is not <youtubeid>_<NNNN>", line=line)
    return match["video"], int(match["num"])


def read_manifest(path: str | Path) -> dict[tuple[str, int], tuple[float, float]]:
    """(video_id, 5-s segment number) -> (start_s, end_s), split as upstream splits it."""
    path = Path(path)
    halves: dict[tuple[str, int], tuple[float, float]] = {}
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 4:
                raise InputError(path, f"expected 4 fields '<id> <youtubeid> <start> <end>', found {len(parts)}",
                                 line=line_no)
            video_id, num = _parse_segment_id(path, line_no, parts[0])
            if video_id != parts[1]:
                raise InputError(path, f"segment id {parts[0]!r} does not belong to video {parts[1]!r}", line=line_no)
            try:
                start, end = float(parts[2]), float(parts[3])
            except ValueError:
                raise InputError(path, f"start/end {parts[2]!r} {parts[3]!r} are not numbers", line=line_no) from None
            if end < start:
                raise InputError(path, f"segment ends ({end}) before it starts ({start})", line=line_no)
            if end - start > HALF_S:
                pieces = {2 * num - 1: (start, start + HALF_S), 2 * num: (start + HALF_S, end)}
            else:
                pieces = {2 * num - 1: (start, end)}
            for half, span in pieces.items():
                if (video_id, half) in halves:
                    raise InputError(path, f"segment {parts[0]!r} appears twice", line=line_no)
                halves[(video_id, half)] = span
    return halves


def import_upstream(manifest: str | Path, predictions: str | Path, verbs: EpicClasses,
                    nouns: EpicClasses) -> pa.Table:
    """TSM_SEGMENTS rows (rank 1, no scores) for every 5-s segment of the manifest; every segment
    must have exactly one prediction and every prediction a segment."""
    predictions = Path(predictions)
    halves = read_manifest(manifest)
    seen: dict[tuple[str, int], int] = {}
    rows = defaultdict(list)
    with open(predictions, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 5:
                raise InputError(predictions, f"expected 5 fields '<dir>/<id> <frames> <x> <verb> <noun>', "
                                 f"found {len(parts)}", line=line_no)
            video_id, half = _parse_segment_id(predictions, line_no, parts[0].rsplit("/", 1)[-1])
            key = (video_id, half)
            if key not in halves:
                raise InputError(predictions, f"segment {parts[0]!r} is not in the manifest {manifest}", line=line_no)
            if key in seen:
                raise InputError(predictions, f"segment {parts[0]!r} predicted twice (first on line {seen[key]})",
                                 line=line_no)
            seen[key] = line_no
            try:
                verb_class, noun_class = verbs.index(parts[3]), nouns.index(parts[4])
            except KeyError as exc:
                raise InputError(predictions, str(exc.args[0]), line=line_no) from None
            start, end = halves[key]
            for name, value in (("video_id", video_id), ("segment_idx", half), ("start_s", start),
                                ("end_s", end), ("rank", 1), ("verb_class", verb_class),
                                ("verb_key", parts[3]), ("verb_score", None), ("noun_class", noun_class),
                                ("noun_key", parts[4]), ("noun_score", None)):
                rows[name].append(value)
    unpredicted = sorted(set(halves) - set(seen))
    if unpredicted:
        shown = ", ".join(f"{v}_{n:04d}" for v, n in unpredicted[:5])
        raise InputError(predictions, f"{len(unpredicted)} manifest segments have no prediction: {shown}")
    return pa.table({name: pa.array(rows[name], TSM_SEGMENTS.field(name).type) for name in TSM_SEGMENTS.names},
                    schema=TSM_SEGMENTS)
