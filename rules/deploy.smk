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
        deterministic=TORCH["deterministic"],
        mixed_precision=TORCH["mixed_precision"],
        compile=TORCH["compile"],
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


rule deploy_tuple_extractor:
    "Save the text-only supervised tuple extractor of every benchmark recipe, with a model card."
    input:
        clips="results/dataset/clips.parquet",
        folds="results/keyclips/folds.parquet",
        srl=SUP_SRL,
        lexicon=SUP_LEXICON,
        # The verb classifier's sentence vectors, when it reads them; the tagger, when it parses.
        **({"vectors": TEXT_FEATURES} if SUP_TUPLE_SENTENCES else {}),
        **({"tagger": "results/srl/model/tagger.pt"} if SUP["srl_backend"] == "tagger" else {}),
        # The same configuration's cross-validated run (Table 5's supervised-text): the card's scores.
        crossval="results/tuples/supervised-text.parquet",
        # Its library reaches WordNet (verb lemmas, when the extractor runs): the job's resources say so.
        wordnet=config["resources"]["nltk_data"],
    output:
        model=directory(DEPLOYED_TUPLES),
    params:
        code=code_fingerprint("tuples_deploy"),
        settings=SUP["tuples"],
        srl_backend=SUP["srl_backend"],
        encoder={k: KC["text"][k] for k in ("name", "path", "pooling", "max_length", "batch_size")},
        bootstrap=config["tables"]["bootstrap"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    log:
        "logs/deploy/deploy_tuple_extractor.log",
    benchmark:
        "benchmarks/deploy/tuple_extractor.tsv"
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/tuples_deploy.py"
