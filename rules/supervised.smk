# Stage rules: supervised (see CONTRIBUTING.md). Beyond the paper: a supervised key-clip classifier
# and a supervised tuple extractor, both out-of-fold under the shared leave-recipes-out folds.

SUP = config["supervised"]
SUP_SRL = f"results/srl/{SUP['srl_backend']}.parquet"
SUP_LEXICON = LEXICONS["upstream"]
# Sentence vectors of the key-clip classifier: the per-fold fine-tuned ones of the first neural
# seed (rule keyclips_finetune) or the frozen ones.
if SUP["keyclips"]["finetuned_vectors"] and rules.keyclips_finetune.params.finetune["layers"] < 1:
    stop(
        "config key supervised.keyclips.finetuned_vectors needs keyclips.neural.finetune.layers >= 1 "
        "(or set finetuned_vectors: false for the frozen sentence vectors)",
        logger.error,
    )
SUP_SENTENCES = (
    dict(finetuned=f"{FINETUNED_TEXT}.parquet".format(seed=config["keyclips"]["neural"]["seeds"][0]))
    if SUP["keyclips"]["finetuned_vectors"]
    else dict(text=TEXT_FEATURES)
)
# A larger encoder fine-tuned per fold (rule supervised_finetune) whose head joins the classifier's
# score; layers 0: the logistic regression alone.
SUP_ENCODER = SUP["keyclips"]["encoder"]
SUP_ENCODER_FINETUNED = f"results/supervised/finetuned/{SUP_ENCODER['name']}.seed{{seed}}"
SUP_HEADS = (
    dict(encoder_finetuned=f"{SUP_ENCODER_FINETUNED}.parquet".format(seed=SUP_ENCODER["seed"]))
    if SUP_ENCODER["finetune"]["layers"] > 0 and SUP["keyclips"]["head_weight"] > 0
    else {}
)
# The tuple extractor's verb classifier reads the frozen sentence vectors (when it uses any).
SUP_VERB_CLF = SUP["tuples"]["verb_classifier"]
SUP_TUPLE_SENTENCES = dict(text=TEXT_FEATURES) if SUP_VERB_CLF["enabled"] and SUP_VERB_CLF["sentence_vectors"] else {}


# The keyclips_finetune script on the supervised classifier's own encoder (a GPU when keyclips.device
# asks for one; resources sized from docs/benchmarks.md's measurements).
use rule keyclips_finetune as supervised_finetune with:
    output:
        vectors=f"{SUP_ENCODER_FINETUNED}.parquet",
        info=f"{SUP_ENCODER_FINETUNED}.json",
    log:
        f"logs/supervised/supervised_finetune/{SUP_ENCODER['name']}.seed{{seed}}.log",
    benchmark:
        f"benchmarks/supervised/finetune-{SUP_ENCODER['name']}.seed{{seed}}.tsv"
    resources:
        gpu=gpus_for(config["keyclips"]["device"]),
        mem_mb=14000,
        runtime=150,
    params:
        finetune=SUP_ENCODER["finetune"],
        encoder_path=SUP_ENCODER["path"],
        device=rules.keyclips_finetune.params.device,


rule supervised_keyclips:
    "Supervised key-clip classifier (logistic regression blended with the finetuned encoder's head), out-of-fold."
    input:
        **SUP_SENTENCES,
        **SUP_HEADS,
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        srl=SUP_SRL,
        lexicon=SUP_LEXICON,
        tsm=config["keyclips"]["tsm_aligned"],
        wordnet=config["resources"]["nltk_data"],
    output:
        keyclips="results/keyclips/supervised.parquet",
        info="results/supervised/keyclips.json",
    log:
        "logs/supervised/supervised_keyclips.log",
    benchmark:
        "benchmarks/supervised/keyclips.tsv"
    conda:
        "../envs/cpu.yaml"
    # liblinear is single-threaded; CPU only (no gpu resource: nothing runs on an accelerator).
    threads: 1
    resources:
        mem_mb=6000,
        runtime=30,
    params:
        **SUP["keyclips"],
        code=code_fingerprint("supervised_keyclips"),
        system="supervised",
    script:
        "../workflow/scripts/supervised_keyclips.py"


rule supervised_tuples:
    "Supervised verb and argument extraction from SRL candidates, out-of-fold."
    input:
        **SUP_TUPLE_SENTENCES,
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        srl=SUP_SRL,
        lexicon=SUP_LEXICON,
        tsm=config["keyclips"]["tsm_aligned"],
        wordnet=config["resources"]["nltk_data"],
    output:
        tuples="results/tuples/supervised.parquet",
        info="results/supervised/tuples.json",
    log:
        "logs/supervised/supervised_tuples.log",
    benchmark:
        "benchmarks/supervised/tuples.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        code=code_fingerprint("supervised_tuples"),
        system="supervised",
        model=SUP["tuples"],
    script:
        "../workflow/scripts/supervised_tuples.py"


# The same extractor from text alone (no TSM candidates): the one a transcript without its video
# can use. Table 5's rows `supervised-text` (upstream's lexicon) and `supervised-text-rebuiltlex`
# (the lexicon rebuilt from the captions: the ablation of upstream's list, whose origin cannot be
# checked); SUPERVISED_TEXT in rules/common.smk.
use rule supervised_tuples as supervised_tuples_text with:
    input:
        **SUP_TUPLE_SENTENCES,
        clips=CLIPS,
        folds="results/keyclips/folds.parquet",
        srl=SUP_SRL,
        lexicon=supervised_text_lexicon,
        wordnet=config["resources"]["nltk_data"],
    output:
        tuples="results/tuples/supervised-text{suffix}.parquet",
        info="results/supervised/tuples-text{suffix}.json",
    log:
        "logs/supervised/supervised_tuples_text{suffix}.log",
    benchmark:
        "benchmarks/supervised/tuples-text{suffix}.tsv"
    wildcard_constraints:
        suffix=SUPERVISED_TEXT_SUFFIX,
    params:
        code=code_fingerprint("supervised_tuples"),
        system="supervised-text{suffix}",
        model=SUP["tuples"],


# Tables 4/5 of the supervised systems beside the paper's (oracle, the paper's predicted key clips
# and our own), and the split of the gains over SRL w/ heuristics by presence in the sentence.
rule supervised_evaluate:
    "Error analysis of the supervised systems against the baselines."
    input:
        clips=CLIPS,
        keyclips=[
            "results/keyclips/supervised.parquet",
            "results/keyclips/upstream-neural.parquet",
            "results/keyclips/upstream-srl-heur.parquet",
        ],
        tuples=["results/tuples/supervised.parquet", "results/tuples/upstream-srl-heur.parquet"],
        wordnet=config["resources"]["nltk_data"],
    output:
        table4="results/supervised/table4.csv",
        table5="results/supervised/table5.csv",
        gains="results/supervised/gains_by_presence.csv",
    log:
        "logs/supervised/supervised_evaluate.log",
    conda:
        "../envs/cpu.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        code=code_fingerprint("supervised_evaluate"),
        keyclip_names=["supervised", "upstream-neural", "upstream-srl-heur"],
        tuple_names=["supervised", "upstream-srl-heur"],
        predicted_keyclips=["supervised", "upstream-neural"],
        baseline="upstream-srl-heur",
    script:
        "../workflow/scripts/supervised_evaluate.py"
