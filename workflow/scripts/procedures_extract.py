"""A user's subtitles (and optional video) -> clips -> key clips and tuples -> JSON and Markdown."""
from cookproc.core.logs import script_logging
from cookproc.core.torch_runtime import configure_torch
from cookproc.app.documents import to_json, to_markdown
from cookproc.app.procedures import ProcedureSettings, extract_procedure
from cookproc.app.progress import LoggedProgress
from cookproc.core.parquet_io import atomic_write_text

with script_logging(snakemake) as log:
    configure_torch(snakemake.threads, snakemake.params.device, deterministic=snakemake.params.deterministic)
    settings = ProcedureSettings.from_config({**dict(snakemake.params.items()),
                                              "keyclip_model": (snakemake.input.keyclip_model or [None])[0],
                                              "tuple_model": (snakemake.input.tuple_model or [None])[0],
                                              "step_model": (snakemake.input.step_model or [None])[0]})
    document = extract_procedure(snakemake.input.subtitles, settings, lexicon=snakemake.input.lexicon,
                                 name=snakemake.wildcards.name, video=(snakemake.input.video or [None])[0],
                                 progress=LoggedProgress(f"extracting {snakemake.wildcards.name}"))
    log.info("[1/2] %s: %d clips (%s segmentation), %d key clips by %s", snakemake.input.subtitles,
             document["n_clips"], document["segmentation"], document["n_key_clips"], document["extractor"])
    # Both texts first (each validates the document), then the files: a refused document writes neither.
    json_text, markdown_text = to_json(document), to_markdown(document)
    atomic_write_text(snakemake.output.json, json_text)
    atomic_write_text(snakemake.output.markdown, markdown_text)
    log.info("[2/2] wrote %s and %s", snakemake.output.json, snakemake.output.markdown)
