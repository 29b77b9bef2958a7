"""Table 4: key-clip selection scores of every configured and user key-clip system."""
from cookproc.core.logs import script_logging
from cookproc.core.schemas import CLIPS, KEYCLIPS, atomic_write_text, read_parquet
from cookproc.tables import table4, table4_wide, tidy_csv, to_csv, to_markdown

with script_logging(snakemake) as log:
    clips = read_parquet(snakemake.input.clips, CLIPS)
    systems = {name: read_parquet(path, KEYCLIPS) for name, path in zip(snakemake.params.systems, snakemake.input.systems)}
    table = table4(clips, systems)
    atomic_write_text(snakemake.output.tidy, tidy_csv(table))
    wide = table4_wide(table)
    atomic_write_text(snakemake.output.wide, to_csv(*wide))
    atomic_write_text(snakemake.output.markdown, to_markdown(*wide, title="Table 4: key clip selection"))
    log.info("\n%s", to_markdown(*wide))
