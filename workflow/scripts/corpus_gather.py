"""The corpus's shards -> one dataset of procedure clips (Parquet, one row per clip)."""
from cookproc.corpus import CORPUS_CLIPS, gather_shards
from cookproc.core.logs import script_logging
from cookproc.core.schemas import CLIP_KEY, write_parquet

with script_logging(snakemake) as log:
    table = gather_shards(list(snakemake.input.shards))
    write_parquet(table, snakemake.output.clips, CORPUS_CLIPS, sort_keys=CLIP_KEY)
    log.info("wrote %s: %d clips of %d videos from %d shards", snakemake.output.clips, table.num_rows,
             len(set(table.column("video_id").to_pylist())), len(snakemake.input.shards))
