# Systems as data: upstream predictions and user-supplied systems imported into the common schemas.


rule import_upstream_neural:
    "Import upstream's neural key-clip predictions."
    input:
        tsv=upstream("youcook2/reviewed_0812.attach_key_sent_selection.tsv"),
        clips=CLIPS,
    output:
        "results/keyclips/upstream-neural.parquet",
    log:
        "logs/systems/import_upstream_neural.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("import_upstream_neural"),
    script:
        "../workflow/scripts/import_upstream_neural.py"


rule import_upstream_srl:
    "Import upstream's SRL-with-heuristics key clips and tuples."
    input:
        json=upstream("youcook2/srl_pred.json"),
        clips=CLIPS,
    output:
        keyclips="results/keyclips/upstream-srl-heur.parquet",
        tuples="results/tuples/upstream-srl-heur.parquet",
    log:
        "logs/systems/import_upstream_srl.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("import_upstream_srl"),
    script:
        "../workflow/scripts/import_upstream_srl.py"


rule import_user_keyclips:
    "Import a user-supplied key-clip system from data/systems."
    input:
        system=user_keyclips_files,
        clips=CLIPS,
    output:
        "results/keyclips/user-{user}.parquet",
    log:
        "logs/systems/import_user_keyclips/{user}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("import_user_system"),
        kind="keyclips",
        folder=USER_SYSTEMS_DIR,
    script:
        "../workflow/scripts/import_user_system.py"


rule import_user_tuples:
    "Import a user-supplied tuple system from data/systems."
    input:
        system=user_tuples_files,
        clips=CLIPS,
    output:
        "results/tuples/user-{user}.parquet",
    log:
        "logs/systems/import_user_tuples/{user}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("import_user_system"),
        kind="tuples",
        folder=USER_SYSTEMS_DIR,
    script:
        "../workflow/scripts/import_user_system.py"


# Its input is the tables: they are written, with the valid user systems, before this job stops the
# run, with or without --keep-going (docs/methods.md, "Your own system").
rule check_user_systems:
    "Fail with one message listing every bad file of the user-systems folder (built only while there are any)."
    input:
        tables=["results/table4.csv", "results/table4.md", "results/table5.csv", "results/table5.md"],
    output:
        "results/systems/user-systems.tsv",
    log:
        "logs/systems/check_user_systems.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("check_user_systems"),
        folder=USER_SYSTEMS_DIR,
        problems=USER_SYSTEMS.problems,
    script:
        "../workflow/scripts/check_user_systems.py"
