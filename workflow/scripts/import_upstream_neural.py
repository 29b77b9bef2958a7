"""The paper's neural key-clip predictions as the key-clip system upstream-neural."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIP_KEY, CLIPS, KEYCLIPS
from cookproc.evaluation.systems import import_upstream_keyclips

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    keyclips = import_upstream_keyclips(snakemake.input.tsv, clips)
    write_parquet(keyclips, snakemake.output[0], KEYCLIPS, sort_keys=CLIP_KEY)
    log.info("%d clips, %d predicted key", keyclips.num_rows, sum(keyclips.column("is_key").to_pylist()))
