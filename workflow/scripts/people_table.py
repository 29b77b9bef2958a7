"""Rule people_table: every system's row and the constant prior's -> results/people.csv and .md."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    import pandas as pd

    from cookproc.captions.inputs import read_captions
    from cookproc.core.parquet_io import atomic_write_text
    from cookproc.evaluation.people import TABLE_COLUMNS, constant_prior, markdown, table_row
    from cookproc.scoring.people import idf_weights, unseen_weight, video_scores

    smk = snakemake  # noqa: F821
    p = smk.params
    test, train = read_captions(smk.input.test), read_captions(smk.input.train)
    idf, unseen = idf_weights(train), unseen_weight(len(train))
    prior, k = constant_prior(train, idf, unseen, p.max_constant)
    b = p.bootstrap
    rows = [table_row("constant-prior", video_scores({v: [prior] for v in test}, test, idf, unseen),
                      resamples=b["resamples"], seed=b["seed"], confidence=b["confidence"])]
    rows += [pd.read_csv(path).iloc[0].to_dict() for path in smk.input.rows]
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    table.to_csv(smk.output.csv, index=False)
    atomic_write_text(smk.output.markdown, markdown(table))
    atomic_write_text(smk.output.constant, json.dumps({"k": k, "verbs": list(prior.verbs), "nouns": list(prior.nouns),
                                                       "pairs": [list(x) for x in prior.pairs]}, indent=1) + "\n")
    log.info("constant prior: k = %s; %d systems", k, len(table))
