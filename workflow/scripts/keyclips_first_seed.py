"""The neural selector's run with the first configured seed as the system's one file (Table 5's
predicted key clips, the report, the deployed selector's card; Table 4's row is the mean over every
seed's run): its rows as they are, written again so that the file carries this job's provenance (a
plain copy would carry the seed job's)."""
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import read_parquet, write_parquet
from cookproc.core.schemas import CLIP_KEY, KEYCLIPS

with script_logging(snakemake):  # noqa: F821
    write_parquet(read_parquet(snakemake.input.keyclips, KEYCLIPS), snakemake.output.keyclips, KEYCLIPS,  # noqa: F821
                  sort_keys=CLIP_KEY)
