"""Per-video jobs and their gathering: one job per video, so a bad video fails (or, when the user
asks, skips) alone, and a gather step that concatenates the parts and reports what was skipped."""
from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pyarrow as pa

from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.video.frames import Video, VideoError, find_video, open_video, verify_decodable

log = logging.getLogger(__name__)

STATUS_FIELDS = ("video_id", "status", "reason")


@dataclass(frozen=True)
class VideoStatus:
    video_id: str
    status: str  # "ok" or "skipped"
    reason: str = ""


def run_video_job(video_id: str, videos_dir: str | Path, extensions: Sequence[str], *, skip_bad: bool,
                  work: Callable[[Video], pa.Table], schema: pa.Schema) -> tuple[pa.Table, VideoStatus]:
    """Find, open and check ``video_id``, then ``work(video)``. A VideoError (missing, truncated,
    undecodable, timestamps past the end) propagates unless ``skip_bad``, when the result is an
    empty table and a 'skipped' status carrying the message."""
    try:
        video = open_video(find_video(videos_dir, video_id, extensions))
        verify_decodable(video)
        log.info("%s: %s, %d frames at %.3f fps (%.1f s)", video_id, video.path, video.n_frames, video.fps,
                 video.duration_s)
        table = work(video)
    except VideoError as exc:
        if not skip_bad:
            raise
        log.warning("skipping video %s: %s", video_id, exc)
        return schema.empty_table(), VideoStatus(video_id, "skipped", str(exc))
    return table, VideoStatus(video_id, "ok")


def status_text(statuses: Sequence[VideoStatus]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(STATUS_FIELDS)
    for s in statuses:
        writer.writerow((s.video_id, s.status, " ".join(s.reason.split())))
    return out.getvalue()


def write_status(path: str | Path, status: VideoStatus) -> None:
    atomic_write_text(path, status_text([status]))


def read_status(path: str | Path) -> VideoStatus:
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if len(rows) != 1 or set(rows[0]) != set(STATUS_FIELDS):
        raise ValueError(f"{path}: expected one status row with columns {STATUS_FIELDS}")
    return VideoStatus(rows[0]["video_id"], rows[0]["status"], rows[0]["reason"])


def gather(parts: Sequence[str | Path], statuses: Sequence[str | Path], schema: pa.Schema) -> tuple[pa.Table, list[VideoStatus]]:
    """Concatenate per-video tables (checked against ``schema``); the skipped videos, sorted."""
    tables = [read_parquet(p, schema) for p in parts]
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    skipped = sorted((s for s in map(read_status, statuses) if s.status != "ok"), key=lambda s: s.video_id)
    return table, skipped
