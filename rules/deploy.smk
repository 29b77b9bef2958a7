# Stage rules: deploy (see CONTRIBUTING.md). Models trained on every benchmark recipe for use on new
# transcripts (rule user_procedures, the corpus rules, `cookproc extract`), each a folder under
# results/models/ with its weights, the config used, the code fingerprint and a model card.


rule deploy_keyclip_selector:
    "Train the neural text key-clip selector on every benchmark recipe; save it with a model card."
    input:
        clips="results/dataset/clips.parquet",
        folds="results/keyclips/folds.parquet",
        # The same configuration's cross-validated run (Table 4's neural-text): the card's scores.
        crossval="results/keyclips/neural-text.parquet",
    output:
        model=directory(DEPLOYED_SELECTOR),
    params:
        code=code_fingerprint("keyclips_deploy"),
        finetune=KC_FINETUNE,
        encoder_path=KC["text"]["path"],
        encoder_name=KC["text"]["name"],
        device=KC["device"],
        seed=KC_NEURAL["seeds"][0],
        context_window=KC_NEURAL["context_window"],
        layout_features=KC_NEURAL["layout_features"],
        head_weight=KC_NEURAL["head_weight"],
        selection=KC_NEURAL["selection"],
        train=KC_NEURAL_PARAMS["train"],
        bootstrap=config["tables"]["bootstrap"],
    threads: 2
    resources:
        gpu=KC_GPUS,
        mem_mb=8000,
        runtime=60,
    log:
        "logs/deploy/deploy_keyclip_selector.log",
    benchmark:
        "benchmarks/deploy/keyclip_selector.tsv"
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/keyclips_deploy.py"
