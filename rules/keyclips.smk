# Stage rules: keyclips (see CONTRIBUTING.md). Learned key-clip selectors under leave-recipes-out
# cross-validation: the paper's neural model (text / visual / full) and a TF-IDF baseline, plus the
# sentence embeddings they read.

KC = config["keyclips"]
KC_NEURAL = KC["neural"]
# Rules that can use an accelerator ask for one only when the configured device is not the CPU.
KC_GPUS = gpus_for(KC["device"])
KC_VISUAL = {"tsm": KC["tsm_aligned"], "frames": KC["frame_features"]}[KC["visual_source"]]
KC_NEURAL_PARAMS = dict(
    visual_source=KC["visual_source"],
    max_set=KC["max_set"],
    context_window=KC_NEURAL["context_window"],
    layout_features=KC_NEURAL["layout_features"],
    train={
        k: KC_NEURAL[k]
        for k in (
            "dim",
            "hidden",
            "dropout",
            "learning_rate",
            "weight_decay",
            "batch_size",
            "max_epochs",
            "patience",
            "threshold_metric",
            "lexical",
            "lexical_min_count",
        )
    },
)
# Variants that read sentences read either the frozen sentence vectors or, with fine-tuning (layers
# > 0), the per-fold finetuned vectors of rule keyclips_finetune, one file per seed: changing the net's
# settings never fine-tunes again, and text and full share one fine-tuning per seed.
KC_SENTENCE_INPUT = (
    dict(finetuned=f"{FINETUNED_TEXT}.parquet") if KC_NEURAL["finetune"]["layers"] > 0 else dict(text=TEXT_FEATURES)
)
# Nested selection (keyclips.neural.selection); the visual variant reads no sentences and takes only
# the threshold rule's candidates, so candidates of sentence settings never rerun it.
KC_VISUAL_SELECTION = dict(
    objective=KC_NEURAL["selection"]["objective"],
    candidates={k: v for k, v in KC_NEURAL["selection"]["candidates"].items() if k == "threshold_metric"},
)
KC_SENTENCE_PARAMS = dict(
    head_weight=KC_NEURAL["head_weight"] if KC_NEURAL["finetune"]["layers"] > 0 else 0.0,
    selection=KC_NEURAL["selection"],
)


wildcard_constraints:
    seed=r"\d+",


rule text_features:
    "Sentence embeddings of every benchmark clip with the frozen sentence encoder."
    input:
        clips=CLIPS,
    output:
        features=TEXT_FEATURES,
    log:
        "logs/keyclips/text_features.log",
    benchmark:
        "benchmarks/keyclips/text_features.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        gpu=KC_GPUS,
        mem_mb=4000,
        runtime=30,
    params:
        code=code_fingerprint("text_features"),
        path=KC["text"]["path"],
        pooling=KC["text"]["pooling"],
        max_length=KC["text"]["max_length"],
        batch_size=KC["text"]["batch_size"],
        device=KC["device"],
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/text_features.py"


# Family-aware folds read the curated dish families; recipe folds neither read nor depend on them.
KC_FAMILY_FOLDS = KC["folds"]["grouping"] == "family"


rule keyclips_folds:
    "Leave-recipes-out folds and inner-validation recipes shared by every learned selector."
    input:
        **({"families": repo_path(KC["folds"]["families"])} if KC_FAMILY_FOLDS else {}),
        clips=CLIPS,
    output:
        folds="results/keyclips/folds.parquet",
    log:
        "logs/keyclips/keyclips_folds.log",
    conda:
        "../envs/cpu.yaml"
    params:
        **({"grouping": "family"} if KC_FAMILY_FOLDS else {}),
        code=code_fingerprint("keyclips_folds"),
        k=KC["folds"]["k"],
        seed=KC["folds"]["seed"],
        inner_val_fraction=KC["folds"]["inner_val_fraction"],
    script:
        "../workflow/scripts/keyclips_folds.py"


# The heavy part on CPUs: two threads, a GPU when configured.
rule keyclips_finetune:
    "Fine-tune the sentence encoder per fold on its training recipes; finetuned vectors and head scores."
    input:
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
    output:
        vectors=f"{FINETUNED_TEXT}.parquet",
        info=f"{FINETUNED_TEXT}.json",
    log:
        f"logs/keyclips/keyclips_finetune/{KC['text']['name']}.seed{{seed}}.log",
    benchmark:
        f"benchmarks/keyclips/finetune-{KC['text']['name']}.seed{{seed}}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        gpu=KC_GPUS,
        mem_mb=8000,
        runtime=60,
    params:
        code=code_fingerprint("keyclips_finetune"),
        finetune=KC_NEURAL["finetune"],
        encoder_path=KC["text"]["path"],
        device=KC["device"],
        deterministic=TORCH["deterministic"],
        mixed_precision=TORCH["mixed_precision"],
        compile=TORCH["compile"],
    script:
        "../workflow/scripts/keyclips_finetune.py"


rule keyclips_neural_visual:
    "The paper's neural key-clip selector on visual features only, out-of-fold."
    input:
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        visual=KC_VISUAL,
    output:
        keyclips="results/keyclips/seeds/neural-visual.seed{seed}.parquet",
        info="results/keyclips/seeds/neural-visual.seed{seed}.json",
    log:
        "logs/keyclips/keyclips_neural/visual.seed{seed}.log",
    benchmark:
        "benchmarks/keyclips/neural-visual.seed{seed}.tsv"
    conda:
        "../envs/torch.yaml"
    # One thread: the net is small, and results are bit-identical only for a fixed thread count. The
    # net trains on the CPU whatever keyclips.device says.
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        **KC_NEURAL_PARAMS,
        code=code_fingerprint("keyclips_neural"),
        variant="visual",
        selection=KC_VISUAL_SELECTION,
    script:
        "../workflow/scripts/keyclips_neural.py"


# The variants that read sentences add their sentence input and its params (`use rule ... with`
# merges params into the visual rule's, so these never rerun the visual variant).
use rule keyclips_neural_visual as keyclips_neural_full with:
    input:
        **KC_SENTENCE_INPUT,
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        visual=KC_VISUAL,
    output:
        keyclips="results/keyclips/seeds/neural-full.seed{seed}.parquet",
        info="results/keyclips/seeds/neural-full.seed{seed}.json",
    log:
        "logs/keyclips/keyclips_neural/full.seed{seed}.log",
    benchmark:
        "benchmarks/keyclips/neural-full.seed{seed}.tsv"
    params:
        **KC_NEURAL_PARAMS,
        **KC_SENTENCE_PARAMS,
        variant="full",


use rule keyclips_neural_full as keyclips_neural_text with:
    input:
        **KC_SENTENCE_INPUT,
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
    output:
        keyclips="results/keyclips/seeds/neural-text.seed{seed}.parquet",
        info="results/keyclips/seeds/neural-text.seed{seed}.json",
    log:
        "logs/keyclips/keyclips_neural/text.seed{seed}.log",
    benchmark:
        "benchmarks/keyclips/neural-text.seed{seed}.tsv"
    params:
        **KC_NEURAL_PARAMS,
        **KC_SENTENCE_PARAMS,
        variant="text",


# The system's one file is the run with the first configured seed (Table 5's predicted key clips, the
# report, the deployed selector's card); Table 4's row is the mean over every seed's run.
rule keyclips_neural:
    "The neural selector's first seed's run as the system's file."
    input:
        keyclips=f"results/keyclips/seeds/neural-{{variant}}.seed{KC_NEURAL['seeds'][0]}.parquet",
    output:
        keyclips="results/keyclips/neural-{variant}.parquet",
    log:
        "logs/keyclips/keyclips_neural/neural-{variant}.log",
    wildcard_constraints:
        variant="text|visual|full",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("keyclips_first_seed"),
    script:
        "../workflow/scripts/keyclips_first_seed.py"


rule keyclips_tfidf:
    "TF-IDF + logistic-regression key-clip baseline, out-of-fold."
    input:
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
    output:
        keyclips="results/keyclips/tfidf-lr.parquet",
    log:
        "logs/keyclips/keyclips_tfidf.log",
    benchmark:
        "benchmarks/keyclips/tfidf-lr.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("keyclips_tfidf"),
        window=KC["tfidf"]["window"],
        ngram_max=KC["tfidf"]["ngram_max"],
        min_df=KC["tfidf"]["min_df"],
        C=KC["tfidf"]["C"],
        threshold_metric=KC_NEURAL["threshold_metric"],
    script:
        "../workflow/scripts/keyclips_tfidf.py"


# Every seed of every variant and the TF-IDF baseline, scored, with mean and spread over seeds.
rule keyclips_seed_summary:
    "Mean and spread of the neural selectors' scores over seeds."
    input:
        clips=CLIPS,
        runs=expand(
            "results/keyclips/seeds/neural-{variant}.seed{seed}.parquet",
            variant=["text", "visual", "full"],
            seed=KC_NEURAL["seeds"],
        )
        + ["results/keyclips/tfidf-lr.parquet"],
    output:
        csv="results/keyclips/seed_summary.csv",
    log:
        "logs/keyclips/keyclips_seed_summary.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("keyclips_summary"),
    script:
        "../workflow/scripts/keyclips_summary.py"
