# Stage rules: people (see CONTRIBUTING.md). Procedures scored against people: every configured
# system's procedures for the people's test videos (cookproc.data.captions: never trained, counted or
# chosen on) against YouCook2's human captions of those videos, and the constant prior, as
# results/people.csv / .md (cookproc.evaluation.people). The step models' folders for users
# (results/models/steps-<variant>) carry their people's scores on their card.

PEOPLE_DIR = "results/people"
# The settings every people's procedure is read with: the test transcripts are the mirror's .txt
# files, one clip a line; the extractors as a user's `cookproc extract` runs them, on the CPU (an
# evaluation of a few hundred videos: no GPU is asked for).
PEOPLE_READING = {
    **PROCEDURE_SETTINGS,
    "extractor": "srl-heur",
    "srl_backend": "spacy",
    "tagger_model": None,
    "device": "cpu",
}


# The systems whose steps are a procedure's key clips (the retrieval floor copies a training video's captions).
PROCEDURE_SYSTEMS = [s for s in PEOPLE["systems"] if s != "nearest-video-captions"]


wildcard_constraints:
    people_system="|".join(PEOPLE["systems"]) or "none",
    procedure_system="|".join(PROCEDURE_SYSTEMS) or "none",


rule people_procedures_srl:
    "Procedures of the people's test videos: SRL with the paper's heuristics on every sentence."
    input:
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        transcripts=files_in(upstream("youcook2/transcript")),
        lexicon=upstream("youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst"),
        wordnet=config["resources"]["nltk_data"],
    output:
        procedures=f"{PEOPLE_DIR}/procedures/srl-heur-spacy.parquet",
    log:
        "logs/people/people_procedures/srl-heur-spacy.log",
    benchmark:
        "benchmarks/people/people_procedures/srl-heur-spacy.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        code=code_fingerprint("people_procedures"),
        transcripts_dir=folder_of("transcripts", upstream("youcook2/transcript")),
        settings=PEOPLE_READING,
        normalised=False,
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/people_procedures.py"


rule people_procedures_benchmark_models:
    "Procedures of the people's test videos by the key-clip selector and tuple extractor trained on the benchmark."
    input:
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        transcripts=files_in(upstream("youcook2/transcript")),
        lexicon=upstream("youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst"),
        keyclip_model=DEPLOYED_SELECTOR,
        tuple_model=DEPLOYED_TUPLES,
        wordnet=config["resources"]["nltk_data"],
    output:
        procedures=f"{PEOPLE_DIR}/procedures/benchmark-models.parquet",
    log:
        "logs/people/people_procedures/benchmark-models.log",
    benchmark:
        "benchmarks/people/people_procedures/benchmark-models.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        code=code_fingerprint("people_procedures"),
        transcripts_dir=folder_of("transcripts", upstream("youcook2/transcript")),
        settings=PEOPLE_READING,
        normalised=False,
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/people_procedures.py"


rule people_procedures_steps:
    "Procedures of the people's test videos by a step model (its steps' words scored; SRL gives the clips' own)."
    input:
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        transcripts=files_in(upstream("youcook2/transcript")),
        lexicon=upstream("youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst"),
        step_model=STEP_MODEL,
        wordnet=config["resources"]["nltk_data"],
    output:
        procedures=f"{PEOPLE_DIR}/procedures/steps-{{variant}}.parquet",
    log:
        "logs/people/people_procedures/steps-{variant}.log",
    benchmark:
        "benchmarks/people/people_procedures/steps-{variant}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        code=code_fingerprint("people_procedures"),
        transcripts_dir=folder_of("transcripts", upstream("youcook2/transcript")),
        settings=PEOPLE_READING,
        normalised=True,
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/people_procedures.py"


rule people_steps:
    "One system's steps as they are scored: its key clips in order, their words and texts."
    input:
        procedures=f"{PEOPLE_DIR}/procedures/{{procedure_system}}.parquet",
        wordnet=config["resources"]["nltk_data"],
    output:
        steps=f"{PEOPLE_DIR}/steps/{{procedure_system}}.parquet",
    log:
        "logs/people/people_steps/{procedure_system}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("people_steps"),
    script:
        "../workflow/scripts/people_steps.py"


rule people_retrieval_floor:
    "The retrieval floor: each test video's steps are the captions of the training video with the nearest transcript."
    input:
        videos=f"{CAPTIONS_DIR}/videos.parquet",
        sentences=f"{CAPTIONS_DIR}/sentences.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        wordnet=config["resources"]["nltk_data"],
    output:
        steps=f"{PEOPLE_DIR}/steps/nearest-video-captions.parquet",
    log:
        "logs/people/people_retrieval_floor.log",
    conda:
        "../envs/cpu.yaml"
    resources:
        mem_mb=4000,
    params:
        code=code_fingerprint("people_retrieval_floor"),
    script:
        "../workflow/scripts/people_retrieval_floor.py"


rule people_idf:
    "The verbs' IDF weights of the people's table, counted on the training videos' captions only."
    input:
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        wordnet=config["resources"]["nltk_data"],
    output:
        idf=f"{PEOPLE_DIR}/idf_weights.json",
    log:
        "logs/people/people_idf.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("people_idf"),
    script:
        "../workflow/scripts/people_idf.py"


rule people_score:
    "Score one system's steps against the people's test videos' captions (per video, and its table row)."
    input:
        steps=f"{PEOPLE_DIR}/steps/{{people_system}}.parquet",
        test=f"{CAPTIONS_DIR}/captions.test.parquet",
        idf=f"{PEOPLE_DIR}/idf_weights.json",
        wordnet=config["resources"]["nltk_data"],
    output:
        scores=f"{PEOPLE_DIR}/scores/{{people_system}}.parquet",
        row=f"{PEOPLE_DIR}/scores/{{people_system}}.csv",
    log:
        "logs/people/people_score/{people_system}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("people_score"),
        bootstrap=PEOPLE["bootstrap"],
    script:
        "../workflow/scripts/people_score.py"


rule people_table:
    "The people's table: every system's row and the constant prior's, and the rows compared (results/people.csv, .md)."
    input:
        rows=expand(f"{PEOPLE_DIR}/scores/{{system}}.csv", system=PEOPLE["systems"]),
        scores=expand(f"{PEOPLE_DIR}/scores/{{system}}.parquet", system=PEOPLE["systems"]),
        test=f"{CAPTIONS_DIR}/captions.test.parquet",
        train=f"{CAPTIONS_DIR}/captions.train.parquet",
        idf=f"{PEOPLE_DIR}/idf_weights.json",
        wordnet=config["resources"]["nltk_data"],
    output:
        csv="results/people.csv",
        markdown="results/people.md",
        comparisons="results/people_comparisons.csv",
        constant=f"{PEOPLE_DIR}/constant_prior.json",
    log:
        "logs/people/people_table.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("people_table"),
        systems=PEOPLE["systems"],
        reference=PEOPLE["reference"],
        max_constant=PEOPLE["max_constant"],
        bootstrap=PEOPLE["bootstrap"],
    script:
        "../workflow/scripts/people_table.py"


rule deploy_step_model:
    "A step model for users: its folder with a card that states its people's scores."
    input:
        model=STEP_MODEL,
        row=f"{PEOPLE_DIR}/scores/steps-{{variant}}.csv",
        # A step model trained without the benchmark, on its key clips (rules/captions.smk): the card's row.
        benchmark=f"{CAPTIONS_DIR}/steps_on_benchmark.csv",
        wordnet=config["resources"]["nltk_data"],
    output:
        model=directory("results/models/steps-{variant}"),
    log:
        "logs/deploy/deploy_step_model/{variant}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("deploy_step_model"),
    script:
        "../workflow/scripts/deploy_step_model.py"
