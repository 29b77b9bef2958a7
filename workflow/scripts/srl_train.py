"""Rule train_srl: train the BIO tagger on the EWT training data; write the model and its EWT scores."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    import json
    import time

    import torch

    from cookproc.core.parquet_io import atomic_write_text, read_parquet
    from cookproc.srl.training_data import SRL_TRAINING_DATA
    from cookproc.srl.word_encoder import WordEncoder
    from cookproc.srl.training import TaggerTrainConfig, evaluate, prepare, save_tagger, train_ensemble

    p = snakemake.params
    cfg = TaggerTrainConfig(**p.tagger, predicate_tags=p.predicate_tags, device=p.device, threads=snakemake.threads)
    from cookproc.core.torch_runtime import configure_torch

    configure_torch(snakemake.threads, cfg.device, deterministic=p.deterministic)
    rows = read_parquet(snakemake.input.training_data, SRL_TRAINING_DATA).to_pylist()
    t0 = time.perf_counter()
    encoder = WordEncoder(cfg.encoder, device=cfg.device)
    prep = prepare(rows, encoder)
    n_layers, dim = encoder.n_layers, encoder.dim
    del rows, encoder  # only the prepared features are needed from here on (peak memory)
    prep_s = time.perf_counter() - t0
    tagger, members = train_ensemble(prep, cfg, n_layers, dim)
    train_s = time.perf_counter() - t0 - prep_s
    save_tagger(tagger, snakemake.output.model)
    lines = ["split\trole\tprecision\trecall\tf1\tgold\tpred\ttp"]
    for split in ("dev", "test"):
        scores = evaluate(tagger, prep, split, device=cfg.device)
        for role in ["overall"] + sorted(r for r in scores if r != "overall"):
            s = scores[role]
            lines.append(f"{split}\t{role}\t{s['precision']:.4f}\t{s['recall']:.4f}\t{s['f1']:.4f}\t"
                         f"{s['gold']}\t{s['pred']}\t{s['tp']}")
        log.info("%s overall: %s", split, scores["overall"])
    atomic_write_text(snakemake.output.scores, "\n".join(lines) + "\n")
    summary = {"prepare_seconds": round(prep_s, 1), "train_seconds": round(train_s, 1),
               "threads": snakemake.threads, "device": cfg.device, "members": members}
    atomic_write_text(snakemake.output.history, json.dumps(summary, indent=1) + "\n")
    log.info("prepare %.0fs, training %.0fs", prep_s, train_s)
