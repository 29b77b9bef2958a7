"""The corpus's shards -> the dataset's _metadata (their footers and a manifest; no row is read)."""
import os

from cookproc.app.corpus import tidy_dataset, write_dataset_metadata
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    dataset = os.path.dirname(snakemake.output.metadata)
    for change in tidy_dataset(dataset, snakemake.params.shards, snakemake.params.damaged):
        log.info("%s", change)
    manifest = write_dataset_metadata(dataset, snakemake.params.shards)
    log.info("wrote %s: %d shards, %d clips", snakemake.output.metadata, manifest["shards"],
             sum(p["rows"] for p in manifest["partitions"]))
