"""Rule people_steps: one system's procedures of the people's test videos -> its steps as they are
scored, results/people/steps/<system>.parquet (its key clips in order, their words and texts)."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    import pyarrow as pa

    from cookproc.core.parquet_io import read_parquet, write_parquet
    from cookproc.evaluation.people import PROCEDURES, normalised_system
    from cookproc.evaluation.people_steps import STEPS, procedure_steps

    smk = snakemake  # noqa: F821
    system = smk.wildcards.procedure_system
    steps = procedure_steps(read_parquet(smk.input.procedures, PROCEDURES).to_pandas(), normalised_system(system))
    write_parquet(pa.Table.from_pandas(steps, schema=STEPS, preserve_index=False), smk.output.steps, STEPS,
                  sort_keys=["video_id", "step_idx"])
    log.info("%s: %d steps of %d videos", system, len(steps), steps["video_id"].nunique())
