"""Rule caption_vectors: the frozen sentence encoder's vectors of every transcript sentence and every
training caption -> results/captions/{sentence,caption}_vectors.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.core.torch_runtime import configure_torch
    from cookproc.data.captions import CAPTIONS, SENTENCES
    from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder
    from cookproc.learn.sentence_vectors import text_features_schema, text_features_table

    smk = snakemake  # noqa: F821
    p = smk.params
    # Inference only; seeded anyway so that nothing can depend on a random state.
    configure_torch(smk.threads, p.device, deterministic=p.deterministic, seed=0)
    encoder = load_sentence_encoder(p.encoder["path"], pooling=p.encoder["pooling"], max_length=p.encoder["max_length"],
                                    device=p.device)
    # Lower-cased as the benchmark's transcripts the encoder's other uses read.
    for source, schema, text, index, out in ((smk.input.sentences, SENTENCES, "sentence", "clip_idx", smk.output.sentences),
                                             (smk.input.train, CAPTIONS, "caption", "caption_idx", smk.output.captions)):
        table = read_parquet(source, schema)
        vectors = embed_sentences([t.lower() for t in table.column(text).to_pylist()], encoder,
                                  batch_size=p.encoder["batch_size"], progress=True)
        write_parquet(text_features_table(table.column("video_id").to_pylist(), table.column(index).to_pylist(), vectors),
                      out, text_features_schema(encoder.dim), sort_keys=["video_id", "clip_idx"])
        log.info("%s: %d x %d vectors", out, *vectors.shape)
