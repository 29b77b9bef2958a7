# Stage rules: corpus (see CONTRIBUTING.md). Procedures over a folder of transcripts or subtitles
# (config `corpus`; by default every transcript of the upstream youcook2/transcript/), extracted
# with the `procedures` section's settings in `corpus.shards` jobs into one partitioned dataset,
# results/corpus/<name>/procedures/ (hive-style: shard=NNNNN/part-0.parquet per shard, and
# _metadata, the shards' footers and manifest; cookproc.app.corpus). No job reads every row: the
# Markdown and the report read the dataset shard by shard. A video's shard is fixed by a hash of
# its id (cookproc.app.corpus.shard_of), so adding files reruns only the shards that receive them.
# `snakemake corpus_all` builds the dataset (and the single-file export when corpus.single_file).
# The dataset is replaced as a whole or not at all: each shard's job writes its own file beside it,
# and corpus_dataset, once all of them succeeded, builds the new folder and puts it in place in one
# step. The folder is an `update` output: Snakemake never deletes it before that job (a failed or
# interrupted job leaves the dataset as it was; Snakemake keeps a copy under .snakemake/ while the
# job runs, and puts it back if the job fails).

# One job per shard of the corpus's files.
CORPUS = config["corpus"]
CORPUS_DIR = f"results/corpus/{CORPUS['name']}"
CORPUS_SHARDS = CORPUS["shards"]
# Each shard's job's file, and the corpus dataset built from them:
# one hive-style partition per shard (cookproc.app.corpus.PARTITION_FILE) and _metadata, the
# shards' footers and manifest, all written by corpus_dataset.
CORPUS_SHARD_FILE = f"{CORPUS_DIR}/shards/shard={{shard}}.parquet"
CORPUS_SHARD_FILES = [CORPUS_SHARD_FILE.format(shard=f"{k:05d}") for k in range(CORPUS_SHARDS)]
CORPUS_DATASET = f"{CORPUS_DIR}/procedures"
# corpus.dir, or the upstream transcripts when it is null; those are checked first (like kiddon_train).
CORPUS_FOLDER = CORPUS["dir"] or upstream("youcook2/transcript")
CORPUS_VERIFIED = [] if CORPUS["dir"] else ["results/dataset/upstream-checksums.tsv"]


rule corpus_shard:
    "Extract the procedures of one shard of the corpus's files (clips, key flags, tuples)."
    input:
        **PROCEDURE_MODELS,
        sources=corpus_shard_sources(CORPUS_FOLDER, CORPUS["extensions"], CORPUS_SHARDS),
        lexicon=procedure_lexicon(),
        verified=CORPUS_VERIFIED,
        wordnet=config["resources"]["nltk_data"],
    output:
        clips=CORPUS_SHARD_FILE,
    log:
        f"logs/corpus/corpus_shard/{CORPUS['name']}/{{shard}}-of-{CORPUS_SHARDS}.log",
    benchmark:
        f"benchmarks/corpus/corpus_shard/{CORPUS['name']}/{{shard}}-of-{CORPUS_SHARDS}.tsv"
    wildcard_constraints:
        # Five digits or more, as the dataset's partitions (cookproc.app.corpus.PARTITION_FILE; a {5,}
        # would read as a wildcard).
        shard=r"\d\d\d\d\d+",
    conda:
        "../envs/torch.yaml"
    # One core a shard: scale out with corpus.shards. torch, BLAS and the boosting's OpenMP are held
    # to this (cookproc.core.threads); they would otherwise each start a thread per core.
    threads: 1
    # The selector and the tagger run on procedures.device: a GPU is asked for unless it is the CPU.
    resources:
        gpu=PROCEDURE_GPUS,
        mem_mb=4000,
        runtime=60,
    params:
        **PROCEDURE_SETTINGS,
        code=code_fingerprint("corpus_shard"),
        shards=CORPUS_SHARDS,
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/corpus_shard.py"


rule corpus_dataset:
    "Build the corpus dataset from its shards' files (a partition each, and _metadata), replacing it as a whole."
    input:
        shards=CORPUS_SHARD_FILES,
    output:
        dataset=update(directory(CORPUS_DATASET)),
    log:
        f"logs/corpus/corpus_dataset/{CORPUS['name']}.log",
    benchmark:
        f"benchmarks/corpus/corpus_dataset/{CORPUS['name']}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("corpus_dataset"),
        damaged=f"{CORPUS_DIR}/damaged",
    script:
        "../workflow/scripts/corpus_dataset.py"


rule corpus_export:
    "The corpus dataset as one Parquet file (every row in one process: for small corpora)."
    input:
        dataset=CORPUS_DATASET,
    output:
        clips=f"{CORPUS_DIR}/procedures.parquet",
    log:
        f"logs/corpus/corpus_export/{CORPUS['name']}.log",
    benchmark:
        f"benchmarks/corpus/corpus_export/{CORPUS['name']}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("corpus_export"),
    script:
        "../workflow/scripts/corpus_export.py"


rule corpus_markdown:
    "Write one Markdown step list per video of the corpus dataset."
    input:
        dataset=CORPUS_DATASET,
    output:
        markdown=directory(f"{CORPUS_DIR}/markdown"),
    log:
        f"logs/corpus/corpus_markdown/{CORPUS['name']}.log",
    benchmark:
        f"benchmarks/corpus/corpus_markdown/{CORPUS['name']}.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("corpus_markdown"),
    script:
        "../workflow/scripts/corpus_markdown.py"


rule corpus_all:
    "The corpus dataset, and its single-file export when corpus.single_file is true."
    input:
        CORPUS_DATASET,
        [f"{CORPUS_DIR}/procedures.parquet"] if CORPUS["single_file"] else [],
