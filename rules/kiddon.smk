# Stage rules: kiddon (see CONTRIBUTING.md). The Kiddon et al. (2015) unsupervised segmenter:
# trained by hard EM on all YouCook2 transcripts, then run on the benchmark clips. It is the
# tuple systems "kiddon" (every frame of a clip) and "kiddon-first-frame" (the paper's layout:
# first frame of a sentence, clips merged by the original sentence splitter get nothing), and
# the key-clip system "kiddon" (a clip is key when a predicate is found).

KIDDON = config["kiddon"]


rule kiddon_train:
    "Train the Kiddon et al. (2015) segmenter by hard EM on every transcript."
    input:
        transcripts=files_in(upstream("youcook2/transcript")),
        lexicon=upstream("youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst"),
        verified="results/dataset/upstream-checksums.tsv",
        wordnet=config["resources"]["nltk_data"],
    output:
        model="results/kiddon/model.json",
        iterations="results/kiddon/iterations.parquet",
    log:
        "logs/kiddon/kiddon_train.log",
    benchmark:
        "benchmarks/kiddon/kiddon_train.tsv"
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("kiddon_train"),
        transcripts_dir=folder_of("transcripts", upstream("youcook2/transcript")),
        iterations=KIDDON["iterations"],
        settings={
            "ignore_words": KIDDON["ignore_words"],
            "ignore_capital_i": KIDDON["ignore_capital_i"],
            "lowercase_i_is_pronoun": KIDDON["lowercase_i_is_pronoun"],
            "then_is_conjunction": KIDDON["then_is_conjunction"],
            "max_candidates": KIDDON["max_candidates"],
        },
    script:
        "../workflow/scripts/kiddon_train.py"


rule kiddon_segment:
    "Segment the benchmark transcripts with the Kiddon model into key clips and tuples."
    input:
        model="results/kiddon/model.json",
        clips=CLIPS,
        wordnet=config["resources"]["nltk_data"],
    output:
        frames="results/kiddon/frames.parquet",
        keyclips="results/keyclips/kiddon.parquet",
        tuples="results/tuples/kiddon.parquet",
        first_frame="results/tuples/kiddon-first-frame.parquet",
    log:
        "logs/kiddon/kiddon_segment.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("kiddon_segment"),
        system="kiddon",
        first_frame_system="kiddon-first-frame",
    script:
        "../workflow/scripts/kiddon_segment.py"
