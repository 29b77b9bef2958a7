# config.yaml read by the library before the Snakefile's `configfile:` reads it, so that a broken
# file is named with its line and what is wrong, in one line. (A file given with --configfile, or a
# malformed --config, is read by Snakemake's command line before any workflow code runs.)
import os
import sys

# This checkout's cookproc first on the module path (rules/common.smk says why; it does the same).
if os.path.join(workflow.basedir, "workflow") not in sys.path:
    sys.path.insert(0, os.path.join(workflow.basedir, "workflow"))

from cookproc.core.config_schema import ConfigError, load_config_file  # noqa: E402
from snakemake.exceptions import WorkflowError  # noqa: E402

if os.path.exists("config.yaml"):
    try:
        load_config_file("config.yaml")
    except ConfigError as error:
        raise WorkflowError(str(error)) from None
