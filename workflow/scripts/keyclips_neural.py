"""Rule keyclips_neural_*: cross-validated neural key-clip selector, one variant and one seed."""
from cookproc.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    from cookproc.models.crossval import keyclips_table, run_neural, sentence_tuning, set_torch_threads, text_inputs
    from cookproc.models.data import align_rows, frame_sets, read_clips, tsm_sets
    from cookproc.models.finetune import FinetuneConfig
    from cookproc.models.folds import read_folds
    from cookproc.models.train import TrainConfig
    from cookproc.schemas import KEYCLIPS, atomic_write_text, write_parquet
    from cookproc.text_features import read_text_features

    smk = snakemake  # noqa: F821
    p = smk.params
    set_torch_threads(smk.threads)
    variant, seed = p.variant, int(smk.wildcards.seed)
    finetune = FinetuneConfig(**p.finetune) if variant != "visual" else None
    if p.device != "cpu":
        log.warning("device %s: %s; the selector net is small and trains on the CPU", p.device,
                    "the encoder fine-tunes there" if finetune and finetune.layers else "nothing uses it")
    clips = read_clips(smk.input.clips)
    folds = read_folds(smk.input.folds, clips)
    log.info("%d clips, %d folds; variant %s, seed %d", len(clips), folds["fold"].nunique(), variant, seed)

    text = visual = tuning = None
    if variant in ("text", "full"):
        keys, vectors = read_text_features(smk.input.text)
        text = text_inputs(clips, vectors[align_rows(smk.input.text, keys, clips, "text features")],
                           context_window=p.context_window, layout=p.layout_features)
        log.info("text input: %d x %d from %s", *text.shape, smk.input.text)
        tuning = sentence_tuning(clips, finetune, p.encoder_path, context_window=p.context_window,
                                 layout=p.layout_features, device=p.device)
        if tuning is not None:
            log.info("fine-tuning the top %d layers of the encoder per fold (%s); frozen bottom computed",
                     finetune.layers, p.encoder_path or "packaged all-MiniLM-L6-v2")
    if variant in ("visual", "full"):
        if p.visual_source == "tsm":
            visual = tsm_sets(smk.input.visual, clips, max_set=p.max_set)
        else:
            visual = frame_sets(smk.input.visual, clips, max_set=p.max_set)
        sizes = visual.sizes()
        log.info("visual input (%s): %d vectors of dim %d; set size mean %.1f, %d clips with an empty set",
                 p.visual_source, len(visual.vectors), visual.dim, sizes.mean(), int((sizes == 0).sum()))

    cfg = TrainConfig(**p.train)
    result = run_neural(variant, clips, folds, text, visual, cfg, seed, tuning)
    system = f"neural-{variant}"
    write_parquet(keyclips_table(system, clips, result), smk.output.keyclips, KEYCLIPS,
                  sort_keys=["video_id", "clip_idx"])
    labels = clips["is_key"].to_numpy()
    info = {"system": system, "seed": seed, "config": p.train,
            "finetune": p.finetune if finetune else None, "folds": {str(k): v for k, v in result.info.items()},
            "predicted_key": int(result.is_key.sum()), "gold_key": int(labels.sum()),
            "accuracy": float((result.is_key == labels).mean())}
    atomic_write_text(smk.output.info, json.dumps(info, indent=1, sort_keys=True) + "\n")
    log.info("wrote %s: %d/%d clips predicted key (gold %d)", smk.output.keyclips, int(result.is_key.sum()),
             len(clips), int(labels.sum()))
