# The upstream benchmark files, verified, and parsed into one row per clip; dataset statistics.

UPSTREAM_CHECKSUMS = repo_path("workflow/schemas/upstream-checksums.tsv")


if not os.path.exists(UPSTREAM):

    # Only defined when the configured folder is absent: a present mirror is never written to.
    rule download_upstream:
        output:
            files=[upstream(f) for f in UPSTREAM_FILES],
            folders=[directory(upstream(f)) for f in UPSTREAM_FOLDERS],
        params:
            url=config["upstream"]["archive_url"].format(commit=config["upstream"]["commit"]),
            dest=UPSTREAM,
            checksums=UPSTREAM_CHECKSUMS,
        log:
            "logs/data/download_upstream.log",
        conda:
            "../envs/cpu.yaml"
        script:
            "../workflow/scripts/download_upstream.py"


rule verify_upstream:
    input:
        files=[upstream(f) for f in UPSTREAM_FILES],
        folders=[upstream(f) for f in UPSTREAM_FOLDERS],
        checksums=UPSTREAM_CHECKSUMS,
        lib=script_lib("verify_upstream"),
    output:
        "results/dataset/upstream-checksums.tsv",
    params:
        root=upstream_root,
        verify=config["upstream"]["verify_checksums"],
    log:
        "logs/data/verify_upstream.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/verify_upstream.py"


rule clips:
    input:
        csv=upstream("youcook2/reviewed_0812.csv"),
        manifest=upstream("youcook2/clip_manifest_10s.txt"),
        repairs=repairs_file(),
        verified="results/dataset/upstream-checksums.tsv",
        lib=script_lib("build_clips"),
    output:
        "results/dataset/clips.parquet",
    log:
        "logs/data/clips.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/build_clips.py"


rule dataset_stats:
    input:
        clips="results/dataset/clips.parquet",
        lib=script_lib("dataset_stats"),
    output:
        table="results/table2.csv",
        verbs="results/figures/figure3_verbs.png",
        arguments="results/figures/figure3_arguments.png",
    params:
        top=config["tables"]["figure3_top"],
    log:
        "logs/data/dataset_stats.log",
    conda:
        "../envs/cpu.yaml"
    script:
        "../workflow/scripts/dataset_stats.py"
