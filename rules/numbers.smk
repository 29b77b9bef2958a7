# Stage rules: numbers (see CONTRIBUTING.md). One generated file of every figure the README and docs
# state about results (cookproc.evaluation.numbers); `python -m cookproc.evaluation.numbers render|check
# README.md docs/*.md` renders the docs' result tables from it or checks them (cookproc.evaluation.render).

NUMBERS = config["numbers"]
# The seeds of the systems scored over their seeds (the neural selectors; the system registry), when
# one is in Table 4 and the config asks for them (trains every seed).
NUMBERS_SEEDS = NUMBERS["seeds"] and any(entry.seed_runs for entry in SYSTEMS["keyclips"].values())


rule numbers:
    "Every figure the README and docs state about results, in one file (results/numbers.json)."
    input:
        **({"seeds": "results/keyclips/seed_summary.csv"} if NUMBERS_SEEDS else {}),
        # The people's table and the captions' alignment against the benchmark (rules/people.smk, captions.smk).
        **(
            {
                "people": "results/people.csv",
                "people_comparisons": "results/people_comparisons.csv",
                "alignment": f"{CAPTIONS_DIR}/alignment_quality.csv",
                "steps_benchmark": f"{CAPTIONS_DIR}/steps_on_benchmark.csv",
            }
            if PEOPLE["systems"]
            else {}
        ),
        table2="results/table2.csv",
        table4="results/table4.csv",
        table5="results/table5.csv",
        table4_ci="results/table4_ci.csv",
        table5_ci="results/table5_ci.csv",
        significance="results/significance.csv",
        models=NUMBERS["models"],
    output:
        numbers="results/numbers.json",
    log:
        "logs/numbers/numbers.log",
    conda:
        "../envs/cpu.yaml"
    params:
        code=code_fingerprint("numbers"),
        # Run times come from the benchmark files present when the job runs (not inputs: a missing
        # one must not rerun its training job); --forcerun numbers refreshes them.
        benchmarks_dir="benchmarks",
    script:
        "../workflow/scripts/numbers.py"
