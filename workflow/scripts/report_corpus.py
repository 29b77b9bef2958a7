"""A corpus's procedures summarised as a report page, read from its dataset one shard at a time."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.core.parquet_io import atomic_write_text
    from cookproc.app.report_pages import summarise_corpus
    from cookproc.evaluation.report import page

    smk = snakemake  # noqa: F821
    summary = summarise_corpus(smk.input.dataset)
    atomic_write_text(smk.output[0], page(f"Corpus: {smk.params.corpus}", summary.html(top=smk.params.top)))
    log.info("wrote %s: %d clips", smk.output[0], summary.n_clips)
