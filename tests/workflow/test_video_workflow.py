"""The visual branch end to end on the tiny fixture: two generated videos -> ResNet-50 features ->
own TSM -> aligned segments -> visual and fusion tuples; then a missing and a corrupt video.

The stage runs on its own: a Snakefile that includes only the rule files it needs (common, data,
systems, video) from a folder that links the repository's rules/ and workflow/, so that another
stage's rules do not take part.
"""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cookproc.core.parquet_io import read_parquet
from cookproc.core.schemas import ALIGNED_SEGMENTS, TSM_SEGMENTS, TUPLES
from cookproc.video.resnet import EMBEDDING_DIM, FRAME_FEATURES
from fixtures import EPIC_NOUNS, EPIC_VERBS, EXTRA_VIDEOS, REPO, VIDEOS, make_workdir, n_clips, write_tiny_upstream
from test_video_frames import make_video
from test_video_resnet import save_random_resnet
from test_video_tsm import save_random_tsm

pytestmark = pytest.mark.slow
VIDEO_SECONDS = {"vidPizza001": 40, "vidSoup0004": 32}  # both past their last clip's start
FPS = 2
SYSTEMS = [f"{kind}-tsm-{variant}" for kind in ("visual", "fusion-naive", "fusion-oracle")
           for variant in ("paper", "corrected")]


STAGE_SNAKEFILE = """\
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/resources.smk"
include: "rules/data.smk"
include: "rules/systems.smk"
include: "rules/video.smk"
"""


def stage_workflow(folder: Path) -> Path:
    """A Snakefile of the data, systems and video stages beside links to rules/ and workflow/."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("rules", "workflow", "envs"):
        (folder / name).symlink_to(REPO / name, target_is_directory=True)
    (folder / "Snakefile").write_text(STAGE_SNAKEFILE, encoding="utf-8")
    return folder / "Snakefile"


def run_snakemake(snakefile: Path, workdir: Path, *targets: str, check: bool = True):
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(snakefile), "--directory", str(workdir),
           "-c2", *targets]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-4000:]}\n"
                             f"{proc.stderr[-8000:]}")
    return proc


@pytest.fixture(scope="module")
def assets(tmp_path_factory):
    base = tmp_path_factory.mktemp("visual")
    return {
        "snakefile": stage_workflow(base / "workflow"),
        "upstream": write_tiny_upstream(base / "upstream"),
        "resnet": save_random_resnet(base / "ckpt" / "resnet50.pth"),
        "tsm": save_random_tsm(base / "ckpt" / "tsm.pth.tar", num_verbs=len(EPIC_VERBS), num_nouns=len(EPIC_NOUNS),
                               segments=2),
        "base": base,
    }


def visual_config(assets, **overrides):
    config = {
        "video_ids": sorted(VIDEO_SECONDS), "device": "cpu", "sources": ["tsm"],
        "resnet": {"checkpoint": str(assets["resnet"]), "frames_per_clip": 2, "resize": 32, "crop": 32,
                   "batch_size": 8},
        "tsm": {"checkpoint": str(assets["tsm"]), "segment_count": 2, "top_k": 2, "resize": 32, "crop": 32,
                "batch_size": 4},
    }
    config.update(overrides)
    return {"video": config}


@pytest.fixture(scope="module")
def finished(assets):
    workdir = make_workdir(assets["base"] / "run", assets["upstream"], visual_config(assets))
    for video_id, seconds in VIDEO_SECONDS.items():
        make_video(workdir / "data" / "videos" / f"{video_id}.mp4", n_frames=seconds * FPS, fps=FPS)
    run_snakemake(assets["snakefile"], workdir, "results/features/frames/resnet50.parquet", "video_all",
                  "results/video/tsm/upstream.parquet")
    return workdir


def test_frame_features_for_every_clip_of_the_decoded_videos(finished):
    table = read_parquet(finished / "results/features/frames/resnet50.parquet", FRAME_FEATURES)
    clips_per_video = {v: len(VIDEOS[v][1]) for v in VIDEO_SECONDS}
    assert table.num_rows == 2 * sum(clips_per_video.values())
    rows = table.select(["video_id", "clip_idx", "frame_idx"]).to_pylist()
    assert sorted({(r["video_id"], r["clip_idx"]) for r in rows}) == sorted(
        (v, c) for v, n in clips_per_video.items() for c in range(n))
    # Clip 1 of vidPizza001 spans 7.3-14.3 s = frames 15..29 at 2 fps: centres of two halves.
    assert [r["frame_idx"] for r in rows if (r["video_id"], r["clip_idx"]) == ("vidPizza001", 1)] == [18, 25]
    assert len(table.column("embedding")[0].as_py()) == EMBEDDING_DIM
    report = (finished / "results/features/frames/resnet50.skipped.tsv").read_text()
    assert report == "video_id\tstatus\treason\n"


def test_own_tsm_labels_every_segment_and_aligns_to_every_clip(finished):
    tsm = read_parquet(finished / "results/video/tsm/tsm.parquet", TSM_SEGMENTS).to_pylist()
    for video_id, seconds in VIDEO_SECONDS.items():
        mine = [r for r in tsm if r["video_id"] == video_id]
        assert len(mine) == 2 * -(-seconds // 5)  # top-2 of every 5-s segment
        assert max(r["end_s"] for r in mine) == pytest.approx(seconds)
    assert {r["verb_key"] for r in tsm} <= {key for _, key, _ in EPIC_VERBS}
    aligned = read_parquet(finished / "results/video/aligned/tsm.parquet", ALIGNED_SEGMENTS)
    hit = set(zip(aligned.column("video_id").to_pylist(), aligned.column("clip_idx").to_pylist()))
    assert hit == {(v, c) for v in VIDEO_SECONDS for c in range(len(VIDEOS[v][1]))}
    assert (finished / "results/video/aligned/tsm.paper.parquet").exists()
    imported = read_parquet(finished / "results/video/tsm/upstream.parquet", TSM_SEGMENTS)
    assert set(imported.column("video_id").to_pylist()) == set(VIDEOS) | set(EXTRA_VIDEOS)


def test_every_visual_system_has_one_row_per_benchmark_clip(finished):
    for name in SYSTEMS:
        table = read_parquet(finished / f"results/tuples/{name}.parquet", TUPLES)
        assert table.num_rows == n_clips() and set(table.column("system").to_pylist()) == {name}
    visual = read_parquet(finished / "results/tuples/visual-tsm-corrected.parquet", TUPLES).to_pylist()
    decoded = [r for r in visual if r["video_id"] in VIDEO_SECONDS]
    assert all(r["verbs"] for r in decoded)  # every decoded clip has a top-1 verb
    assert not any(r["verbs"] or r["args"] for r in visual if r["video_id"] not in VIDEO_SECONDS)
    naive = read_parquet(finished / "results/tuples/fusion-naive-tsm-corrected.parquet", TUPLES).to_pylist()
    srl = read_parquet(finished / "results/tuples/upstream-srl-heur.parquet", TUPLES).to_pylist()
    for fused, utterance, vis in zip(naive, srl, visual):
        assert set(fused["verbs"]) == set(utterance["verbs"]) | set(vis["verbs"])


def test_missing_video_fails_its_job_and_a_skipped_one_is_reported(assets):
    ids = ["vidPizza002", "vidSoup0004"]
    workdir = make_workdir(assets["base"] / "bad", assets["upstream"], visual_config(assets, video_ids=ids))
    make_video(workdir / "data" / "videos" / "vidSoup0004.mp4", n_frames=64, fps=FPS)
    proc = run_snakemake(assets["snakefile"], workdir, "results/video/tsm/videos/vidPizza002.parquet", check=False)
    assert proc.returncode != 0
    log = (workdir / "logs/video/video_tsm/vidPizza002.log").read_text()
    assert "video 'vidPizza002' not found (looked for vidPizza002.mp4" in log

    (workdir / "data" / "videos" / "vidPizza002.mp4").write_bytes(b"\x00garbage" * 200)
    skip = make_workdir(workdir, assets["upstream"], visual_config(assets, video_ids=ids, skip_bad_videos=True))
    run_snakemake(assets["snakefile"], skip, "results/video/tsm/tsm.parquet")
    with open(skip / "results/video/tsm/tsm.skipped.tsv", newline="") as handle:
        report = list(csv.DictReader(handle, delimiter="\t"))
    assert [(r["video_id"], r["status"]) for r in report] == [("vidPizza002", "skipped")]
    assert "vidPizza002.mp4: cannot open video" in report[0]["reason"]
    videos = set(pq.read_table(skip / "results/video/tsm/tsm.parquet").column("video_id").to_pylist())
    assert videos == {"vidSoup0004"}
