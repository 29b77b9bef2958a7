"""Table 4: key-clip selection scores of every configured and user key-clip system, with the runs
behind each row (mean ± sd over seeds), the threshold rule and the threshold-free AUC-ROC / AP, pooled
out of fold and as the mean per fold."""
import json

from cookproc.core.formatting import markdown_table
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text, read_parquet
from cookproc.core.schemas import CLIPS, KEYCLIPS
from cookproc.evaluation.tables import table4, table4_wide, threshold_rule_summary, tidy_csv, to_csv
from cookproc.evaluation.threshold_free import TABLE4_NOTE

with script_logging(snakemake) as log:
    p = snakemake.params
    clips = read_parquet(snakemake.input.clips, CLIPS)
    systems = {name: read_parquet(path, KEYCLIPS) for name, path in zip(p.systems, snakemake.input.systems)}
    seed_runs = {}
    for name, path in zip(p.seed_run_systems, snakemake.input.seed_runs):
        seed_runs.setdefault(name, []).append(read_parquet(path, KEYCLIPS))
    infos = {}
    for name, path in zip(p.info_systems, snakemake.input.infos):
        with open(path, encoding="utf-8") as handle:
            infos.setdefault(name, []).append(json.load(handle))
    rules = {name: threshold_rule_summary(infos[name], rule) if name in infos else rule
             for name, rule in p.threshold_rules.items()}
    table = table4(clips, systems, seed_runs=seed_runs, threshold_rules=rules, seeds=p.seeds)
    atomic_write_text(snakemake.output.tidy, tidy_csv(table))
    wide = table4_wide(table)
    atomic_write_text(snakemake.output.wide, to_csv(*wide))
    atomic_write_text(snakemake.output.markdown,
                      f"## Table 4: key clip selection\n\n{markdown_table(*wide)}\n\n{TABLE4_NOTE}")
    log.info("\n%s", markdown_table(*wide))
