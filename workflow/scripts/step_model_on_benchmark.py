"""Rule step_model_on_benchmark: the step model trained on the videos outside the benchmark, its key
steps scored on the benchmark's key clips -> results/captions/steps_on_benchmark.csv (a separate row:
not leave-recipes-out)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pandas as pd

    from cookproc.captions.benchmark import COLUMNS, key_step_scores, outside
    from cookproc.captions.inputs import (benchmark_key_clips, read_sentences, read_vectors, read_videos,
                                          training_videos, video_text)
    from cookproc.captions.model import StepModelSettings
    from cookproc.captions.training import fit_step_model
    from cookproc.core.threads import limit_threads
    from cookproc.learn.inputs import read_clips_parquet

    smk = snakemake  # noqa: F821
    limit_threads(smk.threads)
    clips = read_clips_parquet(smk.input.clips)
    videos = read_videos(smk.input.videos)
    benchmark = set(videos.loc[videos["in_benchmark"], "video_id"])
    train = outside(training_videos(smk.input, clips), benchmark)
    model = fit_step_model(train, StepModelSettings.from_config({**smk.params.model, "benchmark_labels": False}))
    sentences, vectors = read_sentences(smk.input.sentences), read_vectors(smk.input.sentence_vectors)
    gold = benchmark_key_clips(clips, sentences)
    texts = [video_text(v, sentences[v], vectors[v]) for v in sorted(gold)]
    row = key_step_scores(model, texts, gold)
    pd.DataFrame([row], columns=COLUMNS).to_csv(smk.output.scores, index=False)
    log.info("trained on %d videos outside the benchmark; on %d benchmark videos: Acc %.1f P %.1f R %.1f F1 %.1f "
             "(steps %.1f%% of clips, key clips %.1f%%)", len(train), row["n_videos"], row["accuracy"],
             row["precision"], row["recall"], row["f1"], row["step_share"], row["key_share"])
