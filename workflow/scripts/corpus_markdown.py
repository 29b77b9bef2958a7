"""The corpus dataset -> one Markdown step list per video (its key clips, in order, with times),
read one shard at a time."""
from cookproc.app.corpus import write_markdown
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    n_videos = write_markdown(snakemake.input.dataset, snakemake.output.markdown)
    log.info("wrote %d Markdown files to %s", n_videos, snakemake.output.markdown)
