"""Rule people_score: one system's steps against the people's test videos' captions ->
results/people/scores/<system>.parquet (per video) and .csv (its row of the people's table)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pandas as pd
    import pyarrow as pa

    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.data.captions import CAPTIONS
    from cookproc.evaluation.people import TABLE_COLUMNS, VIDEO_SCORES, read_idf, table_row
    from cookproc.evaluation.people_steps import STEPS, captions_by_video, steps_by_video, text_scores
    from cookproc.scoring.people import video_scores

    smk = snakemake  # noqa: F821
    system = smk.wildcards.people_system
    test = captions_by_video(read_parquet(smk.input.test, CAPTIONS).to_pandas())
    idf, unseen = read_idf(smk.input.idf)  # counted on the training videos only
    table = read_parquet(smk.input.steps, STEPS).to_pandas()
    steps = steps_by_video(table)
    unknown = sorted(set(steps) - set(test))
    if unknown:
        raise ValueError(f"{smk.input.steps}: steps of {len(unknown)} videos outside the test set, e.g. {unknown[0]}")
    scores = video_scores(steps, test, idf, unseen)  # a test video without a step scores as an empty procedure
    write_parquet(pa.Table.from_pandas(scores.assign(system=system), preserve_index=False), smk.output.scores,
                  VIDEO_SCORES, sort_keys=["system", "video_id"])
    b = smk.params.bootstrap
    row = table_row(system, scores, resamples=b["resamples"], seed=b["seed"], confidence=b["confidence"],
                    text=text_scores(steps, test))
    pd.DataFrame([row], columns=TABLE_COLUMNS).to_csv(smk.output.row, index=False)
    log.info("%s: step F1 %.1f [%.1f, %.1f] (strict %.1f), %.1f steps per video; verbs F1 %.1f, IDF-weighted %.1f, "
             "nouns %.1f, pairs %.1f, tau %.2f over %d videos", system, row["steps_f1"], row["steps_f1_low"],
             row["steps_f1_high"], row["strict_steps_f1"], row["mean_steps"], row["verbs_f1"], row["idf_verbs_f1"],
             row["nouns_f1"], row["pairs_f1"], row["order_tau"], row["n_videos"])
