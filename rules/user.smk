# Procedures from a user's own video: data/user/<name>.{vtt,srt,txt} (+ optional <name>.mp4) ->
# results/procedures/<name>.json and .md (clips with times, key flags and procedure tuples).
from cookproc.subtitles import SUBTITLE_EXTENSIONS

USER = config["user"]
USER_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


def user_subtitles(wildcards):
    """The one subtitle / transcript file of ``name`` (a clear error when there is none or several)."""
    found = [os.path.join(USER["dir"], f"{wildcards.name}.{ext}") for ext in SUBTITLE_EXTENSIONS
             if os.path.exists(os.path.join(USER["dir"], f"{wildcards.name}.{ext}"))]
    if len(found) != 1:
        tried = ", ".join(os.path.join(USER["dir"], f"{wildcards.name}.{ext}") for ext in SUBTITLE_EXTENSIONS)
        raise ValueError(f"procedures for {wildcards.name!r}: expected exactly one subtitle or transcript "
                         f"file of {tried}; found {found or 'none'}")
    return found[0]


def user_video(wildcards):
    """The optional video of ``name`` (first existing extension), as a list of zero or one file."""
    for ext in USER["video_extensions"]:
        path = os.path.join(USER["dir"], f"{wildcards.name}.{ext}")
        if os.path.exists(path):
            return [path]
    return []


def user_lexicon():
    return USER["lexicon"] or upstream("youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst")


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
