# Procedures from a user's own video: data/user/<name>.{vtt,srt,txt} (+ optional <name>.mp4) ->
# results/procedures/<name>.json and .md (clips with times, key flags and procedure tuples).


rule procedures_extract:
    "Extract the procedure of a user's transcript or subtitles (JSON and Markdown)."
    input:
        **PROCEDURE_MODELS,
        subtitles=procedure_subtitles,
        video=procedure_video,
        lexicon=procedure_lexicon(),
        wordnet=config["resources"]["nltk_data"],
    output:
        json="results/procedures/{name}.json",
        markdown="results/procedures/{name}.md",
    log:
        "logs/procedures/procedures_extract/{name}.log",
    wildcard_constraints:
        # Any single path component: procedure_subtitles checks the name and says what is allowed (a
        # tighter constraint here would only give "No rule to produce ...").
        name=r"[^/]+",
    conda:
        "../envs/torch.yaml"
    # torch, BLAS and the boosting's OpenMP are held to these (cookproc.core.threads).
    threads: 2
    # The selector and the tagger run on procedures.device: a GPU is asked for unless it is the CPU.
    resources:
        gpu=PROCEDURE_GPUS,
        mem_mb=4000,
        runtime=60,
    params:
        **PROCEDURE_SETTINGS,
        code=code_fingerprint("procedures_extract"),
        deterministic=TORCH["deterministic"],
    script:
        "../workflow/scripts/procedures_extract.py"
