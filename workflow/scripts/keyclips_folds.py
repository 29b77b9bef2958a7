"""Rule keyclips_folds: leave-recipes-out folds shared by every learned selector -> results/keyclips/folds.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.keyclips.folds import FOLDS, folds_table, make_folds
    from cookproc.keyclips.inputs import read_clips_parquet
    from cookproc.core.schemas import write_parquet

    p = snakemake.params  # noqa: F821
    clips = read_clips_parquet(snakemake.input.clips)  # noqa: F821
    folds = make_folds(clips, p.k, p.seed, p.inner_val_fraction)
    for f, group in folds.groupby("fold"):
        n_clips = int(clips["video_id"].isin(group["video_id"]).sum())
        log.info("fold %d: %d recipes, %d videos, %d clips, %d inner-validation videos",
                 f, group["recipe"].nunique(), len(group), n_clips, int(group["inner_val"].sum()))
    write_parquet(folds_table(folds), snakemake.output.folds, FOLDS, sort_keys=["video_id"])  # noqa: F821
    log.info("wrote %d videos to %s", len(folds), snakemake.output.folds)  # noqa: F821
