"""Rule keyclips_tfidf: TF-IDF + neighbouring-sentences logistic regression under the same folds (tfidf-lr)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.learn.keyclip_crossval import cross_validate, keyclips_table
    from cookproc.learn.folds import clip_folds, read_folds
    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.keyclips.tfidf import tfidf_fit_predict
    from cookproc.core.parquet_io import write_parquet
    from cookproc.core.schemas import KEYCLIPS

    smk = snakemake  # noqa: F821
    p = smk.params
    clips = read_clips_parquet(smk.input.clips)
    folds = read_folds(smk.input.folds, clips)
    fold, inner = clip_folds(folds, clips)
    fit = tfidf_fit_predict(clips, window=p.window, ngram_max=p.ngram_max, min_df=p.min_df, C=p.C)
    result = cross_validate(fold, inner, clips["is_key"].to_numpy().astype(bool), fit, p.threshold_metric)
    write_parquet(keyclips_table("tfidf-lr", clips, result), smk.output.keyclips, KEYCLIPS,
                  sort_keys=["video_id", "clip_idx"])
    log.info("wrote %s: %d/%d clips predicted key", smk.output.keyclips, int(result.is_key.sum()), len(clips))
