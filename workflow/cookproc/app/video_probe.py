"""The video a procedure comes from, probed with PyAV: its duration (the last clip's end) and size."""
from __future__ import annotations

from pathlib import Path


def video_info(path: str | Path) -> dict:
    """Duration and size of a video (PyAV), for the clip times and the JSON header."""
    import av

    from cookproc.core.errors import InputError

    path = Path(path)
    try:
        with av.open(str(path)) as container:
            stream = next((s for s in container.streams if s.type == "video"), None)
            if stream is None:
                raise InputError(path, "no video stream in the file")
            if container.duration is not None:
                duration = container.duration / av.time_base
            elif stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            else:
                raise InputError(path, "the video's duration is unknown")
            return {"path": str(path), "duration_s": round(float(duration), 3), "width": stream.width,
                    "height": stream.height}
    except av.error.FFmpegError as exc:
        raise InputError(path, f"cannot read the video: {exc}") from exc
