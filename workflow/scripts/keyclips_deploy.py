"""Rule deploy_keyclip_selector: the neural text key-clip selector trained on every benchmark recipe,
saved as a folder with its model card (cross-validated scores of the same configuration)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pyarrow as pa

    from cookproc.evaluation.bootstrap import table4_intervals
    from cookproc.keyclips.deploy import metadata, model_card, save_selector, train_selector
    from cookproc.keyclips.finetune import FinetuneConfig
    from cookproc.learn.folds import clip_folds, read_folds
    from cookproc.learn.inputs import align_rows, read_clips_parquet
    from cookproc.keyclips.summary import score_run
    from cookproc.keyclips.train import KeyClipTrainConfig
    from cookproc.core.parquet_io import read_parquet
    from cookproc.core.schemas import KEYCLIPS
    from cookproc.core.torch_runtime import configure_torch

    smk = snakemake  # noqa: F821
    p = smk.params
    # CPU results are bit-identical for a fixed thread count (GPU ones: docs/methods.md, "Determinism").
    configure_torch(smk.threads, p.device, deterministic=p.deterministic)
    clips = read_clips_parquet(smk.input.clips)
    _, inner = clip_folds(read_folds(smk.input.folds, clips), clips)
    log.info("[1/3] %d clips of %d recipes; %d of them in inner-validation recipes", len(clips),
             clips["recipe"].nunique(), int(inner.sum()))
    selector = train_selector(clips, inner, encoder_path=p.encoder_path, finetune=FinetuneConfig(**p.finetune, mixed_precision=p.mixed_precision, compile=p.compile),
                              net=KeyClipTrainConfig(**p.train), context_window=p.context_window,
                              layout_features=p.layout_features, head_weight=p.head_weight, seed=p.seed,
                              device=p.device, candidates=p.selection["candidates"],
                              objective=p.selection["objective"])

    log.info("[2/3] scoring the cross-validated run %s", smk.input.crossval)
    # The cross-validated run with the seed this model is built with (keyclips_neural: the first seed),
    # one of the runs Table 4's row averages.
    run = score_run(clips, smk.input.crossval)
    cv_rows = [{"run": f"seed {run['seed'] if run['seed'] is not None else p.seed}", "system": run["system"],
                **{m: float(run[m]) for m in ("accuracy", "precision", "recall", "f1")}}]
    table = read_parquet(smk.input.crossval, KEYCLIPS).to_pandas()
    rows = align_rows(smk.input.crossval, list(zip(table["video_id"], table["clip_idx"].astype(int))), clips,
                      "key clips")
    bootstrap = p.bootstrap
    intervals, _ = table4_intervals(pa.Table.from_pandas(clips, preserve_index=False),
                                    {"neural-text": table["is_key"].to_numpy()[rows]}, unit=bootstrap["unit"],
                                    resamples=bootstrap["resamples"], seed=bootstrap["seed"],
                                    confidence=bootstrap["confidence"])
    interval = {"unit": bootstrap["unit"], "resamples": bootstrap["resamples"],
                "metrics": {r["metric"]: [float(r["ci_low"]), float(r["ci_high"])] for r in intervals.to_pylist()}}

    config = {"encoder": {"name": p.encoder_name, "path": p.encoder_path}, "finetune": dict(p.finetune),
              "train": dict(p.train), "context_window": p.context_window, "layout_features": p.layout_features,
              "head_weight": p.head_weight, "selection": p.selection, "seed": p.seed, "device": p.device}
    out = smk.output.model
    meta = metadata(selector, config=config, code=p.code)
    # What the card states, as data (results/numbers.json reads it; a test checks it equals the seed's
    # row of results/keyclips/seed_summary.csv).
    meta["crossval"] = {"system": run["system"], "source": smk.input.crossval, "runs": cv_rows, "intervals": interval}
    card = model_card(out.rstrip("/").split("/")[-1], {**meta, "path": out}, selector.seconds, cv_rows, interval)
    save_selector(selector, out, meta, card)
    log.info("[3/3] wrote %s (threshold %.4f; cross-validated F1 %.1f)", out, selector.spec.threshold, run["f1"])
