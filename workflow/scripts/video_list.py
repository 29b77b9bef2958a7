"""The benchmark videos the visual rules decode (all, or the configured subset), one id a line."""
from cookproc.core.errors import ConfigError
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.core.schemas import CLIPS

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    benchmark = sorted(set(clips.column("video_id").to_pylist()))
    wanted = list(snakemake.params.video_ids)
    unknown = sorted(set(wanted) - set(benchmark))
    if unknown:
        raise ConfigError(f"config key video.video_ids names videos that are not in the benchmark: {unknown}",
                          ["video", "video_ids"])
    videos = sorted(wanted) if wanted else benchmark
    atomic_write_text(snakemake.output[0], "".join(f"{v}\n" for v in videos))
    log.info("%d of %d benchmark videos", len(videos), len(benchmark))
