"""Paired bootstrap intervals over videos for every Table 4/5 cell, and pairwise significance."""
import pyarrow as pa

from cookproc.bootstrap import SIGNIFICANCE, table4_intervals, table5_intervals
from cookproc.logs import script_logging
from cookproc.schemas import CLIP_SCORES, CLIPS, KEYCLIPS, atomic_write_text, read_parquet
from cookproc.tables import keyclip_flags, tidy_csv

with script_logging(snakemake) as log:
    settings = snakemake.params.bootstrap
    options = dict(resamples=settings["resamples"], seed=settings["seed"], confidence=settings["confidence"])
    clips = read_parquet(snakemake.input.clips, CLIPS)
    flags = {name: keyclip_flags(clips, read_parquet(path, KEYCLIPS), what=path)
             for name, path in zip(snakemake.params.systems, snakemake.input.keyclips)}
    ci4, comparisons4 = table4_intervals(clips, flags, **options)
    ci5, comparisons5 = table5_intervals(clips, read_parquet(snakemake.input.clip_scores, CLIP_SCORES), **options)
    atomic_write_text(snakemake.output.table4, tidy_csv(ci4))
    atomic_write_text(snakemake.output.table5, tidy_csv(ci5))
    significance = pa.Table.from_pylist(comparisons4 + comparisons5, schema=SIGNIFICANCE)
    atomic_write_text(snakemake.output.significance, tidy_csv(significance))
    log.info("%d resamples of %d videos (seed %d): %d interval rows, %d comparisons (%d significant)",
             options["resamples"], len(set(clips.column("video_id").to_pylist())), options["seed"],
             ci4.num_rows + ci5.num_rows, significance.num_rows, sum(significance.column("significant").to_pylist()))
