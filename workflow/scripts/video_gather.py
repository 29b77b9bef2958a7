"""Concatenate per-video parts (features or TSM segments) and report the skipped videos."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text, write_parquet
from cookproc.core.schemas import TSM_SEGMENTS
from cookproc.video.jobs import gather, status_text
from cookproc.video.resnet import FRAME_FEATURES, FRAME_FEATURES_KEY

SCHEMAS = {"frame_features": (FRAME_FEATURES, FRAME_FEATURES_KEY),
           "tsm_segments": (TSM_SEGMENTS, ("video_id", "segment_idx", "rank"))}

with script_logging(snakemake) as log:
    schema, sort_keys = SCHEMAS[snakemake.params.kind]
    table, skipped = gather(snakemake.input.parts, snakemake.input.statuses, schema)
    write_parquet(table, snakemake.output.table, schema, sort_keys=sort_keys)
    atomic_write_text(snakemake.output.skipped, status_text(skipped))
    log.info("%d videos, %d rows; %d skipped%s", len(snakemake.input.parts), table.num_rows, len(skipped),
             "".join(f"\n  {s.video_id}: {s.reason}" for s in skipped))
