# Procedures from a user's own video: data/user/<name>.{vtt,srt,txt} (+ optional <name>.mp4) ->
# results/procedures/<name>.json and .md (clips with times, key flags and procedure tuples).

USER_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


rule user_procedures:
    input:
        subtitles=user_subtitles,
        video=user_video,
        lexicon=user_lexicon(),
        tagger=[USER["tagger_model"]] if USER["srl_backend"] == "tagger" and USER["tagger_model"] else [],
        lib=script_lib("procedures_extract"),
    output:
        json="results/procedures/{name}.json",
        markdown="results/procedures/{name}.md",
    wildcard_constraints:
        name=USER_NAME,
    params:
        segmentation=USER["segmentation"],
        max_clip_s=USER["max_clip_s"],
        drop_sound_tags=USER["drop_sound_tags"],
        extractor=USER["extractor"],
        srl_backend=USER["srl_backend"],
        tagger_model=USER["tagger_model"],
        device=USER["device"],
        lowercase=USER["lowercase"],
    log:
        "logs/user/user_procedures/{name}.log",
    conda:
        "../envs/torch.yaml"
    script:
        "../workflow/scripts/procedures_extract.py"
