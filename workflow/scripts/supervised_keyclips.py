"""Rule supervised_keyclips: out-of-fold key-clip probabilities of the supervised classifier (KEYCLIPS)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json
    import time

    from cookproc.keyclips.crossval import blend_with_heads, cross_validate, keyclips_table, per_fold_fit_predict
    from cookproc.keyclips.folds import clip_folds, read_folds
    from cookproc.keyclips.inputs import read_clips_parquet, tsm_sets
    from cookproc.keyclips.sentence_vectors import clip_text_features
    from cookproc.keyclips.tuned_vectors import read_tuned_vectors
    from cookproc.core.schemas import KEYCLIPS, write_parquet
    from cookproc.srl.baselines import read_lexicon_lines
    from cookproc.supervised.clipfeatures import read_srl, srl_clip_features
    from cookproc.supervised.keyclips import dense_inputs, logreg_fit_predict, tsm_mean

    smk = snakemake  # noqa: F821
    p = smk.params
    start, cpu_start = time.perf_counter(), time.process_time()
    clips = read_clips_parquet(smk.input.clips)
    fold, inner = clip_folds(read_folds(smk.input.folds, clips), clips)
    folds = sorted(set(fold.tolist()))
    srl = srl_clip_features(clips, read_srl(smk.input.srl), read_lexicon_lines(smk.input.lexicon))
    tsm = tsm_mean(tsm_sets(smk.input.tsm, clips)) if p.use_tsm else None
    labels = clips["is_key"].to_numpy().astype(bool)
    sentences = clips["sentence"].astype(str).tolist()

    def design(embeddings):
        return dense_inputs(clips, embeddings, srl, tsm, window=p.context_window, embedding_window=p.embedding_window)

    if "tuned" in smk.input.keys():  # fold f's vectors come from an encoder that never saw fold f
        tuned = read_tuned_vectors(smk.input.tuned, clips, folds)
        fit = per_fold_fit_predict(fold, {f: logreg_fit_predict(design(t.vectors), sentences, labels, C=p.C,
                                                                 ngram_max=p.ngram_max, min_df=p.min_df)
                                          for f, t in tuned.items()})
        log.info("sentence vectors: per-fold fine-tuned, %s", smk.input.tuned)
    else:
        fit = logreg_fit_predict(design(clip_text_features(smk.input.text, clips)),
                                 sentences, labels, C=p.C, ngram_max=p.ngram_max, min_df=p.min_df)
        log.info("sentence vectors: frozen, %s", smk.input.text)
    if "encoder_tuned" in smk.input.keys():  # the larger encoder's head, fine-tuned without each fold
        heads = {f: t.head for f, t in read_tuned_vectors(smk.input.encoder_tuned, clips, folds).items()}
        fit = blend_with_heads(fit, fold, heads, p.head_weight)
        log.info("clip score: %.2f x logistic regression + %.2f x the tuned head of %s", 1 - p.head_weight,
                 p.head_weight, smk.input.encoder_tuned)
    result = cross_validate(fold, inner, labels, fit, p.threshold_metric)
    write_parquet(keyclips_table(p.system, clips, result), smk.output.keyclips, KEYCLIPS,
                  sort_keys=["video_id", "clip_idx"])
    info = {"folds": {str(k): v for k, v in result.info.items()}, "sentence_vectors": smk.input.get("tuned", "frozen"),
            "encoder_tuned": smk.input.get("encoder_tuned"),
            "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu_start, 1)}
    with open(smk.output.info, "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=1, sort_keys=True)
    log.info("wrote %s: %d/%d clips predicted key; %s", smk.output.keyclips, int(result.is_key.sum()),
             len(clips), {k: info[k] for k in ("wall_s", "cpu_s")})
