"""Assign TSM segments to the clips they overlap (clip times from the clips table or, for the paper
variant, as upstream read them from the CSV)."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import ALIGNED_SEGMENTS, CLIPS, TSM_SEGMENTS
from cookproc.video.align import align, clip_spans

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    segments = read_parquet(snakemake.input.segments, TSM_SEGMENTS)
    csv_path = snakemake.input.csv if snakemake.params.timing == "upstream" else None
    aligned = align(segments, clip_spans(snakemake.params.timing, clips, csv_path))
    write_parquet(aligned, snakemake.output[0], ALIGNED_SEGMENTS,
                  sort_keys=("video_id", "clip_idx", "segment_idx", "rank"))
    clips_hit = len(set(zip(aligned.column("video_id").to_pylist(), aligned.column("clip_idx").to_pylist())))
    log.info("%s timing: %d segment rows -> %d aligned rows over %d of %d clips", snakemake.params.timing,
             segments.num_rows, aligned.num_rows, clips_hit, clips.num_rows)
