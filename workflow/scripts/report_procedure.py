"""A user file's procedure document as a report page."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    from cookproc.core.parquet_io import atomic_write_text
    from cookproc.app.report_pages import procedure_html
    from cookproc.evaluation.report import page

    with open(snakemake.input.json, encoding="utf-8") as handle:  # noqa: F821
        document = json.load(handle)
    atomic_write_text(snakemake.output[0], page(f"Procedure: {document['name']}", procedure_html(document)))  # noqa: F821
    log.info("wrote %s: %d key steps of %d clips", snakemake.output[0], document["n_key_clips"],  # noqa: F821
             document["n_clips"])
