"""Rule wordnet: lay WordNet 3.0 out for NLTK in the workflow's nltk_data folder."""
from pathlib import Path

from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    from cookproc.data.wordnet import install

    target = install(Path(snakemake.params.source), Path(snakemake.output.nltk_data))
    log.info("WordNet from %s laid out for NLTK in %s", snakemake.params.source, target)
