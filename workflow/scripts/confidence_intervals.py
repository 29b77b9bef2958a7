"""Paired bootstrap intervals (over recipes or videos) for every Table 4/5 cell, and the
significance of the declared family of comparisons (tables.significance), Holm-adjusted over it."""
import numpy as np

from cookproc.evaluation.bootstrap import table4_intervals, table5_intervals, videos_and_clusters
from cookproc.evaluation.significance import significance_table
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.core.schemas import CLIP_SCORES, CLIPS, KEYCLIPS
from cookproc.evaluation.tables import NO_SEED, block_label, keyclip_flags, tidy_csv

with script_logging(snakemake) as log:
    p = snakemake.params
    settings = p.bootstrap
    options = dict(unit=settings["unit"], resamples=settings["resamples"], seed=settings["seed"],
                   confidence=settings["confidence"])
    clips = read_parquet(snakemake.input.clips, CLIPS)
    flags = {name: keyclip_flags(clips, read_parquet(path, KEYCLIPS), what=path)
             for name, path in zip(p.systems, snakemake.input.keyclips)}
    runs = {}
    for name, path in zip(p.seed_run_systems, snakemake.input.seed_runs):
        runs.setdefault(name, []).append(keyclip_flags(clips, read_parquet(path, KEYCLIPS), what=path))
    ci4, cells4 = table4_intervals(clips, flags, runs=runs, run_labels=p.keyclip_seeds, **options)
    clip_scores = read_parquet(snakemake.input.clip_scores, CLIP_SCORES)
    blocks = set(zip(clip_scores.column("system").to_pylist(), clip_scores.column("keyclips").to_pylist()))
    labels5 = {(system, keyclips): block_label(p.tuple_seeds.get(system, NO_SEED), keyclips, p.predicted_keyclip_seeds.get(keyclips))
               for system, keyclips in sorted(blocks)}
    ci5, cells5 = table5_intervals(clips, clip_scores, run_labels=labels5, **options)
    atomic_write_text(snakemake.output.table4, tidy_csv(ci4))
    atomic_write_text(snakemake.output.table5, tidy_csv(ci5))
    significance = significance_table(p.family, {**cells4, **cells5}, confidence=options["confidence"],
                                      resamples=options["resamples"])
    atomic_write_text(snakemake.output.significance, tidy_csv(significance))
    videos, clusters = videos_and_clusters(clips, options["unit"])
    p_values = significance.column("p_value").to_pylist()
    log.info("%d resamples of the %d %ss (%d videos, seed %d): %d interval rows; declared family of %d "
             "comparisons, %d significant after Holm, smallest p %s (smallest attainable %.2g)",
             options["resamples"], len(np.unique(clusters)), options["unit"], len(videos), options["seed"],
             ci4.num_rows + ci5.num_rows, significance.num_rows, sum(significance.column("significant").to_pylist()),
             f"{min(p_values):.2g}" if p_values else "-", 2 / (options["resamples"] + 1))
