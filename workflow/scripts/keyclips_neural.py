"""Rule keyclips_neural_*: cross-validated neural key-clip selector, one variant and one seed."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    from cookproc.learn.keyclip_crossval import keyclips_table
    from cookproc.learn.folds import read_folds
    from cookproc.learn.inputs import frame_sets, read_clips_parquet, text_inputs, tsm_sets
    from cookproc.keyclips.neural import CandidateGrid, net_candidates, run_nested_neural, set_torch_threads
    from cookproc.learn.sentence_vectors import clip_text_features
    from cookproc.keyclips.train import KeyClipTrainConfig
    from cookproc.learn.finetuned_vectors import read_finetuned_vectors
    from cookproc.core.parquet_io import atomic_write_text, write_parquet
    from cookproc.core.schemas import KEYCLIPS

    smk = snakemake  # noqa: F821
    p = smk.params
    set_torch_threads(smk.threads)
    variant, seed = p.variant, int(smk.wildcards.seed)
    clips = read_clips_parquet(smk.input.clips)
    folds = read_folds(smk.input.folds, clips)
    log.info("%d clips, %d folds; variant %s, seed %d", len(clips), folds["fold"].nunique(), variant, seed)

    def sentence_input(vectors, context_window):
        return text_inputs(clips, vectors, context_window=context_window, layout=p.layout_features)

    # Nested selection: a setting with candidates is chosen per outer fold on its inner validation
    # (the deployed selector builds the same grid).
    grid = CandidateGrid.from_config(p.selection["candidates"], context_window=p.context_window,
                                     lexical=p.train["lexical"], head_weight=p.get("head_weight", 0.0),
                                     threshold_metric=p.train["threshold_metric"])
    head_weights = [0.0]  # no finetuned head to blend in
    frozen = finetuned = visual = None
    if "finetuned" in smk.input.keys():  # per-fold fine-tuned vectors (rule keyclips_finetune)
        folds_seen = sorted(set(folds["fold"].tolist()))
        finetuned = read_finetuned_vectors(smk.input.finetuned, clips, folds_seen)
        head_weights = grid.head_weights
        log.info("text input: per-fold finetuned vectors of %s (folds %s)", smk.input.finetuned, folds_seen)
    elif variant in ("text", "full"):
        frozen = clip_text_features(smk.input.text, clips)
        log.info("text input: %d x %d from %s", *frozen.shape, smk.input.text)
    if variant in ("visual", "full"):
        if p.visual_source == "tsm":
            visual = tsm_sets(smk.input.visual, clips, max_set=p.max_set)
        else:
            visual = frame_sets(smk.input.visual, clips, max_set=p.max_set)
        sizes = visual.sizes()
        log.info("visual input (%s): %d vectors of dim %d; set size mean %.1f, %d clips with an empty set",
                 p.visual_source, len(visual.vectors), visual.dim, sizes.mean(), int((sizes == 0).sum()))

    cfg = KeyClipTrainConfig(**p.train)
    nets = net_candidates(variant, cfg, grid, sentence_input, frozen, finetuned)
    log.info("candidates per fold: %d nets x %d head weights x %d threshold rules, chosen by %s on inner "
             "validation", len(nets), len(head_weights), len(grid.threshold_metrics), p.selection["objective"])
    result = run_nested_neural(variant, clips, folds, nets, visual, seed, head_weights, list(grid.threshold_metrics),
                               p.selection["objective"])
    system = f"neural-{variant}"
    write_parquet(keyclips_table(system, clips, result), smk.output.keyclips, KEYCLIPS,
                  sort_keys=["video_id", "clip_idx"])
    labels = clips["is_key"].to_numpy()
    info = {"system": system, "seed": seed, "config": p.train,
            "finetuned_vectors": smk.input.get("finetuned"), "head_weight": p.get("head_weight"),
            "selection": p.selection, "folds": {str(k): v for k, v in result.info.items()},
            "predicted_key": int(result.is_key.sum()), "gold_key": int(labels.sum()),
            "accuracy": float((result.is_key == labels).mean())}
    atomic_write_text(smk.output.info, json.dumps(info, indent=1, sort_keys=True) + "\n")
    log.info("wrote %s: %d/%d clips predicted key (gold %d)", smk.output.keyclips, int(result.is_key.sum()),
             len(clips), int(labels.sum()))
