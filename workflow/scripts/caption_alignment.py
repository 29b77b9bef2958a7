"""Rule caption_alignment: each training video's captions aligned to its transcript sentences ->
results/captions/alignment.parquet, and its quality against the benchmark's key clips -> alignment_quality.csv."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pandas as pd

    from cookproc.captions.align import ALIGNMENT, alignment_quality, alignment_table
    from cookproc.captions.inputs import (benchmark_key_clips, read_alignment, read_captions, read_sentences,
                                          read_vectors)
    from cookproc.core.parquet_io import write_parquet
    from cookproc.data.step_words import StepWords
    from cookproc.learn.inputs import read_clips_parquet

    smk = snakemake  # noqa: F821
    sentences, captions = read_sentences(smk.input.sentences), read_captions(smk.input.train)
    sentence_vectors, caption_vectors = read_vectors(smk.input.sentence_vectors), read_vectors(smk.input.caption_vectors)
    rows = ((v, caption_vectors[v], sentence_vectors[v], captions[v],
             [StepWords(tuple(a), tuple(b)) for a, b in zip(sentences[v]["verbs"], sentences[v]["nouns"])])
            for v in sorted(captions))
    table = alignment_table(rows, smk.params.lexical_weight)
    write_parquet(table, smk.output.alignment, ALIGNMENT, sort_keys=["video_id", "caption_idx"])
    quality = alignment_quality(read_alignment(smk.output.alignment),
                                benchmark_key_clips(read_clips_parquet(smk.input.clips), sentences))
    pd.DataFrame([quality]).to_csv(smk.output.quality, index=False, float_format="%.4f")
    log.info("%d captions aligned; on %d benchmark videos, aligned sentences as key clips: P %.1f R %.1f F1 %.1f "
             "(key share %.1f)", table.num_rows, quality["videos"], quality["precision"], quality["recall"],
             quality["f1"], quality["key_share"])
