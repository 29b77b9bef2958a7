"""ResNet-50 features of T frames per clip of one video (or an empty part when it is skipped)."""
from cookproc.core.logs import script_logging
from cookproc.core.torch_runtime import configure_torch
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIPS
from cookproc.video.imaging import resolve_device
from cookproc.video.jobs import run_video_job, write_status
from cookproc.video.resnet import FRAME_FEATURES, FRAME_FEATURES_KEY, extract_frame_features, load_resnet50

with script_logging(snakemake) as log:
    video_id, p = snakemake.wildcards.video_id, snakemake.params
    configure_torch(snakemake.threads, p.device, deterministic=p.deterministic)
    table = read_parquet(snakemake.input.clips, CLIPS)
    rows = [r for r in table.select(["video_id", "clip_idx", "start_s", "end_s"]).to_pylist() if r["video_id"] == video_id]
    if not rows:
        raise ValueError(f"video {video_id} has no clips in {snakemake.input.clips}")
    spans = [(r["clip_idx"], r["start_s"], r["end_s"]) for r in rows]
    device = resolve_device(p.device)

    def work(video):  # runs once the video opened and decoded: a bad video fails before the model loads
        model = load_resnet50(p.checkpoint).to(device)
        log.info("ResNet-50 from %s on %s", p.checkpoint, device)
        return extract_frame_features(video, video_id, spans, model, frames_per_clip=p.frames_per_clip,
                                      resize=p.resize, crop=p.crop, batch_size=p.batch_size, device=device)

    features, status = run_video_job(video_id, p.videos_dir, p.video_extensions, skip_bad=p.skip_bad_videos, work=work,
                                     schema=FRAME_FEATURES)
    write_parquet(features, snakemake.output.features, FRAME_FEATURES, sort_keys=FRAME_FEATURES_KEY)
    write_status(snakemake.output.status, status)
    log.info("%s: %s, %d feature rows", video_id, status.status, features.num_rows)
