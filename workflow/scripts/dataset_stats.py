"""Table 2 (statistics of gold verbs and arguments) and Figure 3 (most frequent items)."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.core.schemas import CLIPS
from cookproc.evaluation.stats import plot_frequencies, table2
from cookproc.evaluation.tables import tidy_csv

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    table, counts = table2(clips)
    atomic_write_text(snakemake.output.table, tidy_csv(table))
    for row in table.to_pylist():
        log.info("%s: %d items, exact %.1f%%, fuzzy %.1f%%, not found %.1f%%", row["field"], row["items"],
                 row["exact_pct"], row["fuzzy_pct"], row["not_found_pct"])
    top = snakemake.params.figure3_top
    plot_frequencies(counts["verbs"], top, f"{top} most frequent verbs", snakemake.output.verbs)
    plot_frequencies(counts["arguments"], top, f"{top} most frequent arguments", snakemake.output.arguments)
