"""Rule srl_training_data: PropBank EWT skeletons + UD EWT words -> span-SRL training data (Parquet) + report."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    import pyarrow as pa

    from cookproc.core.parquet_io import atomic_write_text, write_parquet
    from cookproc.srl.training_data import TRAINING_DATA_KEYS, SRL_TRAINING_DATA, build_training_data

    rows, report = build_training_data(snakemake.params.root, min_pos_agreement=snakemake.params.min_pos_agreement)
    write_parquet(pa.Table.from_pylist(rows, schema=SRL_TRAINING_DATA), snakemake.output.training_data, SRL_TRAINING_DATA,
                  sort_keys=TRAINING_DATA_KEYS)
    atomic_write_text(snakemake.output.report, report.as_text())
    log.info("wrote %d predicate instances to %s\n%s", len(rows), snakemake.output.training_data, report.as_text())
