"""Check the upstream files against the pinned checksums and record what was read."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text
from cookproc.data.upstream import compute_checksums, format_checksums, verify

with script_logging(snakemake) as log:
    if snakemake.params.verify_checksums:
        rows = verify(snakemake.params.root, snakemake.input.checksums)
        log.info("all %d upstream entries match the pinned checksums", len(rows))
    else:
        rows = compute_checksums(snakemake.params.root)
        log.warning("checksum verification disabled (upstream.verify_checksums: false)")
    atomic_write_text(snakemake.output[0], format_checksums(rows))
