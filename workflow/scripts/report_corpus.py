"""A corpus's procedures summarised as a report page."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.corpus import CORPUS_CLIPS
    from cookproc.core.schemas import atomic_write_text, read_parquet
    from cookproc.report import corpus_summary_html, page

    smk = snakemake  # noqa: F821
    clips = read_parquet(smk.input.clips, CORPUS_CLIPS)
    atomic_write_text(smk.output[0], page(f"Corpus: {smk.params.corpus}", corpus_summary_html(clips, top=smk.params.top)))
    log.info("wrote %s: %d clips", smk.output[0], clips.num_rows)
