"""Rule supervised_keyclips: out-of-fold key-clip probabilities of the supervised classifier (KEYCLIPS)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json
    import time

    from cookproc.learn.keyclip_crossval import candidates_with_heads, keyclips_table, nested_cross_validate
    from cookproc.learn.folds import clip_folds, read_folds
    from cookproc.learn.inputs import read_clips_parquet, tsm_sets
    from cookproc.learn.sentence_vectors import clip_text_features
    from cookproc.learn.finetuned_vectors import read_finetuned_vectors
    from cookproc.core.parquet_io import write_parquet
    from cookproc.core.schemas import KEYCLIPS
    from cookproc.srl.baselines import read_lexicon_lines
    from cookproc.supervised.clipfeatures import read_srl, srl_clip_features
    from cookproc.supervised.keyclips import dense_inputs, regression_candidates, tsm_mean

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

    # Nested selection: a setting with candidates is chosen per outer fold on its inner validation.
    candidates = p.selection["candidates"]
    windows = candidates.get("context_window") or [p.context_window]
    regularisation = candidates.get("C") or [p.C]
    threshold_metrics = candidates.get("threshold_metric") or [p.threshold_metric]

    def design(embeddings, window):
        return dense_inputs(clips, embeddings, srl, tsm, window=window, embedding_window=p.embedding_window)

    frozen = finetuned = None
    if "finetuned" in smk.input.keys():  # fold f's vectors come from an encoder that never saw fold f
        finetuned = read_finetuned_vectors(smk.input.finetuned, clips, folds)
        log.info("sentence vectors: per-fold fine-tuned, %s", smk.input.finetuned)
    else:
        frozen = clip_text_features(smk.input.text, clips)
        log.info("sentence vectors: frozen, %s", smk.input.text)
    fits = regression_candidates(design, sentences, labels, windows=windows, Cs=regularisation, ngram_max=p.ngram_max,
                                 min_df=p.min_df, frozen=frozen, finetuned=finetuned, fold=fold)
    heads, head_weights = None, [0.0]
    if "encoder_finetuned" in smk.input.keys():  # the larger encoder's head, fine-tuned without each fold
        heads = {f: t.head for f, t in read_finetuned_vectors(smk.input.encoder_finetuned, clips, folds).items()}
        head_weights = candidates.get("head_weight") or [p.head_weight]
        log.info("clip score: (1 - w) x logistic regression + w x the finetuned head of %s, w in %s",
                 smk.input.encoder_finetuned, head_weights)
    log.info("candidates per fold: %d regressions x %d head weights x %d threshold rules, chosen by %s on inner "
             "validation", len(fits), len(head_weights), len(threshold_metrics), p.selection["objective"])
    result = nested_cross_validate(fold, inner, labels, candidates_with_heads(fits, fold, heads, head_weights),
                                   threshold_metrics, clips["recipe"].astype(str).to_numpy(), p.selection["objective"])
    write_parquet(keyclips_table(p.system, clips, result), smk.output.keyclips, KEYCLIPS,
                  sort_keys=["video_id", "clip_idx"])
    info = {"folds": {str(k): v for k, v in result.info.items()}, "sentence_vectors": smk.input.get("finetuned", "frozen"),
            "encoder_finetuned": smk.input.get("encoder_finetuned"), "selection": p.selection,
            "wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu_start, 1)}
    with open(smk.output.info, "w", encoding="utf-8") as handle:
        json.dump(info, handle, indent=1, sort_keys=True)
    log.info("wrote %s: %d/%d clips predicted key; %s", smk.output.keyclips, int(result.is_key.sum()),
             len(clips), {k: info[k] for k in ("wall_s", "cpu_s")})
