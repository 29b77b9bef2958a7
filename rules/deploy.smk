# Stage rules: deploy (see CONTRIBUTING.md). Models trained on every benchmark recipe for use on new
# transcripts (rule procedures_extract, the corpus rules, `cookproc extract`), each a folder under
# results/models/ with its weights, the config used, the code fingerprint and a model card.


rule deploy_keyclip_selector:
    "Train the neural text key-clip selector on every benchmark recipe; save it with a model card."
    input:
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        # The same configuration's cross-validated run with the same seed (neural-text's first seed;
        # Table 4's row is the mean over every seed): the card's scores.
        crossval="results/keyclips/neural-text.parquet",
    output:
        model=directory(DEPLOYED_SELECTOR),
    log:
        "logs/deploy/deploy_keyclip_selector.log",
    benchmark:
        "benchmarks/deploy/keyclip_selector.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        gpu=gpus_for(config["keyclips"]["device"]),
        mem_mb=8000,
        runtime=60,
    params:
        code=code_fingerprint("keyclips_deploy"),
        # The settings of the cross-validated runs, taken from their rules (rules/keyclips.smk).
        finetune=rules.keyclips_finetune.params.finetune,
        encoder_path=rules.keyclips_finetune.params.encoder_path,
        encoder_name=config["keyclips"]["text"]["name"],
        device=rules.keyclips_finetune.params.device,
        deterministic=rules.keyclips_finetune.params.deterministic,
        mixed_precision=rules.keyclips_finetune.params.mixed_precision,
        compile=rules.keyclips_finetune.params.compile,
        seed=config["keyclips"]["neural"]["seeds"][0],
        context_window=rules.keyclips_neural_text.params.context_window,
        layout_features=rules.keyclips_neural_text.params.layout_features,
        head_weight=rules.keyclips_neural_text.params.head_weight,
        selection=rules.keyclips_neural_text.params.selection,
        train=rules.keyclips_neural_text.params.train,
        bootstrap=config["tables"]["bootstrap"],
    script:
        "../workflow/scripts/keyclips_deploy.py"


rule deploy_tuple_extractor:
    "Save the text-only supervised tuple extractor of every benchmark recipe, with a model card."
    input:
        # The verb classifier's sentence vectors, when it reads them; the tagger, when it parses.
        **(
            {"vectors": rules.supervised_tuples_text.input.text}
            if "text" in rules.supervised_tuples_text.input.keys()
            else {}
        ),
        **({"tagger": "results/srl/model/tagger.pt"} if config["supervised"]["srl_backend"] == "tagger" else {}),
        # The inputs of the cross-validated run (rule supervised_tuples_text, rules/supervised.smk).
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        srl=rules.supervised_tuples_text.input.srl,
        lexicon=LEXICONS[SUPERVISED_TEXT["supervised-text"].lexicon],
        # The same configuration's cross-validated run (Table 5's supervised-text): the card's scores.
        crossval="results/tuples/supervised-text.parquet",
        # Its library reaches WordNet (verb lemmas, when the extractor runs): the job's resources say so.
        wordnet=config["resources"]["nltk_data"],
    output:
        model=directory(DEPLOYED_TUPLES),
    log:
        "logs/deploy/deploy_tuple_extractor.log",
    benchmark:
        "benchmarks/deploy/tuple_extractor.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        code=code_fingerprint("tuples_deploy"),
        settings=rules.supervised_tuples_text.params.model,
        srl_backend=config["supervised"]["srl_backend"],
        encoder={k: config["keyclips"]["text"][k] for k in ("name", "path", "pooling", "max_length", "batch_size")},
        bootstrap=config["tables"]["bootstrap"],
    script:
        "../workflow/scripts/tuples_deploy.py"
