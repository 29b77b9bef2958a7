"""Rule deploy_step_model: a trained step model's folder with the card that states its people's scores
-> results/models/steps-<variant>/."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pandas as pd

    from cookproc.captions.deploy import deploy_step_model

    smk = snakemake  # noqa: F821
    people = pd.read_csv(smk.input.row).iloc[0].to_dict()
    benchmark = pd.read_csv(smk.input.benchmark).iloc[0].to_dict()
    deploy_step_model(smk.input.model, smk.output.model, people, benchmark, code=smk.params.code)
    log.info("deployed %s with its people's scores (verbs F1 %.1f)", smk.output.model, people["verbs_f1"])
