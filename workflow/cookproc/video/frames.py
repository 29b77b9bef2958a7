"""Local video files: finding them, decoding them with decord, and choosing which frames to read.

Frame sampling follows TSN/TSM: a span of frames is cut into ``count`` equal parts and the centre
frame of each part is taken (``first + int(tick / 2 + tick * t)``, ``tick = (stop - first) / count``).
The key-clip model reads T = 10 such frames per clip; TSM reads ``segment_count`` per 5-second segment.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from cookproc.core.errors import InputError

DEFAULT_EXTENSIONS = ("mp4", "mkv", "webm", "avi", "mov")


class VideoError(InputError):
    """A video that is missing, truncated or cannot be decoded (the message names the file)."""


def find_video(videos_dir: str | Path, video_id: str, extensions: Sequence[str] = DEFAULT_EXTENSIONS) -> Path:
    """The one file ``<videos_dir>/<video_id>.<ext>``; a clear error when there is none or several."""
    videos_dir = Path(videos_dir)
    found = [videos_dir / f"{video_id}.{ext}" for ext in extensions if (videos_dir / f"{video_id}.{ext}").is_file()]
    if not found:
        tried = ", ".join(f"{video_id}.{ext}" for ext in extensions)
        raise VideoError(videos_dir, f"video {video_id!r} not found (looked for {tried})")
    if len(found) > 1:
        raise VideoError(videos_dir, f"video {video_id!r} is ambiguous: {[p.name for p in found]}; keep one")
    return found[0]


def centre_indices(first: int, stop: int, count: int) -> list[int]:
    """``count`` frame indices: the centre frame of each of ``count`` equal parts of [first, stop).

    A span shorter than ``count`` frames repeats frames (every index stays inside the span); an
    empty span (stop <= first) yields ``first`` ``count`` times.
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, not {count}")
    if stop <= first:
        return [first] * count
    tick = (stop - first) / count
    return [first + int(tick / 2.0 + tick * t) for t in range(count)]


def fixed_segments(duration_s: float, segment_s: float) -> list[tuple[float, float]]:
    """Consecutive segments [k*segment_s, (k+1)*segment_s) covering [0, duration_s); the last one
    ends at the video's end (it may be shorter)."""
    if segment_s <= 0:
        raise ValueError(f"segment length must be positive, not {segment_s}")
    n = max(1, math.ceil(duration_s / segment_s - 1e-9))
    return [(k * segment_s, min((k + 1) * segment_s, duration_s)) for k in range(n)]


@dataclass
class Video:
    """An opened video: decord reader plus the numbers every sampler needs."""

    path: Path
    reader: object
    n_frames: int
    fps: float
    duration_s: float

    def span(self, start_s: float, end_s: float | None, *, what: str) -> tuple[int, int]:
        """Frames [first, stop) of the time span [start_s, end_s) (``None``: to the video's end).

        A span that starts at or after the video's last frame is an error: the video is truncated
        or is not the one the timestamps were made for.
        """
        first = int(round(start_s * self.fps))
        if start_s < 0 or first >= self.n_frames:
            raise VideoError(self.path, f"{what} starts at {start_s:.2f} s but the video has "
                             f"{self.n_frames} frames ({self.duration_s:.2f} s): truncated or wrong video")
        stop = self.n_frames if end_s is None or not math.isfinite(end_s) else int(round(end_s * self.fps))
        stop = min(max(stop, first + 1), self.n_frames)
        return first, stop

    def frame_times(self, indices: Sequence[int]) -> np.ndarray:
        """Presentation time (s) of each frame index."""
        if not len(indices):
            return np.zeros(0, dtype=np.float64)
        return np.asarray(self.reader.get_frame_timestamp(list(indices)), dtype=np.float64).reshape(-1, 2)[:, 0]

    def read(self, indices: Sequence[int]) -> np.ndarray:
        """Frames ``indices`` as uint8 RGB (N, H, W, 3); a decoding failure names the file and frames."""
        indices = [int(i) for i in indices]
        if not indices:
            raise ValueError("no frames requested")
        bad = [i for i in indices if not 0 <= i < self.n_frames]
        if bad:
            raise VideoError(self.path, f"frame indices {bad[:5]} outside 0..{self.n_frames - 1}")
        unique = sorted(set(indices))
        try:
            batch = self.reader.get_batch(unique).asnumpy()
        except Exception as exc:  # decord raises its own DECORDError / RuntimeError types
            raise VideoError(self.path, f"cannot decode frames {unique[0]}..{unique[-1]}: "
                             f"{_first_line(exc)} (truncated or corrupt file?)") from exc
        if batch.shape[0] != len(unique) or batch.ndim != 4 or batch.shape[-1] != 3:
            raise VideoError(self.path, f"decoder returned {batch.shape} for {len(unique)} frames")
        position = {idx: i for i, idx in enumerate(unique)}
        return batch[[position[i] for i in indices]]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def open_video(path: str | Path) -> Video:
    """Open ``path`` with decord (CPU decoding, one thread per reader; parallelism is per job)."""
    import decord

    path = Path(path)
    if not path.is_file():
        raise VideoError(path, "video file not found")
    try:
        reader = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=1)
        n_frames = len(reader)
        fps = float(reader.get_avg_fps())
    except Exception as exc:
        raise VideoError(path, f"cannot open video: {_first_line(exc)} (not a video, truncated or corrupt?)") from exc
    if n_frames < 1 or not fps > 0 or not math.isfinite(fps):
        raise VideoError(path, f"video has {n_frames} frames at {fps} fps: nothing to decode")
    try:
        duration = float(reader.get_frame_timestamp(n_frames - 1)[1])
    except Exception as exc:
        raise VideoError(path, f"cannot read frame times: {_first_line(exc)}") from exc
    return Video(path=path, reader=reader, n_frames=n_frames, fps=fps, duration_s=duration)


def verify_decodable(video: Video, *, probes: int = 8) -> None:
    """Decode a few frames spread over the whole video, last frame included, so that a truncated
    file (whose header still promises every frame) fails here with a clear message."""
    wanted = sorted(set(centre_indices(0, video.n_frames, probes) + [video.n_frames - 1]))
    video.read(wanted)
