"""Rule supervised_keyclips: out-of-fold key-clip probabilities of the supervised classifier (KEYCLIPS)."""
from cookproc.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json
    import time

    import numpy as np

    from cookproc.models.crossval import cross_validate, keyclips_table
    from cookproc.models.data import align_rows, read_clips, tsm_sets
    from cookproc.models.folds import clip_folds, read_folds
    from cookproc.schemas import KEYCLIPS, write_parquet
    from cookproc.srl.systems import read_lexicon
    from cookproc.supervised.clipfeatures import read_srl, srl_clip_features
    from cookproc.supervised.keyclips import dense_inputs, logreg_fit_predict, tsm_mean
    from cookproc.text_features import read_text_features

    smk = snakemake  # noqa: F821
    p = smk.params
    start, cpu_start = time.perf_counter(), time.process_time()
    clips = read_clips(smk.input.clips)
    fold, inner = clip_folds(read_folds(smk.input.folds, clips), clips)
    keys, vectors = read_text_features(smk.input.text)
    embeddings = vectors[align_rows(smk.input.text, keys, clips, "text features")]
    srl = srl_clip_features(clips, read_srl(smk.input.srl), read_lexicon(smk.input.lexicon))
    tsm = tsm_mean(tsm_sets(smk.input.tsm, clips)) if p.use_tsm else None
    dense = dense_inputs(clips, embeddings, srl, tsm, window=p.context_window,
                         embedding_window=p.embedding_window)
    labels = clips["is_key"].to_numpy().astype(bool)
    fit = logreg_fit_predict(dense, clips["sentence"].astype(str).tolist(), labels, C=p.C,
                             ngram_max=p.ngram_max, min_df=p.min_df)
    result = cross_validate(fold, inner, labels, fit, p.threshold_metric)
    write_parquet(keyclips_table(p.system, clips, result), smk.output.keyclips, KEYCLIPS,
                  sort_keys=["video_id", "clip_idx"])
    info = {"folds": {str(k): v for k, v in result.info.items()}, "dense_dim": int(dense.shape[1]),
            "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu_start, 1)}
    with open(smk.output.info, "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=1, sort_keys=True)
    log.info("wrote %s: %d/%d clips predicted key; %s", smk.output.keyclips, int(result.is_key.sum()),
             len(clips), {k: info[k] for k in ("wall_s", "cpu_s")})
