"""Video decoding and frame sampling on tiny generated videos (also home of the video helpers the
other visual tests import)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cookproc.video.frames import (VideoError, centre_indices, find_video, fixed_segments, open_video,
                                   verify_decodable)
from cookproc.video.resnet import clip_frame_samples

BITS = 8  # frame i shows i in binary as BITS vertical black/white bands: a decoded frame reveals its index


def make_video(path: str | Path, n_frames: int = 40, fps: int = 10, width: int = 64, height: int = 48,
               *, faststart: bool = False) -> Path:
    """A small MPEG-4 video whose frame i shows i mod 2**BITS as black/white bands (lossy coding
    blurs band edges, never a band's mean)."""
    import av

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(path), "w", options=options) as container:
        stream = container.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"qscale": "2"}
        for i in range(n_frames):
            image = np.empty((height, width, 3), np.uint8)
            bands = np.array([255 if (i >> b) & 1 else 0 for b in range(BITS)], np.uint8)
            image[...] = np.repeat(bands, -(-width // BITS))[:width][None, :, None]
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def decoded_index(frame: np.ndarray) -> int:
    width = frame.shape[1]
    band = -(-width // BITS)
    return sum(1 << b for b in range(BITS) if frame[:, b * band + 2:(b + 1) * band - 2].mean() > 127)


@pytest.fixture(scope="module")
def video_file(tmp_path_factory) -> Path:
    return make_video(tmp_path_factory.mktemp("videos") / "vidA.mp4", n_frames=40, fps=10)


def test_centre_indices_follow_tsn_sampling():
    assert centre_indices(0, 100, 10) == [5, 15, 25, 35, 45, 55, 65, 75, 85, 95]
    assert centre_indices(10, 18, 8) == list(range(10, 18))
    assert centre_indices(0, 3, 6) == [0, 0, 1, 1, 2, 2]  # short span: repeats, never leaves it
    assert centre_indices(7, 7, 3) == [7, 7, 7]
    with pytest.raises(ValueError):
        centre_indices(0, 10, 0)


def test_fixed_segments_cover_the_video():
    assert fixed_segments(12.0, 5.0) == [(0.0, 5.0), (5.0, 10.0), (10.0, 12.0)]
    assert fixed_segments(10.0, 5.0) == [(0.0, 5.0), (5.0, 10.0)]
    assert fixed_segments(3.0, 5.0) == [(0.0, 3.0)]


def test_decoded_frames_are_the_requested_ones(video_file):
    video = open_video(video_file)
    assert (video.n_frames, video.fps) == (40, 10.0)
    assert video.duration_s == pytest.approx(4.0)
    frames = video.read([3, 0, 39, 3])
    assert frames.shape == (4, 48, 64, 3) and frames.dtype == np.uint8
    assert [decoded_index(f) for f in frames] == [3, 0, 39, 3]
    assert video.frame_times([0, 10, 39]).tolist() == pytest.approx([0.0, 1.0, 3.9])
    verify_decodable(video)


def test_clip_samples_are_uniform_within_each_clip(video_file):
    video = open_video(video_file)
    samples = clip_frame_samples(video, [(0, 0.0, 2.0), (1, 2.0, None)], frames_per_clip=4)
    assert samples == [(0, 2), (0, 7), (0, 12), (0, 17), (1, 22), (1, 27), (1, 32), (1, 37)]
    frames = video.read([f for _, f in samples])
    assert [decoded_index(f) for f in frames] == [2, 7, 12, 17, 22, 27, 32, 37]
    # A clip running past the video's end stops at its last frame.
    assert clip_frame_samples(video, [(5, 3.5, 99.0)], frames_per_clip=2) == [(5, 36), (5, 38)]


def test_clip_after_the_end_of_the_video_is_an_error(video_file):
    video = open_video(video_file)
    with pytest.raises(VideoError, match=r"clip 7 starts at 4.50 s but the video has 40 frames"):
        clip_frame_samples(video, [(7, 4.5, 6.0)], frames_per_clip=2)
    with pytest.raises(VideoError, match="outside"):
        video.read([40])


def test_find_video(tmp_path):
    make_video(tmp_path / "abc.mp4", n_frames=2)
    assert find_video(tmp_path, "abc", ["mkv", "mp4"]) == tmp_path / "abc.mp4"
    with pytest.raises(VideoError, match=r"video 'xyz' not found \(looked for xyz.mp4, xyz.webm\)"):
        find_video(tmp_path, "xyz", ["mp4", "webm"])
    (tmp_path / "abc.mkv").write_bytes(b"")
    with pytest.raises(VideoError, match="ambiguous"):
        find_video(tmp_path, "abc", ["mp4", "mkv"])


def test_corrupt_and_truncated_videos_fail_clearly(tmp_path):
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(b"not a video at all " * 50)
    with pytest.raises(VideoError, match=r"garbage.mp4: cannot open video"):
        open_video(garbage)
    # Header first (faststart), then cut: the container still promises every frame.
    whole = make_video(tmp_path / "whole.mp4", n_frames=60, faststart=True).read_bytes()
    truncated = tmp_path / "truncated.mp4"
    truncated.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(VideoError, match=r"truncated.mp4"):
        verify_decodable(open_video(truncated))
    with pytest.raises(VideoError, match="not found"):
        open_video(tmp_path / "absent.mp4")
