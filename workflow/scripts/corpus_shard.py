"""One shard of a corpus: its transcripts / subtitles -> procedure documents -> clip rows (Parquet)."""
from cookproc.app.corpus import CORPUS_CLIPS, documents_table
from cookproc.core.logs import script_logging
from cookproc.core.torch_runtime import configure_torch
from cookproc.app.procedures import ProcedureSettings, procedure_documents
from cookproc.app.progress import LoggedProgress
from cookproc.core.parquet_io import write_parquet
from cookproc.core.schemas import CLIP_KEY

with script_logging(snakemake) as log:
    configure_torch(snakemake.threads, snakemake.params.device, deterministic=snakemake.params.deterministic)
    settings = ProcedureSettings.from_config({**dict(snakemake.params.items()),
                                              "keyclip_model": (snakemake.input.keyclip_model or [None])[0],
                                              "tuple_model": (snakemake.input.tuple_model or [None])[0],
                                              "step_model": (snakemake.input.step_model or [None])[0]})
    sources = list(snakemake.input.sources)
    log.info("[1/2] shard %s of %d: %d files", snakemake.wildcards.shard, snakemake.params.shards, len(sources))
    documents = procedure_documents(sources, settings, lexicon=snakemake.input.lexicon,
                                    progress=LoggedProgress(f"shard {snakemake.wildcards.shard}"))
    table = documents_table(documents, sources)
    write_parquet(table, snakemake.output.clips, CORPUS_CLIPS, sort_keys=CLIP_KEY)
    log.info("[2/2] wrote %s: %d clips of %d videos, %d key", snakemake.output.clips, table.num_rows, len(documents),
             sum(d["n_key_clips"] for d in documents))
