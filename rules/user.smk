# Procedures from a user's own video: data/user/<name>.{vtt,srt,txt} (+ optional <name>.mp4) ->
# results/procedures/<name>.json and .md (clips with times, key flags and procedure tuples).


rule user_procedures:
    "Extract the procedure of a user's transcript or subtitles (JSON and Markdown)."
    input:
        **USER_MODELS,
        subtitles=user_subtitles,
        video=user_video,
        lexicon=user_lexicon(),
        wordnet=config["resources"]["nltk_data"],
    output:
        json="results/procedures/{name}.json",
        markdown="results/procedures/{name}.md",
    log:
        "logs/user/user_procedures/{name}.log",
    wildcard_constraints:
        # Any single path component: user_subtitles checks the name and says what is allowed (a
        # tighter constraint here would only give "No rule to produce ...").
        name=r"[^/]+",
    conda:
        "../envs/torch.yaml"
    # torch, BLAS and the boosting's OpenMP are held to these (cookproc.core.threads).
    threads: 2
    # The selector and the tagger run on user.device: a GPU is asked for unless it is the CPU.
    resources:
        gpu=USER_GPUS,
        mem_mb=4000,
        runtime=60,
    params:
        **USER_SETTINGS,
        code=code_fingerprint("procedures_extract"),
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/procedures_extract.py"
