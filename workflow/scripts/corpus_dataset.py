"""The corpus's shard files -> the dataset (a partition each and _metadata), replacing the old one as a whole."""
from cookproc.app.corpus import build_dataset
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    manifest, done = build_dataset(list(snakemake.input.shards), snakemake.output.dataset, snakemake.params.damaged)
    for change in done:
        log.info("%s", change)
    log.info("wrote %s: %d shards, %d clips", snakemake.output.dataset, manifest["shards"],
             sum(p["rows"] for p in manifest["partitions"]))
