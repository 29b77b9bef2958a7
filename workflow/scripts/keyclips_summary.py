"""Rule keyclips_seed_summary: key-clip scores of every cross-validated run, and mean/spread over seeds."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.keyclips.summary import seed_summary
    from cookproc.core.parquet_io import atomic_write_text

    smk = snakemake  # noqa: F821
    clips = read_clips_parquet(smk.input.clips)
    table = seed_summary(clips, list(smk.input.runs))
    atomic_write_text(smk.output.csv, table.to_csv(index=False, float_format="%.2f", lineterminator="\n"))
    log.info("\n%s", table.to_string(index=False))
