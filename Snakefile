# Structured procedural knowledge extraction from cooking videos (Xu et al., 2020), as a workflow.
# Stages live in rules/*.smk; all logic in the cookproc library (workflow/cookproc).
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/systems.smk"
include: "rules/srl.smk"
include: "rules/kiddon.smk"
include: "rules/video.smk"
include: "rules/keyclips.smk"
include: "rules/supervised.smk"
include: "rules/evaluate.smk"
include: "rules/user.smk"
include: "rules/report.smk"


rule all:
    input:
        "results/table2.csv",
        "results/table4.csv",
        "results/table5.csv",
        "results/significance.csv",
        "results/srl/agreement-tagger.tsv",
        "results/srl/corpus/alignment.txt",
        # Everything the HTML report (snakemake --report results/report.html) shows.
        REPORT_TARGETS,
    default_target: True
