"""Rule numbers: every figure the README and docs state about results, in results/numbers.json."""
from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:  # noqa: F821 (snakemake is injected)
    from pathlib import Path

    from cookproc.core.parquet_io import atomic_write_text
    from cookproc.evaluation.numbers import TABLES, collect, config_digest, dumps, git_state, today

    smk = snakemake  # noqa: F821
    # The checkout this workflow runs from (workflow/scripts/ is two levels below it).
    repo = Path(smk.scriptdir).resolve().parents[1]
    # The config of this job's run, as a digest (not a param: a setting nothing here reads must not
    # rerun the job; the file is written again whenever a table or card it reads changes).
    run = {**git_state(repo), "date": today(), "config_digest": config_digest(smk.config), "code": smk.params.code}
    tables = {key: smk.input[key] for key in TABLES if key in smk.input.keys()}
    models = {Path(folder).name: folder for folder in smk.input.models}
    benchmarks = sorted(str(p) for p in Path(smk.params.benchmarks_dir).rglob("*.tsv"))
    numbers = collect(tables, models, benchmarks, run)
    atomic_write_text(smk.output.numbers, dumps(numbers))
    log.info("wrote %s: %s; %d models, %d run times; run %s", smk.output.numbers,
             ", ".join(f"{k} ({len(numbers[k])} rows)" for k in tables), len(models), len(numbers["run_times"]), run)
