# Stage rules: captions (see CONTRIBUTING.md). YouCook2's human step captions beside the transcripts:
# the people's split (the test videos' captions go to a file of their own that no training rule
# reads), sentence vectors, the captions aligned to the transcripts (weak labels of key steps), and
# the step model trained on them (key steps with the verbs and nouns a person would write).

CAPTIONS = config["captions"]


wildcard_constraints:
    variant="|".join(CAPTIONS["variants"]) or "none",


rule caption_corpus:
    "The people's split, every transcript's sentences and the captions, with their words as people write them."
    input:
        transcripts=files_in(upstream("youcook2/transcript")),
        captions=files_in(upstream("youcook2/split")),
        clips=CLIPS,
        verified="results/dataset/upstream-checksums.tsv",
        wordnet=config["resources"]["nltk_data"],
    output:
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        sentences=f"{CAPTIONS_DIR}/sentences.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        # The people's test videos' captions: read only by the scoring rules (rules/people.smk).
        test=f"{CAPTIONS_DIR}/captions.test.parquet",
    log:
        "logs/captions/caption_corpus.log",
    benchmark:
        "benchmarks/captions/caption_corpus.tsv"
    conda:
        "../envs/cpu.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        code=code_fingerprint("caption_corpus"),
        transcripts_dir=folder_of("transcripts", upstream("youcook2/transcript")),
        captions_dir=folder_of("captions", upstream("youcook2/split")),
    script:
        "../workflow/scripts/caption_corpus.py"


rule caption_vectors:
    "Sentence vectors of every transcript sentence and training caption (the frozen sentence encoder)."
    input:
        sentences=f"{CAPTIONS_DIR}/sentences.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        wordnet=config["resources"]["nltk_data"],
    output:
        sentences=f"{CAPTIONS_DIR}/sentence_vectors.parquet",
        captions=f"{CAPTIONS_DIR}/caption_vectors.parquet",
    log:
        "logs/captions/caption_vectors.log",
    benchmark:
        "benchmarks/captions/caption_vectors.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        gpu=gpus_for(CAPTIONS["device"]),
        mem_mb=4000,
        runtime=60,
    params:
        code=code_fingerprint("caption_vectors"),
        encoder={k: config["keyclips"]["text"][k] for k in ("name", "path", "pooling", "max_length", "batch_size")},
        device=CAPTIONS["device"],
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/caption_vectors.py"


rule caption_alignment:
    "Align each training video's captions to its transcript sentences; check it against the benchmark's key clips."
    input:
        sentences=f"{CAPTIONS_DIR}/sentences.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        sentence_vectors=f"{CAPTIONS_DIR}/sentence_vectors.parquet",
        caption_vectors=f"{CAPTIONS_DIR}/caption_vectors.parquet",
        clips=CLIPS,
        wordnet=config["resources"]["nltk_data"],
    output:
        alignment=f"{CAPTIONS_DIR}/alignment.parquet",
        quality=f"{CAPTIONS_DIR}/alignment_quality.csv",
    log:
        "logs/captions/caption_alignment.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("caption_alignment"),
        lexical_weight=CAPTIONS["lexical_weight"],
    script:
        "../workflow/scripts/caption_alignment.py"


rule train_step_model:
    "Train the step model on the training videos' aligned captions; choose its thresholds on inner validation."
    input:
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        sentences=f"{CAPTIONS_DIR}/sentences.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        sentence_vectors=f"{CAPTIONS_DIR}/sentence_vectors.parquet",
        caption_vectors=f"{CAPTIONS_DIR}/caption_vectors.parquet",
        alignment=f"{CAPTIONS_DIR}/alignment.parquet",
        clips=CLIPS,
        wordnet=config["resources"]["nltk_data"],
    output:
        model=directory(STEP_MODEL),
    log:
        "logs/captions/train_step_model/{variant}.log",
    benchmark:
        "benchmarks/captions/train_step_model/{variant}.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=12000,
        runtime=60,
    params:
        code=code_fingerprint("train_step_model"),
        model=CAPTIONS["model"],
        encoder=rules.caption_vectors.params.encoder,
    script:
        "../workflow/scripts/train_step_model.py"


rule step_model_on_benchmark:
    "The step model trained outside the benchmark: its steps on the benchmark's key clips and in the captions' times."
    input:
        segments=upstream("youcook2/urlsegmentcaption.txt"),
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        sentences=f"{CAPTIONS_DIR}/sentences.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        sentence_vectors=f"{CAPTIONS_DIR}/sentence_vectors.parquet",
        caption_vectors=f"{CAPTIONS_DIR}/caption_vectors.parquet",
        alignment=f"{CAPTIONS_DIR}/alignment.parquet",
        clips=CLIPS,
        wordnet=config["resources"]["nltk_data"],
    output:
        scores=f"{CAPTIONS_DIR}/steps_on_benchmark.csv",
    log:
        "logs/captions/step_model_on_benchmark.log",
    benchmark:
        "benchmarks/captions/step_model_on_benchmark.tsv"
    conda:
        "../envs/cpu.yaml"
    threads: 2
    resources:
        mem_mb=12000,
        runtime=60,
    params:
        code=code_fingerprint("step_model_on_benchmark"),
        model=CAPTIONS["model"],
    script:
        "../workflow/scripts/step_model_on_benchmark.py"
