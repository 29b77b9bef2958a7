# Scoring: Table 4 (key clips) and Table 5 (tuples), tidy and laid out like the paper.
from cookproc.evaluation.significance import check_resamples, declared_family
from cookproc.evaluation.tables import seeds_of

# The runs behind each learned system's rows, as the system registry (SYSTEMS, rules/common.smk) gives
# them. A system scored over its seeds (the neural selectors): every configured seed (Table 4 shows
# mean ± sd; intervals and significance use the mean of the per-seed metrics); the other learned
# systems are trained with one seed, or are deterministic fits.
SEED_RUN_FILES = {
    system: entry.seed_run_files(config) for system, entry in SYSTEMS["keyclips"].items() if entry.seed_runs
}
SEED_RUN_SYSTEMS = list(SEED_RUN_FILES)
KEYCLIP_SEEDS = {system: seeds_of(system, "keyclips", config) for system in keyclip_systems()}
TUPLE_SEEDS = {system: seeds_of(system, "tuples", config) for system in tuple_systems()}
# Table 5's predicted key clips are one file per source: a system scored over its seeds gives its first seed's.
PREDICTED_KEYCLIP_SEEDS = {system: seeds_of(system, "keyclips", config, file=True) for system in PREDICTED_KEYCLIPS}

# The rule that turned each scored system's scores into key decisions: the configured one, or, for
# nested selection, each fold's choice read from the run's info file(s).
THRESHOLD_RULES = {
    system: registry.setting(config, entry.threshold)
    for system, entry in SYSTEMS["keyclips"].items()
    if entry.threshold
}
RUN_INFOS = [(system, path) for system, entry in SYSTEMS["keyclips"].items() for path in entry.selection_infos(config)]

# The family of significance tests, declared in config (tables.significance); the number of
# resamples must let Holm's adjustment reach the level for it (checked before any job runs).
SIGNIFICANCE_FAMILY = declared_family(
    config["tables"]["significance"],
    keyclip_systems=keyclip_systems(),
    tuple_systems=tuple_systems(),
    predicted_keyclips=config["tables"]["predicted_keyclips"],
    masked=config["tables"]["masked"],
)
check_resamples(
    config["tables"]["bootstrap"]["resamples"],
    len(SIGNIFICANCE_FAMILY),
    1 - config["tables"]["bootstrap"]["confidence"],
)


rule table4:
    "Score every key-clip system (Table 4: Acc/P/R/F1, mean ± sd of seeds, threshold rule, AUC, AP pooled, per fold)."
    input:
        clips=CLIPS,
        systems=expand("results/keyclips/{system}.parquet", system=keyclip_systems()),
        seed_runs=[path for system in SEED_RUN_SYSTEMS for path in SEED_RUN_FILES[system]],
        infos=[path for _, path in RUN_INFOS],
    output:
        tidy="results/table4.csv",
        wide="results/table4_wide.csv",
        markdown="results/table4.md",
    log:
        "logs/evaluate/table4.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("table4"),
        systems=keyclip_systems(),
        seed_run_systems=[system for system in SEED_RUN_SYSTEMS for _ in SEED_RUN_FILES[system]],
        info_systems=[system for system, _ in RUN_INFOS],
        threshold_rules=THRESHOLD_RULES,
        seeds=KEYCLIP_SEEDS,
    script:
        "../workflow/scripts/table4.py"


rule table5:
    "Score every tuple system on oracle and predicted key clips (Table 5)."
    input:
        clips=CLIPS,
        tuples=expand("results/tuples/{system}.parquet", system=tuple_systems()),
        keyclips=expand("results/keyclips/{system}.parquet", system=config["tables"]["predicted_keyclips"]),
    output:
        tidy="results/table5.csv",
        wide="results/table5_wide.csv",
        markdown="results/table5.md",
        clip_scores="results/scores/table5_clips.parquet",
        predicted_counting="results/table5_predicted_counting.csv",
    log:
        "logs/evaluate/table5.log",
    benchmark:
        "benchmarks/evaluate/table5.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    params:
        code=code_fingerprint("table5"),
        systems=tuple_systems(),
        predicted_keyclips=config["tables"]["predicted_keyclips"],
        masked=config["tables"]["masked"],
        tuple_seeds=TUPLE_SEEDS,
        keyclip_seeds=PREDICTED_KEYCLIP_SEEDS,
    script:
        "../workflow/scripts/table5.py"


rule confidence_intervals:
    "Paired bootstrap intervals of every Table 4/5 cell and the significance of the declared comparisons."
    input:
        clips=CLIPS,
        clip_scores="results/scores/table5_clips.parquet",
        keyclips=expand("results/keyclips/{system}.parquet", system=keyclip_systems()),
        seed_runs=[path for system in SEED_RUN_SYSTEMS for path in SEED_RUN_FILES[system]],
    output:
        table4="results/table4_ci.csv",
        table5="results/table5_ci.csv",
        significance="results/significance.csv",
    log:
        "logs/evaluate/confidence_intervals.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("confidence_intervals"),
        systems=keyclip_systems(),
        seed_run_systems=[system for system in SEED_RUN_SYSTEMS for _ in SEED_RUN_FILES[system]],
        keyclip_seeds=KEYCLIP_SEEDS,
        predicted_keyclip_seeds=PREDICTED_KEYCLIP_SEEDS,
        tuple_seeds=TUPLE_SEEDS,
        family=SIGNIFICANCE_FAMILY,
        bootstrap=config["tables"]["bootstrap"],
    script:
        "../workflow/scripts/confidence_intervals.py"
