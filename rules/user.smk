# Procedures from a user's own video: data/user/<name>.{vtt,srt,txt} (+ optional <name>.mp4) ->
# results/procedures/<name>.json and .md (clips with times, key flags and procedure tuples).


rule user_procedures:
    "Extract the procedure of a user's transcript or subtitles (JSON and Markdown)."
    input:
        subtitles=user_subtitles,
        video=user_video,
        lexicon=user_lexicon(),
        **USER_MODELS,
        wordnet=config["resources"]["nltk_data"],
    output:
        json="results/procedures/{name}.json",
        markdown="results/procedures/{name}.md",
    wildcard_constraints:
        # Any single path component: user_subtitles checks the name and says what is allowed (a
        # tighter constraint here would only give "No rule to produce ...").
        name=r"[^/]+",
    params:
        code=code_fingerprint("procedures_extract"),
        **USER_SETTINGS,
        deterministic=TORCH["deterministic"],
    # torch, BLAS and the boosting's OpenMP are held to these (cookproc.core.threads).
    threads: 2
    # The selector and the tagger run on user.device: a GPU is asked for unless it is the CPU.
    resources:
        gpu=USER_GPUS,
        mem_mb=4000,
        runtime=60,
    log:
        "logs/user/user_procedures/{name}.log",
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/procedures_extract.py"
