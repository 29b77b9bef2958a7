# Every config file of the run read by the library before the Snakefile's `configfile:` reads
# config.yaml: config.yaml and each --configfile, so that a broken file, or a key given twice (which
# YAML resolves silently, keeping the last), is named with its file and line, in one line and without
# a traceback. (Snakemake's command line reads a --configfile before any workflow code runs: YAML it
# cannot parse at all stops it there, with its own message; `python -m cookproc.core.config_schema
# FILE` names the line.)
import os
import sys

# This checkout's cookproc first on the module path (rules/common.smk says why; it does the same).
if os.path.join(workflow.basedir, "workflow") not in sys.path:
    sys.path.insert(0, os.path.join(workflow.basedir, "workflow"))

from cookproc.core.config_files import load_config_file  # noqa: E402
from cookproc.core.errors import ConfigError, stop  # noqa: E402
from snakemake.logging import logger  # noqa: E402

for config_path in [
    *(["config.yaml"] if os.path.exists("config.yaml") else []),
    *map(os.path.relpath, workflow.config_settings.configfiles),
]:
    try:
        load_config_file(config_path)
    except ConfigError as error:
        stop(str(error), logger.error)
