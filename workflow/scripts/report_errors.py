"""Error analysis page of one system: most frequent false positives / negatives with sentences."""
from cookproc.core.logs import script_logging
from cookproc.evaluation.error_analysis import keyclip_errors, tuple_errors
from cookproc.evaluation.report import page
from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.core.schemas import CLIPS, KEYCLIPS, TUPLES

with script_logging(snakemake) as log:
    p = snakemake.params
    system = snakemake.wildcards.system
    clips = read_parquet(snakemake.input.clips, CLIPS)
    if p.kind == "keyclips":
        body = keyclip_errors(clips, read_parquet(snakemake.input.system, KEYCLIPS), system=system,
                              top=p.top_errors, examples=p.examples)
        title = f"Key clip errors: {system}"
    else:
        body = tuple_errors(clips, read_parquet(snakemake.input.system, TUPLES), system=system,
                            top=p.top_errors, examples=p.examples)
        title = f"Tuple errors: {system}"
    atomic_write_text(snakemake.output[0], page(title, body))
    log.info("wrote %s", snakemake.output[0])
