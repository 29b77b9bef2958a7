# Systems as data: upstream predictions and user-supplied systems imported into the common schemas.


rule import_upstream_neural:
    input:
        tsv=upstream("youcook2/reviewed_0812.attach_key_sent_selection.tsv"),
        clips="results/dataset/clips.parquet",
        lib=script_lib("import_upstream_neural"),
    output:
        "results/keyclips/upstream-neural.parquet",
    log:
        "logs/systems/import_upstream_neural.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/import_upstream_neural.py"


rule import_upstream_srl:
    input:
        json=upstream("youcook2/srl_pred.json"),
        clips="results/dataset/clips.parquet",
        lib=script_lib("import_upstream_srl"),
    output:
        keyclips="results/keyclips/upstream-srl-heur.parquet",
        tuples="results/tuples/upstream-srl-heur.parquet",
    log:
        "logs/systems/import_upstream_srl.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/import_upstream_srl.py"


rule import_user_keyclips:
    input:
        system=user_keyclips_file,
        clips="results/dataset/clips.parquet",
        lib=script_lib("import_user_system"),
    output:
        "results/keyclips/user-{user}.parquet",
    params:
        kind="keyclips",
    log:
        "logs/systems/import_user_keyclips/{user}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/import_user_system.py"


rule import_user_tuples:
    input:
        system=user_tuples_file,
        clips="results/dataset/clips.parquet",
        lib=script_lib("import_user_system"),
    output:
        "results/tuples/user-{user}.parquet",
    params:
        kind="tuples",
    log:
        "logs/systems/import_user_tuples/{user}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/import_user_system.py"
