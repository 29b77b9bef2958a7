# Structured procedural knowledge extraction from cooking videos (Xu et al., 2020), as a workflow.
# Stages live in rules/*.smk; all logic in the cookproc library (workflow/cookproc).
from snakemake.utils import min_version

min_version("9.0")


# Before `configfile:` reads config.yaml: a broken one is named with its line (Snakemake's own
# message names neither the file nor the line).
include: "rules/config_file.smk"


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/resources.smk"
include: "rules/data.smk"
include: "rules/systems.smk"
include: "rules/srl.smk"
include: "rules/kiddon.smk"
include: "rules/video.smk"
include: "rules/keyclips.smk"
include: "rules/supervised.smk"
include: "rules/deploy.smk"
include: "rules/captions.smk"
include: "rules/people.smk"
include: "rules/evaluate.smk"
include: "rules/numbers.smk"
include: "rules/procedures.smk"
include: "rules/corpus.smk"
include: "rules/report.smk"


# The default target: what the configured systems need, and nothing more. With the default
# config.yaml that is every system (hours, trains models); with presets/paper.yaml only the
# upstream prediction files and the baselines that need no training (minutes).
rule all:
    default_target: True
    input:
        "results/table2.csv",
        "results/figures/figure3_verbs.png",
        "results/figures/figure3_arguments.png",
        "results/table4.csv",
        "results/table4.md",
        "results/table5.csv",
        "results/table5.md",
        # Bootstrap intervals of every Table 4/5 cell and pairwise significance.
        "results/significance.csv",
        # Every figure the README and docs state about results, in one file (rules/numbers.smk).
        "results/numbers.json",
        # Procedures against people (rules/people.smk), and the step model users get by default.
        ["results/people.csv", "results/people.md"] if PEOPLE["systems"] else [],
        PROCEDURE_MODELS["step_model"],
        ["results/srl/agreement-tagger.tsv", "results/srl/training_data/alignment.txt"] if TAGGER_IN_TABLES else [],
        # Everything the HTML report (snakemake --report results/report.html) shows, unless
        # report.build_pages is false (then `snakemake report_all` builds it).
        REPORT_TARGETS if config["report"]["build_pages"] else [],
        # A bad file in the user-systems folder: one job fails listing them all (rules/common.smk).
        USER_SYSTEMS_CHECK,
