"""Rule srl_corpus: PropBank EWT skeletons + UD EWT words -> span-SRL corpus (Parquet) + report."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    import pyarrow as pa

    from cookproc.core.parquet_io import atomic_write_text, write_parquet
    from cookproc.srl.corpus import CORPUS_KEYS, SRL_CORPUS, build_corpus

    rows, report = build_corpus(snakemake.params.root, min_pos_agreement=snakemake.params.min_pos_agreement)
    write_parquet(pa.Table.from_pylist(rows, schema=SRL_CORPUS), snakemake.output.corpus, SRL_CORPUS,
                  sort_keys=CORPUS_KEYS)
    atomic_write_text(snakemake.output.report, report.as_text())
    log.info("wrote %d predicate instances to %s\n%s", len(rows), snakemake.output.corpus, report.as_text())
