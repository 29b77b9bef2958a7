"""Rule people_retrieval_floor: each people's test video gets the captions of the training video whose
transcript is nearest its own, copied as its steps -> results/people/steps/nearest-video-captions.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pyarrow as pa

    from cookproc.captions.inputs import read_sentences, read_videos
    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.data.captions import CAPTIONS
    from cookproc.evaluation.people_steps import STEPS, nearest_training_videos, retrieval_floor_steps

    smk = snakemake  # noqa: F821
    videos = read_videos(smk.input.videos)
    sentences = read_sentences(smk.input.sentences)
    transcript = {video: " ".join(sentences[video]["sentence"]).lower() for video in videos["video_id"]}
    split = dict(zip(videos["video_id"], videos["split"]))
    nearest = nearest_training_videos({v: t for v, t in transcript.items() if split[v] == "train"},
                                      {v: t for v, t in transcript.items() if split[v] == "test"})
    steps = retrieval_floor_steps(nearest, read_parquet(smk.input.train, CAPTIONS).to_pandas())
    write_parquet(pa.Table.from_pandas(steps, schema=STEPS, preserve_index=False), smk.output.steps, STEPS,
                  sort_keys=["video_id", "step_idx"])
    log.info("retrieval floor: %d test videos, %d steps copied from %d training videos", len(nearest), len(steps),
             len(set(nearest.values())))
