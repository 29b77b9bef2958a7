"""Table 5: tuple extraction scores, oracle and predicted key clips (plus the masked variant)."""
from cookproc.core.logs import script_logging
from cookproc.metrics import SimilarityCache
from cookproc.core.schemas import CLIP_SCORES, CLIPS, KEYCLIPS, TUPLES, atomic_write_text, read_parquet, write_parquet
from cookproc.tables import table5_with_clip_scores, table5_wide, tidy_csv, to_csv, to_markdown

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    tuples = {name: read_parquet(path, TUPLES) for name, path in zip(snakemake.params.systems, snakemake.input.tuples)}
    keyclips = {name: read_parquet(path, KEYCLIPS)
                for name, path in zip(snakemake.params.predicted_keyclips, snakemake.input.keyclips)}
    table, clip_scores = table5_with_clip_scores(clips, tuples, keyclips, masked=snakemake.params.masked,
                                                 cache=SimilarityCache(snakemake.threads))
    write_parquet(clip_scores, snakemake.output.clip_scores, CLIP_SCORES)
    atomic_write_text(snakemake.output.tidy, tidy_csv(table))
    wide = table5_wide(table)
    atomic_write_text(snakemake.output.wide, to_csv(*wide))
    atomic_write_text(snakemake.output.markdown, to_markdown(*wide, title="Table 5: procedure tuple extraction"))
    log.info("\n%s", to_markdown(*wide))
