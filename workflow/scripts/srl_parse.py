"""Rules srl_parse_*: label every benchmark sentence with one SRL backend -> results/srl/<backend>.parquet."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    import time

    import pyarrow as pa
    import torch

    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.core.schemas import CLIPS
    from cookproc.srl.parses import PARSE_KEYS, SRL_PARSES, parse_rows

    from cookproc.core.torch_runtime import configure_torch

    backend = snakemake.params.backend
    configure_torch(snakemake.threads, snakemake.params.device, deterministic=snakemake.params.deterministic)
    clips = read_parquet(snakemake.input.clips, CLIPS).select(["video_id", "clip_idx", "sentence"]).to_pylist()
    keys = [(c["video_id"], c["clip_idx"]) for c in clips]
    t0 = time.perf_counter()
    if backend == "tagger":
        from cookproc.srl.predict import label_with_tagger, load_tagger

        torch.manual_seed(0)
        parses = label_with_tagger([c["sentence"] for c in clips], load_tagger(snakemake.input.model),
                                   device=snakemake.params.device)
        by_clip = dict(zip(keys, parses))
    elif backend == "spacy":
        from cookproc.srl.predict import label_with_spacy

        by_clip = dict(zip(keys, label_with_spacy([c["sentence"] for c in clips],
                                                  predicate_tags=snakemake.params.predicate_tags)))
    elif backend == "allennlp":
        from cookproc.srl.allennlp import read_allennlp

        by_clip = read_allennlp(snakemake.input.json, keys)
    else:
        raise ValueError(f"unknown SRL backend {backend!r}")
    rows = [r for key in keys for r in parse_rows(backend, key[0], key[1], by_clip.get(key, []))]
    write_parquet(pa.Table.from_pylist(rows, schema=SRL_PARSES), snakemake.output.parses, SRL_PARSES,
                  sort_keys=PARSE_KEYS)
    n_parses = sum(len(by_clip.get(k, [])) for k in keys)
    log.info("%s: %d clips, %d parses, %d chunks in %.1fs", backend, len(keys), n_parses, len(rows),
             time.perf_counter() - t0)
