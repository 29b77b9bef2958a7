"""Rule people_idf: the verbs' IDF weights of the people's table, counted on the training videos'
captions only -> results/people/idf_weights.json."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    from cookproc.captions.inputs import read_captions
    from cookproc.core.parquet_io import atomic_write_text
    from cookproc.evaluation.people import idf_document

    smk = snakemake  # noqa: F821
    document = idf_document(read_captions(smk.input.train))
    atomic_write_text(smk.output.idf, json.dumps(document, indent=1, sort_keys=True) + "\n")
    log.info("IDF weights of %d verbs from %d training videos' captions", len(document["weights"]),
             document["n_videos"])
