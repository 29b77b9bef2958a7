# Stage rules: resources (see CONTRIBUTING.md). What jobs read at run time besides their data,
# laid out by the workflow itself in a folder of its working directory, so that a job finds it in
# the .venv and under --software-deployment-method conda alike (on a cluster, on the shared file
# system), never in one environment's own install. The spaCy model and the MiniLM encoder are pip
# packages of envs/*.yaml; all-mpnet-base-v2 is in data/encoders (cookproc.data.encoders).


rule wordnet:
    "Lay WordNet 3.0 out for NLTK (nltk_data/corpora/wordnet) from its database files."
    output:
        nltk_data=directory(config["resources"]["nltk_data"]),
    log:
        "logs/resources/wordnet.log",
    # A second's copy on the host that runs Snakemake: not worth a cluster job.
    localrule: True
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("wordnet_layout"),
        source=config["resources"]["wordnet_source"],
    script:
        "../workflow/scripts/wordnet_layout.py"
