"""Rule step_model_on_benchmark: the step model trained on the videos outside the benchmark, its key
steps scored on the benchmark's key clips and checked in time against the captions' segments ->
results/captions/steps_on_benchmark.csv (a separate row: not leave-recipes-out)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pandas as pd

    from cookproc.captions.benchmark import COLUMNS, key_step_scores, outside, sentence_times, time_scores
    from cookproc.captions.inputs import (benchmark_key_clips, read_sentences, read_vectors, read_videos,
                                          training_videos, video_text)
    from cookproc.captions.model import StepModelSettings
    from cookproc.captions.training import fit_step_model
    from cookproc.core.threads import limit_threads
    from cookproc.data.captions import read_caption_segments
    from cookproc.data.step_words import caption_words
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
    steps = model.steps(texts)
    row = key_step_scores(model, texts, gold, steps)
    segments, no_video = read_caption_segments(smk.input.segments)
    if no_video:
        log.warning("%s: %d caption segments name no video (lines %s): they belong to no benchmark video",
                    smk.input.segments, len(no_video), ", ".join(map(str, no_video)))
    segments = {v: s for v, s in segments.items() if v in gold}
    keys = [(v, k) for v in sorted(segments) for k in range(len(segments[v]))]
    verbs = dict(zip(keys, (w.verbs for w in caption_words([segments[v][k][2] for v, k in keys]))))
    row |= time_scores({s.video_id: s.verbs for s in steps}, sentence_times(clips),
                       {v: [(start, end, verbs[v, k]) for k, (start, end, _) in enumerate(segments[v])]
                        for v in segments}, gold)
    pd.DataFrame([row], columns=COLUMNS).to_csv(smk.output.scores, index=False)
    log.info("trained on %d videos outside the benchmark; on %d benchmark videos: Acc %.1f P %.1f R %.1f F1 %.1f "
             "(steps %.1f%% of clips, key clips %.1f%%)", len(train), row["n_videos"], row["accuracy"],
             row["precision"], row["recall"], row["f1"], row["step_share"], row["key_share"])
    log.info("in time, on %d videos with caption segments: %.1f%% of %d steps lie in a segment (%.1f%% of all "
             "sentences, %.1f%% of key clips), %.1f%% of %d segments hold a step, %.1f%% of the steps in a segment "
             "share a verb with its caption", row["time_videos"], row["steps_in_segments"], row["time_steps"],
             row["sentences_in_segments"], row["key_clips_in_segments"], row["segments_with_step"], row["segments"],
             row["verb_shared_in_segment"])
