# Stage rules: corpus (see CONTRIBUTING.md). Procedures over a folder of transcripts or subtitles
# (config `corpus`; by default every transcript of the upstream youcook2/transcript/), extracted
# with the `user` section's settings in `corpus.shards` jobs (scatter), gathered into
# results/corpus/<name>/procedures.parquet (one row per clip); per-video Markdown on request:
# results/corpus/<name>/markdown/. A video's shard is fixed by a hash of its id
# (cookproc.corpus.shard_of), so adding files reruns only the shards that receive them.


rule corpus_shard:
    "Extract the procedures of one shard of the corpus's files (clips, key flags, tuples)."
    input:
        sources=corpus_shard_sources,
        lexicon=user_lexicon(),
        **USER_MODELS,
        verified=CORPUS_VERIFIED,
        wordnet=config["resources"]["nltk_data"],
    output:
        clips=CORPUS_SHARD_FILE,
    wildcard_constraints:
        shard=r"\d+",
    params:
        code=code_fingerprint("corpus_shard"),
        shards=CORPUS_SHARDS,
        **USER_SETTINGS,
        deterministic=TORCH["deterministic"],
    # One core a shard: scale out with corpus.shards. torch, BLAS and the boosting's OpenMP are held
    # to this (cookproc.core.threads); they would otherwise each start a thread per core.
    threads: 1
    # The selector and the tagger run on user.device: a GPU is asked for unless it is the CPU.
    resources:
        gpu=USER_GPUS,
        mem_mb=4000,
        runtime=60,
    log:
        f"logs/corpus/corpus_shard/{CORPUS['name']}/{{shard}}-of-{CORPUS_SHARDS}.log",
    benchmark:
        f"benchmarks/corpus/corpus_shard/{CORPUS['name']}/{{shard}}-of-{CORPUS_SHARDS}.tsv"
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/corpus_shard.py"


rule corpus_gather:
    "Gather the corpus's shards into one dataset of procedure clips."
    input:
        shards=expand(CORPUS_SHARD_FILE, shard=range(CORPUS_SHARDS)),
    output:
        clips=f"{CORPUS_DIR}/procedures.parquet",
    params:
        code=code_fingerprint("corpus_gather"),
    log:
        f"logs/corpus/corpus_gather/{CORPUS['name']}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/corpus_gather.py"


rule corpus_markdown:
    "Write one Markdown step list per video of the corpus dataset."
    input:
        clips=f"{CORPUS_DIR}/procedures.parquet",
    output:
        markdown=directory(f"{CORPUS_DIR}/markdown"),
    params:
        code=code_fingerprint("corpus_markdown"),
    log:
        f"logs/corpus/corpus_markdown/{CORPUS['name']}.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/corpus_markdown.py"
