"""Rule text_features: sentence embeddings of every benchmark clip -> results/features/text/<name>.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from cookproc.core.torch_runtime import configure_torch
    from cookproc.learn.inputs import read_clips_parquet
    from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder
    from cookproc.learn.sentence_vectors import text_features_schema, text_features_table
    from cookproc.core.parquet_io import write_parquet

    p = snakemake.params  # noqa: F821
    # Inference only; seeded anyway so that nothing can depend on a random state.
    configure_torch(snakemake.threads, p.device, deterministic=p.deterministic, seed=0)  # noqa: F821
    clips = read_clips_parquet(snakemake.input.clips)  # noqa: F821
    log.info("read %d clips from %s", len(clips), snakemake.input.clips)  # noqa: F821
    encoder = load_sentence_encoder(p.path, pooling=p.pooling, max_length=p.max_length, device=p.device)
    log.info("encoder %s (dim %d) on %s", encoder.name, encoder.dim, p.device)
    vectors = embed_sentences(clips["sentence"].tolist(), encoder, batch_size=p.batch_size, progress=True)
    table = text_features_table(clips["video_id"].tolist(), clips["clip_idx"].tolist(), vectors)
    write_parquet(table, snakemake.output.features, text_features_schema(encoder.dim),  # noqa: F821
                  sort_keys=["video_id", "clip_idx"])
    log.info("wrote %d x %d to %s", *vectors.shape, snakemake.output.features)  # noqa: F821
