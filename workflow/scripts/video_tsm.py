"""TSM verb/noun predictions for every 5-second segment of one video (or an empty part when skipped)."""
from cookproc.core.logs import script_logging
from cookproc.core.torch_runtime import configure_torch
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import TSM_SEGMENTS
from cookproc.video.epic import NOUN, VERB, read_epic_classes
from cookproc.video.imaging import resolve_device
from cookproc.video.jobs import run_video_job, write_status
from cookproc.video.tsm import check_classes, load_epic_tsm, predict_video

with script_logging(snakemake) as log:
    video_id, p = snakemake.wildcards.video_id, snakemake.params
    configure_torch(snakemake.threads, p.device, deterministic=p.deterministic)
    verbs = read_epic_classes(snakemake.input.verb_classes, VERB)
    nouns = read_epic_classes(snakemake.input.noun_classes, NOUN)
    device = resolve_device(p.device)

    def work(video):  # runs once the video opened and decoded: a bad video fails before the model loads
        model, info = load_epic_tsm(p.checkpoint, expected_segments=p.segment_count)
        check_classes(info, verbs, nouns)
        model = model.to(device)
        log.info("TSM from %s (%d segments, %s shift 1/%d) on %s", info.path, info.segment_count,
                 info.shift_place, info.shift_div, device)
        return predict_video(video, video_id, model, verbs, nouns, segment_s=p.segment_s, top_k=p.top_k,
                             resize=p.resize, crop=p.crop, batch_size=p.batch_size, device=device)

    segments, status = run_video_job(video_id, p.videos_dir, p.video_extensions, skip_bad=p.skip_bad_videos, work=work,
                                     schema=TSM_SEGMENTS)
    write_parquet(segments, snakemake.output.segments, TSM_SEGMENTS, sort_keys=("video_id", "segment_idx", "rank"))
    write_status(snakemake.output.status, status)
    log.info("%s: %s, %d segment rows", video_id, status.status, segments.num_rows)
