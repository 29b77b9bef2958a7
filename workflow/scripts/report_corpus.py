"""A corpus's procedures summarised as a report page, read from its dataset one shard at a time."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import os

    from cookproc.corpus import iter_shards
    from cookproc.core.schemas import atomic_write_text
    from cookproc.report import CorpusSummary, page

    smk = snakemake  # noqa: F821
    summary = CorpusSummary()
    for shard, clips in iter_shards(os.path.dirname(smk.input.dataset), columns=CorpusSummary.COLUMNS):
        summary.add(clips)
    atomic_write_text(smk.output[0], page(f"Corpus: {smk.params.corpus}", summary.html(top=smk.params.top)))
    log.info("wrote %s: %d clips", smk.output[0], summary.n_clips)
