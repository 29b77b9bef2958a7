"""Table 5: tuple extraction scores, oracle and predicted key clips (plus the masked variant), and
the constant that the paper's counting of predicted key clips multiplies every oracle F1 by."""
from cookproc.core.formatting import markdown_table
from cookproc.core.logs import script_logging
from cookproc.scoring.similarity import SimilarityCache
from cookproc.core.parquet_io import atomic_write_text, read_parquet, write_parquet
from cookproc.core.schemas import CLIP_SCORES, CLIPS, KEYCLIPS, TUPLES
from cookproc.evaluation.tables import (predicted_counting_constants, predicted_counting_note, table5_with_clip_scores,
                             table5_wide, tidy_csv, to_csv)

with script_logging(snakemake) as log:
    p = snakemake.params
    clips = read_parquet(snakemake.input.clips, CLIPS)
    tuples = {name: read_parquet(path, TUPLES) for name, path in zip(p.systems, snakemake.input.tuples)}
    keyclips = {name: read_parquet(path, KEYCLIPS)
                for name, path in zip(p.predicted_keyclips, snakemake.input.keyclips)}
    table, clip_scores = table5_with_clip_scores(clips, tuples, keyclips, masked=p.masked,
                                                 cache=SimilarityCache(snakemake.threads),
                                                 tuple_seeds=p.tuple_seeds, keyclip_seeds=p.keyclip_seeds)
    constants = predicted_counting_constants(table)
    write_parquet(clip_scores, snakemake.output.clip_scores, CLIP_SCORES)
    atomic_write_text(snakemake.output.tidy, tidy_csv(table))
    atomic_write_text(snakemake.output.predicted_counting, tidy_csv(constants))
    wide = table5_wide(table)
    atomic_write_text(snakemake.output.wide, to_csv(*wide))
    note = predicted_counting_note(constants)
    atomic_write_text(snakemake.output.markdown, f"## Table 5: procedure tuple extraction\n\n{markdown_table(*wide)}\n"
                      + (f"\n{note}" if note else ""))
    log.info("\n%s\n%s", markdown_table(*wide), note)
