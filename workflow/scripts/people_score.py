"""Rule people_score: one system's procedures against the people's test videos' captions ->
results/people/scores/<system>.parquet (per video) and .csv (its row of the people's table)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pandas as pd
    import pyarrow as pa

    from cookproc.captions.inputs import read_captions
    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.evaluation.people import (PROCEDURES, TABLE_COLUMNS, VIDEO_SCORES, normalised_system,
                                            system_steps, table_row)
    from cookproc.scoring.people import idf_weights, unseen_weight, video_scores

    smk = snakemake  # noqa: F821
    system = smk.wildcards.people_system
    test, train = read_captions(smk.input.test), read_captions(smk.input.train)
    idf, unseen = idf_weights(train), unseen_weight(len(train))  # counted on the training videos only
    steps = system_steps(read_parquet(smk.input.procedures, PROCEDURES).to_pandas(), normalised_system(system))
    missing = sorted(set(test) - set(steps))
    if missing:
        raise ValueError(f"{smk.input.procedures}: no procedure for {len(missing)} test videos, e.g. {missing[0]}")
    scores = video_scores(steps, test, idf, unseen)
    write_parquet(pa.Table.from_pandas(scores.assign(system=system), preserve_index=False), smk.output.scores,
                  VIDEO_SCORES, sort_keys=["system", "video_id"])
    b = smk.params.bootstrap
    row = table_row(system, scores, resamples=b["resamples"], seed=b["seed"], confidence=b["confidence"])
    pd.DataFrame([row], columns=TABLE_COLUMNS).to_csv(smk.output.row, index=False)
    log.info("%s: verbs F1 %.1f [%.1f, %.1f], IDF-weighted %.1f, nouns %.1f, pairs %.1f, tau %.2f over %d videos",
             system, row["verbs_f1"], row["verbs_f1_low"], row["verbs_f1_high"], row["idf_verbs_f1"],
             row["nouns_f1"], row["pairs_f1"], row["order_tau"], row["n_videos"])
