"""Rule caption_corpus: the people's split, every transcript's sentences and the captions (train and
test apart), with their step words -> results/captions/{videos,sentences,captions.train,captions.test}.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.core.parquet_io import write_parquet
    from cookproc.data.captions import (CAPTIONS, SENTENCES, VIDEOS, captions_table, read_video_texts,
                                        sentences_table, videos_table)
    from cookproc.learn.inputs import read_clips_parquet

    smk = snakemake  # noqa: F821
    texts = read_video_texts(smk.params.transcripts_dir, smk.params.captions_dir)
    benchmark = set(read_clips_parquet(smk.input.clips)["video_id"])
    videos = videos_table(texts, benchmark)
    split = dict(zip(videos.column("video_id").to_pylist(), videos.column("split").to_pylist()))
    log.info("%d videos with a transcript and captions: %d train (%d of them in the benchmark), %d test",
             len(split), sum(s == "train" for s in split.values()), len(benchmark & set(split)),
             sum(s == "test" for s in split.values()))
    write_parquet(videos, smk.output.videos, VIDEOS, sort_keys=["video_id"])
    write_parquet(sentences_table(texts), smk.output.sentences, SENTENCES, sort_keys=["video_id", "clip_idx"])
    for part in ("train", "test"):
        table = captions_table(texts, [v for v, s in split.items() if s == part])
        write_parquet(table, smk.output[part], CAPTIONS, sort_keys=["video_id", "caption_idx"])
        log.info("%s: %d captions", part, table.num_rows)
