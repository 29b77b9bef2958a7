"""Paired bootstrap intervals (over recipes or videos) for every Table 4/5 cell, and pairwise
significance with Holm-adjusted p-values."""
import numpy as np

from cookproc.bootstrap import significance_table, table4_intervals, table5_intervals, videos_and_clusters
from cookproc.core.logs import script_logging
from cookproc.core.schemas import CLIP_SCORES, CLIPS, KEYCLIPS, atomic_write_text, read_parquet
from cookproc.tables import keyclip_flags, tidy_csv

with script_logging(snakemake) as log:
    settings = snakemake.params.bootstrap
    options = dict(unit=settings["unit"], resamples=settings["resamples"], seed=settings["seed"],
                   confidence=settings["confidence"])
    clips = read_parquet(snakemake.input.clips, CLIPS)
    flags = {name: keyclip_flags(clips, read_parquet(path, KEYCLIPS), what=path)
             for name, path in zip(snakemake.params.systems, snakemake.input.keyclips)}
    ci4, comparisons4 = table4_intervals(clips, flags, **options)
    ci5, comparisons5 = table5_intervals(clips, read_parquet(snakemake.input.clip_scores, CLIP_SCORES), **options)
    atomic_write_text(snakemake.output.table4, tidy_csv(ci4))
    atomic_write_text(snakemake.output.table5, tidy_csv(ci5))
    significance = significance_table(comparisons4 + comparisons5, options["confidence"])
    atomic_write_text(snakemake.output.significance, tidy_csv(significance))
    videos, clusters = videos_and_clusters(clips, options["unit"])
    log.info("%d resamples of the %d %ss (%d videos, seed %d): %d interval rows, %d comparisons "
             "(%d significant after Holm)", options["resamples"], len(np.unique(clusters)), options["unit"],
             len(videos), options["seed"], ci4.num_rows + ci5.num_rows, significance.num_rows,
             sum(significance.column("significant").to_pylist()))
