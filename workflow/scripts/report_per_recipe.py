"""Key-clip and tuple scores per recipe: a tidy CSV and two heatmaps."""
from cookproc.core.logs import script_logging
from cookproc.scoring.similarity import SimilarityCache
from cookproc.evaluation.report import per_recipe_scores, plot_per_recipe
from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.core.schemas import CLIPS, KEYCLIPS, TUPLES
from cookproc.evaluation.tables import tidy_csv

with script_logging(snakemake) as log:
    p = snakemake.params
    clips = read_parquet(snakemake.input.clips, CLIPS)
    keyclips = {name: read_parquet(path, KEYCLIPS) for name, path in zip(p.keyclip_systems, snakemake.input.keyclips)}
    tuples = {name: read_parquet(path, TUPLES) for name, path in zip(p.tuple_systems, snakemake.input.tuples)}
    log.info("scoring %d key-clip and %d tuple systems on %d clips", len(keyclips), len(tuples), clips.num_rows)
    table = per_recipe_scores(clips, keyclips, tuples, mode=p.per_recipe_mode, cache=SimilarityCache(snakemake.threads))
    atomic_write_text(snakemake.output.table, tidy_csv(table))
    log.info("%d rows -> %s", table.num_rows, snakemake.output.table)
    plot_per_recipe(table, ["keyclips"], "Key clip F1 per recipe", snakemake.output.keyclips)
    plot_per_recipe(table, ["verbs", "arguments"], f"Tuple F1 per recipe ({p.per_recipe_mode}, oracle key clips)",
                    snakemake.output.tuples)
    log.info("plots: %s, %s", snakemake.output.keyclips, snakemake.output.tuples)
