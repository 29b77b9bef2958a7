"""A user-supplied system (Parquet or JSONL) checked and converted to the common schema."""
from cookproc.core.logs import script_logging
from cookproc.core.schemas import CLIP_KEY, CLIPS, KEYCLIPS, TUPLES, read_parquet, write_parquet
from cookproc.systems import read_user_keyclips, read_user_tuples

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    name = f"user-{snakemake.wildcards.user}"
    if snakemake.params.kind == "keyclips":
        table = read_user_keyclips(snakemake.input.system, clips, name)
        write_parquet(table, snakemake.output[0], KEYCLIPS, sort_keys=CLIP_KEY)
    else:
        table = read_user_tuples(snakemake.input.system, clips, name)
        write_parquet(table, snakemake.output[0], TUPLES, sort_keys=CLIP_KEY)
    log.info("imported %s from %s: %d clips", name, snakemake.input.system, table.num_rows)
