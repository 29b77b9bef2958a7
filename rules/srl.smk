# Stage rules: srl (see CONTRIBUTING.md). Our own SRL (the paper's AllenNLP model cannot be
# installed here): an EWT span-SRL corpus, a trained BIO tagger, parses of every benchmark
# sentence per backend, and the paper's SRL baselines (w/ and w/o heuristics) from each parse.
# The cooking lexicon rebuilt the paper's way lives here too.

SRL = config["srl"]
# A GPU is asked for only when the tagger is configured to use one.
SRL_GPUS = 0 if SRL["device"] == "cpu" else 1
SRL_LEXICON = upstream(SRL["upstream_lexicon"]) if SRL["lexicon"] == "upstream" else "results/lexicon/rebuilt.lst"


wildcard_constraints:
    srl_backend="tagger|spacy|allennlp",


rule srl_corpus:
    input:
        root=SRL["propbank_ewt_dir"],
        lib=script_lib("srl_corpus"),
    output:
        corpus="results/srl/corpus/ewt.parquet",
        report="results/srl/corpus/alignment.txt",
    params:
        min_pos_agreement=SRL["min_pos_agreement"],
    log:
        "logs/srl/srl_corpus.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/srl_corpus.py"


rule train_srl:
    input:
        corpus="results/srl/corpus/ewt.parquet",
        lib=script_lib("srl_train"),
    output:
        model="results/srl/model/tagger.pt",
        scores="results/srl/model/ewt_scores.tsv",
        history="results/srl/model/training.json",
    params:
        encoder=SRL["encoder"],
        epochs=SRL["epochs"],
        average=SRL["average_checkpoints"],
        ensemble=SRL["ensemble"],
        batch_size=SRL["batch_size"],
        lr=SRL["learning_rate"],
        hidden=SRL["hidden"],
        proj=SRL["projection"],
        dropout=SRL["dropout"],
        max_train_words=SRL["max_train_words"],
        seed=SRL["seed"],
        device=SRL["device"],
        predicate_tags=SRL["predicate_tags"],
    threads: 2
    resources:
        gpu=SRL_GPUS,
        mem_mb=6000,
        runtime=90,
    log:
        "logs/srl/train_srl.log",
    benchmark:
        "benchmarks/srl/train_srl.tsv"
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/srl_train.py"


rule srl_parse_tagger:
    input:
        clips="results/dataset/clips.parquet",
        model="results/srl/model/tagger.pt",
        lib=script_lib("srl_parse"),
    output:
        frames="results/srl/tagger.parquet",
    params:
        backend="tagger",
        device=SRL["device"],
        predicate_tags=SRL["predicate_tags"],
    threads: 2
    resources:
        gpu=SRL_GPUS,
        mem_mb=4000,
        runtime=30,
    log:
        "logs/srl/srl_parse_tagger.log",
    benchmark:
        "benchmarks/srl/srl_parse_tagger.tsv"
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/srl_parse.py"


rule srl_parse_spacy:
    input:
        clips="results/dataset/clips.parquet",
        lib=script_lib("srl_parse"),
    output:
        frames="results/srl/spacy.parquet",
    params:
        backend="spacy",
        device="cpu",
        predicate_tags=SRL["predicate_tags"],
    log:
        "logs/srl/srl_parse_spacy.log",
    benchmark:
        "benchmarks/srl/srl_parse_spacy.tsv"
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/srl_parse.py"


rule srl_import_allennlp:
    input:
        clips="results/dataset/clips.parquet",
        json=SRL["allennlp_json"],
        lib=script_lib("srl_parse"),
    output:
        frames="results/srl/allennlp.parquet",
    params:
        backend="allennlp",
        device="cpu",
        predicate_tags=SRL["predicate_tags"],
    log:
        "logs/srl/srl_import_allennlp.log",
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/srl_parse.py"


rule srl_systems_noheur:
    input:
        frames="results/srl/{srl_backend}.parquet",
        clips="results/dataset/clips.parquet",
        lib=script_lib("srl_systems"),
    output:
        keyclips="results/keyclips/srl-noheur-{srl_backend}.parquet",
        tuples="results/tuples/srl-noheur-{srl_backend}.parquet",
    params:
        system="srl-noheur-{srl_backend}",
        heuristics=False,
        verb_form=SRL["noheur_verb_form"],
    log:
        "logs/srl/srl_systems_noheur-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/srl_systems.py"


rule srl_systems_heur:
    input:
        frames="results/srl/{srl_backend}.parquet",
        clips="results/dataset/clips.parquet",
        lexicon=SRL_LEXICON,
        lib=script_lib("srl_systems"),
    output:
        keyclips="results/keyclips/srl-heur-{srl_backend}.parquet",
        tuples="results/tuples/srl-heur-{srl_backend}.parquet",
    params:
        system="srl-heur-{srl_backend}",
        heuristics=True,
        verb_form="lemma",
    log:
        "logs/srl/srl_systems_heur-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/srl_systems.py"


rule srl_systems_heurlex:
    # SRL w/ heuristics with the rebuilt lexicon: the lexicon's effect on Tables 4 and 5.
    input:
        frames="results/srl/{srl_backend}.parquet",
        clips="results/dataset/clips.parquet",
        lexicon="results/lexicon/rebuilt.lst",
        lib=script_lib("srl_systems"),
    output:
        keyclips="results/keyclips/srl-heurlex-{srl_backend}.parquet",
        tuples="results/tuples/srl-heurlex-{srl_backend}.parquet",
    params:
        system="srl-heurlex-{srl_backend}",
        heuristics=True,
        verb_form="lemma",
    log:
        "logs/srl/srl_systems_heurlex-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/srl_systems.py"


rule srl_agreement:
    # Per-clip agreement of our SRL w/ heuristics verbs with upstream's srl_pred.json.
    input:
        ours="results/tuples/srl-heur-{srl_backend}.parquet",
        upstream="results/tuples/upstream-srl-heur.parquet",
        lib=script_lib("srl_agreement"),
    output:
        "results/srl/agreement-{srl_backend}.tsv",
    log:
        "logs/srl/srl_agreement-{srl_backend}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/srl_agreement.py"


rule lexicon_rebuild:
    input:
        captions=upstream("youcook2/split"),
        clips="results/dataset/clips.parquet",
        upstream_lexicon=upstream(SRL["upstream_lexicon"]),
        lib=script_lib("lexicon_rebuild"),
    output:
        lexicon="results/lexicon/rebuilt.lst",
        counts="results/lexicon/first_word_counts.tsv",
        overlap="results/lexicon/overlap.tsv",
    params:
        min_count=SRL["lexicon_min_count"],
    log:
        "logs/srl/lexicon_rebuild.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/lexicon_rebuild.py"
