"""Copy finished figures to the report folder (each output from the input of the same name)."""
import shutil

from cookproc.core.logs import script_logging

with script_logging(snakemake) as log:
    for name in snakemake.output.keys():
        shutil.copyfile(snakemake.input[name], snakemake.output[name])
        log.info("copied %s -> %s", snakemake.input[name], snakemake.output[name])
