# Scoring: Table 4 (key clips) and Table 5 (tuples), tidy and laid out like the paper.


rule table4:
    "Score every key-clip system (Table 4: accuracy, precision, recall, F1)."
    input:
        clips="results/dataset/clips.parquet",
        systems=expand("results/keyclips/{system}.parquet", system=keyclip_systems()),
    output:
        tidy="results/table4.csv",
        wide="results/table4_wide.csv",
        markdown="results/table4.md",
    params:
        code=code_fingerprint("table4"),
        systems=keyclip_systems(),
    log:
        "logs/evaluate/table4.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/table4.py"


rule table5:
    "Score every tuple system on oracle and predicted key clips (Table 5)."
    input:
        clips="results/dataset/clips.parquet",
        tuples=expand("results/tuples/{system}.parquet", system=tuple_systems()),
        keyclips=expand("results/keyclips/{system}.parquet", system=config["tables"]["predicted_keyclips"]),
    output:
        tidy="results/table5.csv",
        wide="results/table5_wide.csv",
        markdown="results/table5.md",
        clip_scores="results/scores/table5_clips.parquet",
    params:
        code=code_fingerprint("table5"),
        systems=tuple_systems(),
        predicted_keyclips=config["tables"]["predicted_keyclips"],
        masked=config["tables"]["masked"],
    threads: 2
    log:
        "logs/evaluate/table5.log",
    benchmark:
        "benchmarks/evaluate/table5.tsv"
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/table5.py"


rule confidence_intervals:
    "Paired bootstrap intervals of every Table 4/5 cell and the significance of system differences."
    input:
        clips="results/dataset/clips.parquet",
        clip_scores="results/scores/table5_clips.parquet",
        keyclips=expand("results/keyclips/{system}.parquet", system=keyclip_systems()),
    output:
        table4="results/table4_ci.csv",
        table5="results/table5_ci.csv",
        significance="results/significance.csv",
    params:
        code=code_fingerprint("confidence_intervals"),
        systems=keyclip_systems(),
        bootstrap=config["tables"]["bootstrap"],
    log:
        "logs/evaluate/confidence_intervals.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/confidence_intervals.py"
