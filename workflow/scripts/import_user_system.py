"""A user-supplied system (Parquet or JSONL) checked and converted to the common schema."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIP_KEY, CLIPS, KEYCLIPS, TUPLES
from cookproc.evaluation.systems import read_user_keyclips, read_user_tuples, user_system_file

with script_logging(snakemake) as log:
    kind, name = snakemake.params.kind, snakemake.wildcards.user
    # Every file found for the system (rules/common.smk): none or two fail here, in this job only.
    system = user_system_file(list(snakemake.input.system), kind, name, snakemake.params.folder)
    clips = read_parquet(snakemake.input.clips, CLIPS)
    if kind == "keyclips":
        table = read_user_keyclips(system, clips, f"user-{name}")
        write_parquet(table, snakemake.output[0], KEYCLIPS, sort_keys=CLIP_KEY)
    else:
        table = read_user_tuples(system, clips, f"user-{name}")
        write_parquet(table, snakemake.output[0], TUPLES, sort_keys=CLIP_KEY)
    log.info("imported user-%s from %s: %d clips", name, system, table.num_rows)
