# Stage rules: srl (see CONTRIBUTING.md). Our own SRL (the paper's AllenNLP model cannot be
# installed here): EWT span-SRL training data, a trained BIO tagger, parses of every benchmark
# sentence per backend, and the paper's SRL baselines (w/ and w/o heuristics) from each parse.
# The cooking lexicon rebuilt the paper's way lives here too.

SRL = config["srl"]
# A GPU is asked for only when the tagger is configured to use one.
SRL_GPUS = gpus_for(SRL["device"])
SRL_LEXICON = LEXICONS[SRL["lexicon"]]


wildcard_constraints:
    srl_backend="tagger|spacy|allennlp",


rule srl_training_data:
    "Span-SRL training data rebuilt from PropBank on the EWT treebank (official split)."
    input:
        ewt=files_in(SRL["propbank_ewt_dir"]),
    output:
        training_data="results/srl/training_data/ewt.parquet",
        report="results/srl/training_data/alignment.txt",
    log:
        "logs/srl/srl_training_data.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("srl_training_data"),
        root=folder_of("ewt", SRL["propbank_ewt_dir"]),
        min_pos_agreement=SRL["min_pos_agreement"],
    script:
        "../workflow/scripts/srl_training_data.py"


rule train_srl:
    "Train the BIO SRL tagger on the frozen word encoder; EWT dev/test scores."
    input:
        training_data="results/srl/training_data/ewt.parquet",
    output:
        model="results/srl/model/tagger.pt",
        scores="results/srl/model/ewt_scores.tsv",
        history="results/srl/model/training.json",
    log:
        "logs/srl/train_srl.log",
    benchmark:
        "benchmarks/srl/train_srl.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        gpu=SRL_GPUS,
        mem_mb=6000,
        runtime=90,
    params:
        code=code_fingerprint("srl_train"),
        # Section srl.tagger whole; predicate_tags and the device are the parsing rules' too.
        tagger=SRL["tagger"],
        predicate_tags=SRL["predicate_tags"],
        device=SRL["device"],
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/srl_train.py"


rule srl_parse_tagger:
    "Label every benchmark sentence with the trained SRL tagger."
    input:
        clips=CLIPS,
        model="results/srl/model/tagger.pt",
        wordnet=config["resources"]["nltk_data"],
    output:
        parses="results/srl/tagger.parquet",
    log:
        "logs/srl/srl_parse_tagger.log",
    benchmark:
        "benchmarks/srl/srl_parse_tagger.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        gpu=SRL_GPUS,
        mem_mb=4000,
        runtime=30,
    params:
        code=code_fingerprint("srl_parse"),
        backend="tagger",
        device=SRL["device"],
        deterministic=TORCH["deterministic"],
        predicate_tags=SRL["predicate_tags"],
    script:
        "../workflow/scripts/srl_parse.py"


rule srl_parse_spacy:
    "Label every benchmark sentence with the spaCy dependency-based SRL."
    input:
        clips=CLIPS,
        wordnet=config["resources"]["nltk_data"],
    output:
        parses="results/srl/spacy.parquet",
    log:
        "logs/srl/srl_parse_spacy.log",
    benchmark:
        "benchmarks/srl/srl_parse_spacy.tsv"
    conda:
        "../envs/torch.yaml"
    params:
        code=code_fingerprint("srl_parse"),
        backend="spacy",
        device="cpu",
        deterministic=TORCH["deterministic"],
        predicate_tags=SRL["predicate_tags"],
    script:
        "../workflow/scripts/srl_parse.py"


rule srl_import_allennlp:
    "Import AllenNLP SRL predictor output produced elsewhere."
    input:
        clips=CLIPS,
        json=SRL["allennlp_json"],
        wordnet=config["resources"]["nltk_data"],
    output:
        parses="results/srl/allennlp.parquet",
    log:
        "logs/srl/srl_import_allennlp.log",
    conda:
        "../envs/torch.yaml"
    params:
        code=code_fingerprint("srl_parse"),
        backend="allennlp",
        device="cpu",
        deterministic=TORCH["deterministic"],
        predicate_tags=SRL["predicate_tags"],
    script:
        "../workflow/scripts/srl_parse.py"


rule srl_systems_noheur:
    "SRL without the paper's heuristics: key clips and tuples per backend."
    input:
        parses="results/srl/{srl_backend}.parquet",
        clips=CLIPS,
        wordnet=config["resources"]["nltk_data"],
    output:
        keyclips="results/keyclips/srl-noheur-{srl_backend}.parquet",
        tuples="results/tuples/srl-noheur-{srl_backend}.parquet",
    log:
        "logs/srl/srl_systems_noheur-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("srl_systems"),
        system="srl-noheur-{srl_backend}",
        heuristics=False,
        verb_form=SRL["noheur_verb_form"],
    script:
        "../workflow/scripts/srl_systems.py"


rule srl_systems_heur:
    "SRL with the paper's heuristics: key clips and tuples per backend."
    input:
        parses="results/srl/{srl_backend}.parquet",
        clips=CLIPS,
        lexicon=SRL_LEXICON,
        wordnet=config["resources"]["nltk_data"],
    output:
        keyclips="results/keyclips/srl-heur-{srl_backend}.parquet",
        tuples="results/tuples/srl-heur-{srl_backend}.parquet",
    log:
        "logs/srl/srl_systems_heur-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("srl_systems"),
        system="srl-heur-{srl_backend}",
        heuristics=True,
        verb_form="lemma",
    script:
        "../workflow/scripts/srl_systems.py"


rule srl_systems_heurlex:
    "SRL with heuristics and the rebuilt cooking lexicon."

    # SRL w/ heuristics with the rebuilt lexicon: the lexicon's effect on Tables 4 and 5.
    input:
        parses="results/srl/{srl_backend}.parquet",
        clips=CLIPS,
        lexicon=LEXICONS["rebuilt"],
        wordnet=config["resources"]["nltk_data"],
    output:
        keyclips="results/keyclips/srl-heurlex-{srl_backend}.parquet",
        tuples="results/tuples/srl-heurlex-{srl_backend}.parquet",
    log:
        "logs/srl/srl_systems_heurlex-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("srl_systems"),
        system="srl-heurlex-{srl_backend}",
        heuristics=True,
        verb_form="lemma",
    script:
        "../workflow/scripts/srl_systems.py"


rule srl_agreement:
    "Per-clip agreement of our SRL-with-heuristics verbs with upstream's SRL output."

    # Per-clip agreement of our SRL w/ heuristics verbs with upstream's srl_pred.json.
    input:
        ours="results/tuples/srl-heur-{srl_backend}.parquet",
        upstream="results/tuples/upstream-srl-heur.parquet",
    output:
        "results/srl/agreement-{srl_backend}.tsv",
    log:
        "logs/srl/srl_agreement-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("srl_agreement"),
    script:
        "../workflow/scripts/srl_agreement.py"


rule lexicon_rebuild:
    "Rebuild the cooking lexicon from the captions of the non-benchmark videos."
    input:
        captions=files_in(upstream("youcook2/split")),
        clips=CLIPS,
        upstream_lexicon=upstream(SRL["upstream_lexicon"]),
        wordnet=config["resources"]["nltk_data"],
    output:
        lexicon="results/lexicon/rebuilt.lst",
        counts="results/lexicon/first_word_counts.tsv",
        overlap="results/lexicon/overlap.tsv",
    log:
        "logs/srl/lexicon_rebuild.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("lexicon_rebuild"),
        captions_dir=folder_of("captions", upstream("youcook2/split")),
        lexicon_min_count=SRL["lexicon_min_count"],
    script:
        "../workflow/scripts/lexicon_rebuild.py"
