# Stage rules: video (see CONTRIBUTING.md). Frames and ResNet-50 features per clip, TSM per
# 5-second segment (own run on local videos, or upstream's predictions imported), alignment of
# segments to clips, and the visual / fusion tuple systems visual-, fusion-naive-,
# fusion-oracle-{source}-{variant} (variant paper: upstream's procedure; corrected: see
# workflow/cookproc/video/tuples.py).

VISUAL_KINDS = {"visual": "visual", "naive": "fusion-naive", "oracle": "fusion-oracle"}


VIDEO = config["video"]


wildcard_constraints:
    video_id=r"[A-Za-z0-9_-]+",
    source=r"upstream|tsm",


checkpoint video_list:
    "List the local videos that the video rules will process."
    input:
        clips=CLIPS,
    output:
        "results/video/videos.txt",
    log:
        "logs/video/video_list.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("video_list"),
        video_ids=VIDEO["video_ids"],
    script:
        "../workflow/scripts/video_list.py"


rule video_frame_features:
    "ResNet-50 frame features of one local video."
    input:
        clips=CLIPS,
        video=local_video,
        checkpoint=configured_file(VIDEO["resnet"]["checkpoint"]),
    output:
        features="results/features/frames/videos/{video_id}.parquet",
        status="results/features/frames/videos/{video_id}.status.tsv",
    log:
        "logs/video/video_frame_features/{video_id}.log",
    benchmark:
        "benchmarks/video/video_frame_features/{video_id}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 4
    resources:
        gpu=1,
        mem_mb=12000,
        runtime=60,
    params:
        code=code_fingerprint("video_frame_features"),
        videos_dir=VIDEO["videos_dir"],
        video_extensions=VIDEO["video_extensions"],
        skip_bad_videos=VIDEO["skip_bad_videos"],
        device=VIDEO["device"],
        deterministic=TORCH["deterministic"],
        checkpoint=VIDEO["resnet"]["checkpoint"],
        frames_per_clip=VIDEO["resnet"]["frames_per_clip"],
        resize=VIDEO["resnet"]["resize"],
        crop=VIDEO["resnet"]["crop"],
        batch_size=VIDEO["resnet"]["batch_size"],
    script:
        "../workflow/scripts/video_frame_features.py"


rule video_frame_features_gather:
    "Gather every video's frame features into one Parquet."
    input:
        parts=per_listed_video("results/features/frames/videos/{video_id}.parquet"),
        statuses=per_listed_video("results/features/frames/videos/{video_id}.status.tsv"),
    output:
        table="results/features/frames/resnet50.parquet",
        skipped="results/features/frames/resnet50.skipped.tsv",
    log:
        "logs/video/video_frame_features_gather.log",
    conda:
        "../envs/torch.yaml"
    params:
        code=code_fingerprint("video_gather"),
        kind="frame_features",
    script:
        "../workflow/scripts/video_gather.py"


rule video_tsm:
    "TSM action recognition on 5-second segments of one local video."
    input:
        video=local_video,
        checkpoint=configured_file(VIDEO["tsm"]["checkpoint"]),
        verb_classes=upstream("youcook2/EPIC_verb_classes.csv"),
        noun_classes=upstream("youcook2/EPIC_noun_classes.csv"),
    output:
        segments="results/video/tsm/videos/{video_id}.parquet",
        status="results/video/tsm/videos/{video_id}.status.tsv",
    log:
        "logs/video/video_tsm/{video_id}.log",
    benchmark:
        "benchmarks/video/video_tsm/{video_id}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: 4
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=120,
    params:
        code=code_fingerprint("video_tsm"),
        videos_dir=VIDEO["videos_dir"],
        video_extensions=VIDEO["video_extensions"],
        skip_bad_videos=VIDEO["skip_bad_videos"],
        device=VIDEO["device"],
        deterministic=TORCH["deterministic"],
        checkpoint=VIDEO["tsm"]["checkpoint"],
        segment_count=VIDEO["tsm"]["segment_count"],
        segment_s=VIDEO["tsm"]["segment_s"],
        top_k=VIDEO["tsm"]["top_k"],
        resize=VIDEO["tsm"]["resize"],
        crop=VIDEO["tsm"]["crop"],
        batch_size=VIDEO["tsm"]["batch_size"],
    script:
        "../workflow/scripts/video_tsm.py"


rule video_tsm_gather:
    "Gather every video's TSM predictions into one Parquet."
    input:
        parts=per_listed_video("results/video/tsm/videos/{video_id}.parquet"),
        statuses=per_listed_video("results/video/tsm/videos/{video_id}.status.tsv"),
    output:
        table="results/video/tsm/tsm.parquet",
        skipped="results/video/tsm/tsm.skipped.tsv",
    log:
        "logs/video/video_tsm_gather.log",
    conda:
        "../envs/torch.yaml"
    params:
        code=code_fingerprint("video_gather"),
        kind="tsm_segments",
    script:
        "../workflow/scripts/video_gather.py"


rule video_import_upstream_tsm:
    "Import upstream's TSM predictions (the stand-in for the YouCook2 videos)."
    input:
        manifest=upstream("youcook2/clip_manifest_10s.txt"),
        predictions=upstream("youcook2/clip_prediction_5s.txt"),
        verb_classes=upstream("youcook2/EPIC_verb_classes.csv"),
        noun_classes=upstream("youcook2/EPIC_noun_classes.csv"),
        verified="results/dataset/upstream-checksums.tsv",
    output:
        "results/video/tsm/upstream.parquet",
    log:
        "logs/video/video_import_upstream_tsm.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("video_import_upstream_tsm"),
    script:
        "../workflow/scripts/video_import_upstream_tsm.py"


rule video_align:
    "Align TSM segments to benchmark clips."
    input:
        clips=CLIPS,
        segments="results/video/tsm/{source}.parquet",
    output:
        "results/video/aligned/{source}.parquet",
    log:
        "logs/video/video_align/{source}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("video_align"),
        timing="clips",
    script:
        "../workflow/scripts/video_align.py"


# The paper variant aligns with the clip times upstream computed (its TimeStamp parsing included).
rule video_align_paper:
    "Align TSM segments to clips with upstream's timestamp parsing."
    input:
        clips=CLIPS,
        segments="results/video/tsm/{source}.parquet",
        csv=upstream("youcook2/reviewed_0812.csv"),
    output:
        "results/video/aligned/{source}.paper.parquet",
    log:
        "logs/video/video_align_paper/{source}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("video_align"),
        timing="upstream",
    script:
        "../workflow/scripts/video_align.py"


rule video_tuples_paper:
    "Visual-only and fusion tuples by upstream's procedure."
    input:
        clips=CLIPS,
        aligned="results/video/aligned/{source}.paper.parquet",
        utterance=f"results/tuples/{VIDEO['utterance_system']}.parquet",
        verb_classes=upstream("youcook2/EPIC_verb_classes.csv"),
        noun_classes=upstream("youcook2/EPIC_noun_classes.csv"),
        wordnet=config["resources"]["nltk_data"],
    output:
        visual="results/tuples/visual-{source}-paper.parquet",
        naive="results/tuples/fusion-naive-{source}-paper.parquet",
        oracle="results/tuples/fusion-oracle-{source}-paper.parquet",
    log:
        "logs/video/video_tuples_paper/{source}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("video_tuples"),
        source="{source}",
        variant="paper",
        tie_key=VIDEO["paper"]["tie_key"],
        max_rank=VIDEO["max_rank"],
    script:
        "../workflow/scripts/video_tuples.py"


rule video_tuples_corrected:
    "Visual-only and fusion tuples by the corrected procedure."
    input:
        clips=CLIPS,
        aligned="results/video/aligned/{source}.parquet",
        utterance=f"results/tuples/{VIDEO['utterance_system']}.parquet",
        verb_classes=upstream("youcook2/EPIC_verb_classes.csv"),
        noun_classes=upstream("youcook2/EPIC_noun_classes.csv"),
        wordnet=config["resources"]["nltk_data"],
    output:
        visual="results/tuples/visual-{source}-corrected.parquet",
        naive="results/tuples/fusion-naive-{source}-corrected.parquet",
        oracle="results/tuples/fusion-oracle-{source}-corrected.parquet",
    log:
        "logs/video/video_tuples_corrected/{source}.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("video_tuples"),
        source="{source}",
        variant="corrected",
        drop_nouns=VIDEO["corrected"]["drop_nouns"],
        wordnet_expansion=VIDEO["corrected"]["wordnet_expansion"],
        wordnet_max_senses=VIDEO["corrected"]["wordnet_max_senses"],
        max_rank=VIDEO["max_rank"],
    script:
        "../workflow/scripts/video_tuples.py"


rule video_all:
    "Every visual and fusion system."
    input:
        expand(
            "results/tuples/{kind}-{source}-{variant}.parquet",
            kind=list(VISUAL_KINDS.values()),
            source=VIDEO["sources"],
            variant=VIDEO["variants"],
        ),
