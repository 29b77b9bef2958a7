"""Rule keyclips_folds: leave-recipes-out folds shared by every learned selector -> results/keyclips/folds.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.learn.folds import FOLDS, dish_family, folds_table, make_folds, read_dish_families
    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.core.parquet_io import write_parquet

    p = snakemake.params  # noqa: F821
    clips = read_clips_parquet(snakemake.input.clips)  # noqa: F821
    family_of = None
    if "families" in snakemake.input.keys():  # noqa: F821 (grouping: family)
        curated = read_dish_families(snakemake.input.families)  # noqa: F821
        family_of = {r: dish_family(r, curated) for r in sorted(clips["recipe"].unique())}
        log.info("folds hold out dish families: %d recipes in %d families (%s)", len(family_of),
                 len(set(family_of.values())), snakemake.input.families)  # noqa: F821
    folds = make_folds(clips, p.k, p.seed, p.inner_val_fraction, family_of)
    for f, group in folds.groupby("fold"):
        n_clips = int(clips["video_id"].isin(group["video_id"]).sum())
        log.info("fold %d: %d recipes, %d videos, %d clips, %d inner-validation videos",
                 f, group["recipe"].nunique(), len(group), n_clips, int(group["inner_val"].sum()))
    write_parquet(folds_table(folds), snakemake.output.folds, FOLDS, sort_keys=["video_id"])  # noqa: F821
    log.info("wrote %d videos to %s", len(folds), snakemake.output.folds)  # noqa: F821
