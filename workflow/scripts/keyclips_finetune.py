"""Rule keyclips_finetune: per held-out fold, the sentence encoder fine-tuned on the other folds'
training recipes -> finetuned vectors and head probabilities of every clip (one file per seed)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    from cookproc.core.torch_runtime import configure_torch
    from cookproc.keyclips.finetune import FinetuneConfig, finetune_folds
    from cookproc.keyclips.frozen_bottom import load_bottom
    from cookproc.learn.folds import clip_folds, read_folds
    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.learn.finetuned_vectors import finetuned_vectors_schema, finetuned_vectors_table
    from cookproc.core.parquet_io import atomic_write_text, write_parquet

    smk = snakemake  # noqa: F821
    p = smk.params
    # CPU results are bit-identical for a fixed thread count (GPU ones: docs/methods.md, "Determinism").
    configure_torch(smk.threads, p.device, deterministic=p.deterministic)
    seed = int(smk.wildcards.seed)
    cfg = FinetuneConfig(**p.finetune, mixed_precision=p.mixed_precision, compile=p.compile)
    # Only asked for with layers >= 1 (rules/keyclips.smk decides); load_bottom refuses other counts.
    clips = read_clips_parquet(smk.input.clips)
    fold, inner = clip_folds(read_folds(smk.input.folds, clips), clips)
    log.info("%d clips, %d folds; fine-tuning the top %d layers of %s on %s, seed %d", len(clips),
             len(set(fold.tolist())), cfg.layers, p.encoder_path or "the packaged all-MiniLM-L6-v2", p.device, seed)
    bottom = load_bottom(p.encoder_path, clips["sentence"].astype(str).tolist(), cfg.layers,
                         max_length=cfg.max_length, device=p.device)
    finetuned = finetune_folds(bottom, clips["is_key"].to_numpy().astype(bool), fold, inner, cfg, seed)
    table = finetuned_vectors_table(clips, finetuned)
    write_parquet(table, smk.output.vectors, finetuned_vectors_schema(bottom.hidden_size),
                  sort_keys=["fold", "video_id", "clip_idx"])
    info = {"seed": seed, "finetune": p.finetune, "encoder_path": p.encoder_path,
            "folds": {str(f): t.info for f, t in finetuned.items()}}
    atomic_write_text(smk.output.info, json.dumps(info, indent=1, sort_keys=True) + "\n")
    log.info("wrote %s: %d rows (folds x clips), dim %d", smk.output.vectors, table.num_rows, bottom.hidden_size)
