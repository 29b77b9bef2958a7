"""Download the pinned upstream commit into the configured folder and verify every file."""
from cookproc.core.logs import script_logging
from cookproc.data.upstream import download

with script_logging(snakemake) as log:
    log.info("fetching %s into %s", snakemake.params.archive_url, snakemake.params.dest)
    download(snakemake.params.archive_url, snakemake.params.dest, snakemake.params.checksums)
