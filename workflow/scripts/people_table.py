"""Rule people_table: every system's row and the constant prior's, and the rows compared pair by pair
-> results/people.csv, .md and people_comparisons.csv."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import json

    import pandas as pd

    from cookproc.captions.inputs import read_captions
    from cookproc.core.errors import ExpectedError
    from cookproc.core.parquet_io import atomic_write_text, read_parquet
    from cookproc.evaluation.people import (TABLE_COLUMNS, VIDEO_SCORES, constant_prior, markdown,
                                            paired_differences, read_idf, table_row)
    from cookproc.scoring.people import video_scores

    smk = snakemake  # noqa: F821
    p = smk.params
    test, train = read_captions(smk.input.test), read_captions(smk.input.train)
    idf, unseen = read_idf(smk.input.idf)
    prior, k = constant_prior(train, idf, unseen, p.max_constant)
    b = p.bootstrap
    scores = {"constant-prior": video_scores({v: [prior] for v in test}, test, idf, unseen)}
    rows = [table_row("constant-prior", scores["constant-prior"], resamples=b["resamples"], seed=b["seed"],
                      confidence=b["confidence"])]
    for system, row_path, scores_path in zip(p.systems, smk.input.rows, smk.input.scores):
        rows.append(pd.read_csv(row_path).iloc[0].to_dict())
        scores[system] = read_parquet(scores_path, VIDEO_SCORES).to_pandas()
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    if p.reference is not None and p.reference not in scores:
        raise ExpectedError(f"people.reference: {p.reference!r} is not among people.systems {list(p.systems)}")
    pairs = [(p.reference, other) for other in scores if other != p.reference] if p.reference else []
    comparisons = paired_differences(scores, pairs, resamples=b["resamples"], seed=b["seed"],
                                     confidence=b["confidence"])
    table.to_csv(smk.output.csv, index=False)
    comparisons.to_csv(smk.output.comparisons, index=False)
    atomic_write_text(smk.output.markdown, markdown(table, comparisons))
    atomic_write_text(smk.output.constant, json.dumps({"k": k, "verbs": list(prior.verbs), "nouns": list(prior.nouns),
                                                       "pairs": [list(x) for x in prior.pairs]}, indent=1) + "\n")
    log.info("constant prior: k = %s; %d systems, %d comparisons", k, len(table), len(comparisons))
