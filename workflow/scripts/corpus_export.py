"""The corpus dataset -> one Parquet file (every row in memory: the export of a small corpus)."""
from cookproc.app.corpus import CORPUS_CLIPS, read_dataset
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import CLIP_KEY

with script_logging(snakemake) as log:
    table = read_dataset(snakemake.input.dataset)
    write_parquet(table, snakemake.output.clips, CORPUS_CLIPS, sort_keys=CLIP_KEY)
    log.info("wrote %s: %d clips of %d videos", snakemake.output.clips, table.num_rows,
             len(set(table.column("video_id").to_pylist())))
