"""Assign TSM segments to clips by time.

Clip i spans [its timestamp, clip i+1's timestamp]; a video's last clip runs to the video's end.
As in upstream's get_video_pred.py, a segment [s0, s1] belongs to clip [c0, c1] when a clip
boundary falls inside it (s0 <= c0 <= s1 or s0 <= c1 <= s1) or it lies inside the clip
(s0 >= c0 and s1 <= c1). Boundaries are inclusive, so a segment that only touches a clip at an
end point belongs to it, and one segment may belong to several clips.

Two timings of the clips:
* ``clips`` (the corrected default): start/end from ``results/dataset/clips.parquet``.
* ``upstream`` (the paper variant): what upstream computed from the CSV's TimeStamp cells, which
  reads ``int(a) * 60 + float(b)`` of ``a:b[:c]``, so the 172 ``H:MM:SS`` cells (``0:03:38``)
  become minute 0, second 3; a video's last clip ends at 1,000,000 s.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.schemas import ALIGNED_SEGMENTS, TSM_SEGMENTS

TIMINGS = ("clips", "upstream")
UPSTREAM_OPEN_END_S = 1_000_000.0


@dataclass(frozen=True)
class ClipSpan:
    video_id: str
    clip_idx: int
    start_s: float
    end_s: float  # math.inf: to the video's end


def segment_in_clip(seg_start: np.ndarray, seg_end: np.ndarray, clip_start: float, clip_end: float) -> np.ndarray:
    """The alignment rule, vectorised over segments."""
    return (((seg_start <= clip_start) & (clip_start <= seg_end))
            | ((seg_start <= clip_end) & (clip_end <= seg_end))
            | ((seg_start >= clip_start) & (seg_end <= clip_end)))


def spans_from_clips(clips: pa.Table) -> list[ClipSpan]:
    """Clip spans from a CLIPS table (null ``end_s``: to the video's end)."""
    spans = []
    for row in clips.select(["video_id", "clip_idx", "start_s", "end_s"]).to_pylist():
        end = math.inf if row["end_s"] is None else float(row["end_s"])
        spans.append(ClipSpan(row["video_id"], int(row["clip_idx"]), float(row["start_s"]), end))
    return spans


def upstream_timestamp(text: str) -> float:
    """Upstream's reading of a TimeStamp cell: ``int(parts[0]) * 60 + float(parts[1])``."""
    parts = text.split(":")
    return int(parts[0]) * 60 + float(parts[1])


def spans_upstream(csv_path: str | Path, clips: pa.Table) -> list[ClipSpan]:
    """Clip spans as upstream computed them from the benchmark CSV, keyed to the clips of ``clips``
    through the CSV record's first line (CLIPS.source_line)."""
    csv_path = Path(csv_path)
    by_line = {int(r["source_line"]): (r["video_id"], int(r["clip_idx"]))
               for r in clips.select(["source_line", "video_id", "clip_idx"]).to_pylist()}
    reader = csv.reader(io.StringIO(csv_path.read_text(encoding="utf-8"), newline=""))
    header = next(reader, None)
    if not header or "VideoUrl" not in header or "TimeStamp" not in header:
        raise InputError(csv_path, f"expected columns VideoUrl and TimeStamp, found {header}", line=1)
    url_col, time_col = header.index("VideoUrl"), header.index("TimeStamp")
    records = []  # (line, video_id in the URL, start as upstream read it)
    line_start = reader.line_num + 1
    for record in reader:
        line, line_start = line_start, reader.line_num + 1
        if not record or all(not cell.strip() for cell in record):
            continue
        try:
            start = upstream_timestamp(record[time_col])
        except (ValueError, IndexError):
            raise InputError(csv_path, f"upstream cannot read TimeStamp {record[time_col]!r}", line=line,
                             column="TimeStamp") from None
        records.append((line, record[url_col].split("?v=")[-1], start))  # raw id, as upstream compares it
    if len(records) != len(by_line):
        raise InputError(csv_path, f"{len(records)} records but the clips table has {len(by_line)} clips: "
                         "the clips were built from a different CSV")
    spans = []
    for i, (line, url_video, start) in enumerate(records):
        if line not in by_line:
            raise InputError(csv_path, "record has no clip in the clips table (source_line mismatch)", line=line)
        video_id, clip_idx = by_line[line]
        if url_video.split("&", 1)[0].strip() != video_id:
            raise InputError(csv_path, f"record is video {url_video!r} but clip {video_id}/{clip_idx} in the "
                             "clips table", line=line)
        nxt = records[i + 1] if i + 1 < len(records) else None
        # Upstream: the next CSV row's time when it is the same video, else 1,000,000 s.
        end = nxt[2] if nxt is not None and nxt[1] == url_video else UPSTREAM_OPEN_END_S
        spans.append(ClipSpan(video_id, clip_idx, start, end))
    return spans


def align(segments: pa.Table, spans: Iterable[ClipSpan]) -> pa.Table:
    """ALIGNED_SEGMENTS: one row per (clip, segment row) pair satisfying the rule; clips of videos
    without segments get no rows."""
    by_video: dict[str, dict[str, np.ndarray]] = {}
    columns = segments.select(TSM_SEGMENTS.names).to_pydict()
    order = np.lexsort((np.asarray(columns["rank"]), np.asarray(columns["segment_idx"]),
                        np.asarray(columns["video_id"], dtype=object).astype(str)))
    video_ids = np.asarray(columns["video_id"], dtype=object)[order]
    for video_id in dict.fromkeys(video_ids.tolist()):
        rows = order[video_ids == video_id]
        by_video[video_id] = {
            "rows": rows,
            "start": np.asarray(columns["start_s"], dtype=np.float64)[rows],
            "end": np.asarray(columns["end_s"], dtype=np.float64)[rows],
        }
    picked_rows: list[np.ndarray] = []
    clip_of_row: list[np.ndarray] = []
    videos_of_row: list[str] = []
    for span in spans:
        segs = by_video.get(span.video_id)
        if segs is None:
            continue
        hit = segs["rows"][segment_in_clip(segs["start"], segs["end"], span.start_s, span.end_s)]
        picked_rows.append(hit)
        clip_of_row.append(np.full(len(hit), span.clip_idx, dtype=np.int32))
        videos_of_row.extend([span.video_id] * len(hit))
    rows = np.concatenate(picked_rows) if picked_rows else np.zeros(0, dtype=np.int64)
    taken = segments.select(TSM_SEGMENTS.names).take(pa.array(rows, pa.int64()))
    out = {name: taken.column(name) for name in TSM_SEGMENTS.names}
    out["video_id"] = pa.array(videos_of_row, pa.string())
    out["clip_idx"] = pa.array(np.concatenate(clip_of_row) if clip_of_row else [], pa.int32())
    return pa.table({name: out[name] for name in ALIGNED_SEGMENTS.names}, schema=ALIGNED_SEGMENTS)


def clip_spans(timing: str, clips: pa.Table, csv_path: str | Path | None = None) -> Sequence[ClipSpan]:
    if timing == "clips":
        return spans_from_clips(clips)
    if timing == "upstream":
        if csv_path is None:
            raise ValueError("the upstream timing needs the benchmark CSV")
        return spans_upstream(csv_path, clips)
    raise ValueError(f"timing must be one of {TIMINGS}, not {timing!r}")
