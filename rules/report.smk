# The HTML report: `snakemake --report results/report.html` collects every output flagged with
# report() below (Tables 2, 4, 5, Figure 3, per-recipe scores, error analysis pages). The report
# only holds outputs that exist, so REPORT_TARGETS must be built first (rule `all` requests them).
REPORT = config["report"]


report: "../report/workflow.rst"


REPORT_TARGETS = [
    "results/report/table2.html",
    "results/report/table4.html",
    "results/report/table5.html",
    "results/report/figure3_verbs.png",
    "results/report/figure3_arguments.png",
    "results/report/per_recipe.csv",
    "results/report/per_recipe_keyclips.png",
    "results/report/per_recipe_tuples.png",
    *expand("results/report/errors/keyclips/{system}.html", system=keyclip_systems()),
    *expand("results/report/errors/tuples/{system}.html", system=tuple_systems()),
    # The procedures of the user's files present in procedures.dir, and the corpus's summary once the
    # corpus was built (its target is never built just for the report: hours on the full corpus).
    *expand("results/report/procedures/{name}.html", name=procedure_names()),
    *(
        [f"results/report/corpus/{config['corpus']['name']}.html"]
        if os.path.exists(rules.corpus_dataset.output.dataset)
        else []
    ),
    # Bad files of the user-systems folder are not skipped silently: a job fails listing them.
    *USER_SYSTEMS_CHECK,
]


rule report_tables:
    "Tables 4 and 5 as report pages."
    input:
        table2="results/table2.csv",
        table4="results/table4_wide.csv",
        table5="results/table5_wide.csv",
    output:
        table2=report(
            "results/report/table2.html",
            caption=report_caption("table2"),
            category="Tables",
            labels={"table": "Table 2", "content": "dataset statistics"},
        ),
        table4=report(
            "results/report/table4.html",
            caption=report_caption("table4"),
            category="Tables",
            labels={"table": "Table 4", "content": "key clip selection"},
        ),
        table5=report(
            "results/report/table5.html",
            caption=report_caption("table5"),
            category="Tables",
            labels={"table": "Table 5", "content": "procedure tuples"},
        ),
    log:
        "logs/report/report_tables.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("report_tables"),
    script:
        "../workflow/scripts/report_tables.py"


# The figures are copied so that the report flag lives here, next to the report's other entries.
rule report_figure3:
    "Figure 3 for the HTML report."
    input:
        verbs="results/figures/figure3_verbs.png",
        arguments="results/figures/figure3_arguments.png",
    output:
        verbs=report(
            "results/report/figure3_verbs.png",
            caption=report_caption("figure3"),
            category="Figures",
            labels={"figure": "Figure 3", "field": "verbs"},
        ),
        arguments=report(
            "results/report/figure3_arguments.png",
            caption=report_caption("figure3"),
            category="Figures",
            labels={"figure": "Figure 3", "field": "arguments"},
        ),
    log:
        "logs/report/report_figure3.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("report_copy"),
    script:
        "../workflow/scripts/report_copy.py"


rule report_per_recipe:
    "Per-recipe scores of every system for the report."
    input:
        clips=CLIPS,
        keyclips=expand("results/keyclips/{system}.parquet", system=keyclip_systems()),
        tuples=expand("results/tuples/{system}.parquet", system=tuple_systems()),
    output:
        table=report(
            "results/report/per_recipe.csv",
            caption=report_caption("per_recipe_table"),
            category="Per-recipe scores",
            labels={"what": "all scores (CSV)"},
        ),
        keyclips=report(
            "results/report/per_recipe_keyclips.png",
            caption=report_caption("per_recipe_keyclips"),
            category="Per-recipe scores",
            labels={"what": "key clips F1"},
        ),
        tuples=report(
            "results/report/per_recipe_tuples.png",
            caption=report_caption("per_recipe_tuples"),
            category="Per-recipe scores",
            labels={"what": "tuples F1 (oracle key clips)"},
        ),
    log:
        "logs/report/report_per_recipe.log",
    benchmark:
        "benchmarks/report/report_per_recipe.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    params:
        code=code_fingerprint("report_per_recipe"),
        keyclip_systems=keyclip_systems(),
        tuple_systems=tuple_systems(),
        per_recipe_mode=REPORT["per_recipe_mode"],
    script:
        "../workflow/scripts/report_per_recipe.py"


rule report_errors_keyclips:
    "Example key-clip errors of each system for the report."
    input:
        clips=CLIPS,
        system="results/keyclips/{system}.parquet",
    output:
        report(
            "results/report/errors/keyclips/{system}.html",
            caption=report_caption("errors_keyclips"),
            category="Error analysis",
            subcategory="Key clips",
            labels={"system": "{system}"},
        ),
    log:
        "logs/report/report_errors_keyclips/{system}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("report_errors"),
        kind="keyclips",
        top_errors=REPORT["top_errors"],
        examples=REPORT["examples"],
    script:
        "../workflow/scripts/report_errors.py"


rule report_errors_tuples:
    "Example tuple errors of each system for the report."
    input:
        clips=CLIPS,
        system="results/tuples/{system}.parquet",
    output:
        report(
            "results/report/errors/tuples/{system}.html",
            caption=report_caption("errors_tuples"),
            category="Error analysis",
            subcategory="Tuples",
            labels={"system": "{system}"},
        ),
    log:
        "logs/report/report_errors_tuples/{system}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("report_errors"),
        kind="tuples",
        top_errors=REPORT["top_errors"],
        examples=REPORT["examples"],
    script:
        "../workflow/scripts/report_errors.py"


rule report_procedure:
    "A user file's procedure (key steps with times and tuples) as a report page."
    input:
        json="results/procedures/{name}.json",
    output:
        report(
            "results/report/procedures/{name}.html",
            caption=report_caption("procedure"),
            category="Your procedures",
            labels={"file": "{name}"},
        ),
    log:
        "logs/report/report_procedure/{name}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("report_procedure"),
    script:
        "../workflow/scripts/report_procedure.py"


rule report_corpus:
    "Summary of a corpus's procedures (steps per video, frequent verbs and arguments) as a report page."
    input:
        dataset=rules.corpus_dataset.output.dataset,
    output:
        report(
            f"results/report/corpus/{config['corpus']['name']}.html",
            caption=report_caption("corpus"),
            category="Corpus",
            labels={"corpus": config["corpus"]["name"]},
        ),
    log:
        f"logs/report/report_corpus/{config['corpus']['name']}.log",
    benchmark:
        f"benchmarks/report/report_corpus/{config['corpus']['name']}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("report_corpus"),
        corpus=config["corpus"]["name"],
        top=REPORT["corpus_top"],
    script:
        "../workflow/scripts/report_corpus.py"


rule report_all:
    "Everything the HTML report shows (snakemake --report)."
    input:
        REPORT_TARGETS,
