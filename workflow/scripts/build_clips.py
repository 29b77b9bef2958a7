"""Parse the benchmark CSV into results/dataset/clips.parquet (one row per clip)."""
from cookproc.data.dataset import read_benchmark_csv, read_repairs, video_durations_from_manifest
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import CLIP_KEY, CLIPS

with script_logging(snakemake) as log:
    clips = read_benchmark_csv(
        snakemake.input.csv,
        repairs=[r for path in snakemake.input.repairs for r in read_repairs(path)],
        video_durations=video_durations_from_manifest(snakemake.input.manifest),
    )
    write_parquet(clips, snakemake.output[0], CLIPS, sort_keys=CLIP_KEY)
    log.info("read %s: %d clips, %d videos, %d key clips", snakemake.input.csv, clips.num_rows,
             len(set(clips.column("video_id").to_pylist())), sum(clips.column("is_key").to_pylist()))
