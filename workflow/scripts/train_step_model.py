"""Rule train_step_model: the step model of one label variant -> results/captions/models/steps-<variant>/."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.captions.deploy import save_step_model, training_card
    from cookproc.captions.inputs import training_videos
    from cookproc.captions.model import StepModelSettings
    from cookproc.captions.training import fit_step_model
    from cookproc.core.threads import limit_threads
    from cookproc.learn.inputs import read_clips_parquet

    smk = snakemake  # noqa: F821
    limit_threads(smk.threads)
    variant = smk.wildcards.variant
    settings = StepModelSettings.from_config({**smk.params.model, "benchmark_labels": variant == "captions-benchmark"})
    videos = training_videos(smk.input, read_clips_parquet(smk.input.clips))
    model = fit_step_model(videos, settings)
    # No wall time in the folder (the same inputs give the same bytes): benchmarks/ records it.
    meta = {"name": f"steps-{variant}", "encoder": dict(smk.params.encoder), "code": smk.params.code,
            "training": model.training}
    save_step_model(smk.output.model, model, meta, training_card)
    log.info("step model steps-%s trained", variant)
