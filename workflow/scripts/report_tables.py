"""Tables 2, 4 and 5 as HTML pages for the report."""
from cookproc.core.logs import script_logging
from cookproc.evaluation.report import csv_page
from cookproc.core.parquet_io import atomic_write_text

PAGES = {
    "table2": ("Table 2: gold verbs and arguments", "Items found in their sentence exactly or fuzzily (percent)."),
    "table4": ("Table 4: key clip selection",
               "Accuracy, precision, recall and F1 (percent) over all clips; mean ± sd over seeds where the Seeds "
               "column says so; the threshold rule behind the key decisions, and the threshold-free AUC-ROC and "
               "average precision of the out-of-fold scores (n/a for systems with binary decisions only)."),
    "table5": ("Table 5: procedure tuple extraction",
               "P / R / F1 (percent), macro-averaged over counted clips; V = verbs, A = arguments."),
}

with script_logging(snakemake) as log:
    for name, (title, note) in PAGES.items():
        atomic_write_text(snakemake.output[name], csv_page(snakemake.input[name], title, note))
        log.info("wrote %s from %s", snakemake.output[name], snakemake.input[name])
