"""Upstream's SRL-with-heuristics output as key-clip and tuple system upstream-srl-heur."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIP_KEY, CLIPS, KEYCLIPS, TUPLES
from cookproc.evaluation.systems import import_upstream_srl

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    keyclips, tuples = import_upstream_srl(snakemake.input.json, clips)
    write_parquet(keyclips, snakemake.output.keyclips, KEYCLIPS, sort_keys=CLIP_KEY)
    write_parquet(tuples, snakemake.output.tuples, TUPLES, sort_keys=CLIP_KEY)
    log.info("%d clips, %d key", tuples.num_rows, sum(keyclips.column("is_key").to_pylist()))
