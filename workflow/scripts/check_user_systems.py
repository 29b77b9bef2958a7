"""The user-systems folder checked as a whole: one message listing every file that is no system's,
every bad name and every system with two files (those are left out of the tables)."""
from cookproc.core.errors import InputError
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text
from cookproc.evaluation.systems import scan_user_systems

with script_logging(snakemake) as log:
    scan = scan_user_systems(snakemake.params.folder)
    if scan.problems:
        # One line (a failed job's message, without a traceback: cookproc.core.logs.script_logging).
        raise InputError(snakemake.params.folder, scan.message(one_line=True).split(": ", 1)[1])
    # Fixed since the workflow was read: say what is there now (the next run includes it).
    lines = [f"{kind}\t{name}\t{scan.files(kind, name)[0]}\n" for kind in ("keyclips", "tuples")
             for name in scan.names(kind)]
    atomic_write_text(snakemake.output[0], "kind\tname\tfile\n" + "".join(lines))
    log.info("%s: no problems left; %d user systems", snakemake.params.folder, len(lines))
