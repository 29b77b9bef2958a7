# The upstream benchmark files, verified, and parsed into one row per clip; dataset statistics.

UPSTREAM_CHECKSUMS = repo_path("workflow/schemas/upstream-checksums.tsv")


if not os.path.exists(UPSTREAM):

    # Only defined when the configured folder is absent: a present mirror is never written to.
    rule download_upstream:
        "Download the pinned upstream benchmark commit and check every file's checksum."
        output:
            files=[upstream(f) for f in UPSTREAM_FILES],
            folders=[directory(upstream(f)) for f in UPSTREAM_FOLDERS],
        log:
            "logs/data/download_upstream.log",
        conda:
            "../envs/cpu.yaml"
        params:
            code=code_fingerprint("download_upstream"),
            archive_url=config["upstream"]["archive_url"].format(commit=config["upstream"]["commit"]),
            dest=upstream_download_root,
            checksums=UPSTREAM_CHECKSUMS,
        script:
            "../workflow/scripts/download_upstream.py"


rule verify_upstream:
    "Check the upstream benchmark files against the pinned checksums."
    input:
        files=[upstream(f) for f in UPSTREAM_FILES],
        folders=[path for f in UPSTREAM_FOLDERS for path in files_in(upstream(f))],
        checksums=UPSTREAM_CHECKSUMS,
    output:
        "results/dataset/upstream-checksums.tsv",
    log:
        "logs/data/verify_upstream.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("verify_upstream"),
        root=upstream_root,
        verify_checksums=config["upstream"]["verify_checksums"],
    script:
        "../workflow/scripts/verify_upstream.py"


rule clips:
    "Parse the benchmark into one row per clip: times, sentence, key flag, gold verbs and arguments."
    input:
        csv=upstream("youcook2/reviewed_0812.csv"),
        manifest=upstream("youcook2/clip_manifest_10s.txt"),
        repairs=repairs_file(),
        verified="results/dataset/upstream-checksums.tsv",
    output:
        CLIPS,
    log:
        "logs/data/clips.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("build_clips"),
    script:
        "../workflow/scripts/build_clips.py"


rule dataset_stats:
    "Dataset statistics (Table 2) and the most frequent verbs and arguments (Figure 3)."
    input:
        clips=CLIPS,
    output:
        table="results/table2.csv",
        verbs="results/figures/figure3_verbs.png",
        arguments="results/figures/figure3_arguments.png",
    log:
        "logs/data/dataset_stats.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("dataset_stats"),
        figure3_top=config["tables"]["figure3_top"],
    script:
        "../workflow/scripts/dataset_stats.py"
