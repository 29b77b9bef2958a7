"""The shipped presets (presets/*.yaml) and the default target `all`, planned on the tiny fixture.

`snakemake --configfile presets/paper.yaml -c2` is the README's first command: it must build
Tables 2, 4 and 5 and Figure 3 without training anything. The dry runs here check what each preset
plans (the real workflow, the fixture upstream); the paper preset's run time on the real benchmark
is measured in docs/benchmarks.md.
"""
import re

import pytest
import yaml

from cookproc.core.config_schema import validate_config
from fixtures import REPO, deep_merge, make_workdir, run_snakemake, write_tiny_upstream

PRESETS = REPO / "presets"

# Rules that fit a model to annotations or train a network (minutes to hours on the real data).
TRAINING_RULES = {"train_srl", "keyclips_finetune", "supervised_finetune", "keyclips_tfidf",
                  "supervised_keyclips", "supervised_tuples"}
TRAINING_PREFIXES = ("keyclips_neural", "supervised_")
PAPER_OUTPUTS = ["results/table2.csv", "results/figures/figure3_verbs.png", "results/figures/figure3_arguments.png",
                 "results/table4.csv", "results/table4.md", "results/table5.csv", "results/table5.md"]


def is_training(rule):
    return rule in TRAINING_RULES or rule.startswith(TRAINING_PREFIXES)


def planned(workdir, *args, target="all"):
    """{rule: [outputs]} of the jobs a dry run of ``target`` (the default target) plans in ``workdir``."""
    # The target first: --configfile takes every word after it.
    proc = run_snakemake(workdir, "--dry-run", *([] if target == "all" else [target]), *args)
    jobs, rule = {}, None
    for line in proc.stdout.splitlines():
        m = re.match(r"^(?:local)?rule (\S+):$", line)
        if m:
            rule = m.group(1)
            jobs.setdefault(rule, [])
        m = re.match(r"^\s+output: (.*)$", line)
        if m and rule:
            jobs[rule] += [out.strip() for out in m.group(1).split(",")]
    planned_target = "all" in jobs if target == "all" else any(target in outs for outs in jobs.values())
    assert planned_target, proc.stdout[-3000:]
    # Snakemake prints a rule's jobs in no fixed order: compare what is planned, not the order.
    return {rule: sorted(outputs) for rule, outputs in jobs.items()}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A working directory whose config.yaml is the repository's, pointed at the fixture upstream."""
    tmp = tmp_path_factory.mktemp("presets")
    return make_workdir(tmp / "work", write_tiny_upstream(tmp / "upstream"))


def merged(name):
    """config.yaml with the preset merged over it as Snakemake merges a --configfile (dicts key by
    key, lists and scalars replaced), validated: unknown keys and bad values are refused."""
    config = deep_merge(yaml.safe_load((REPO / "config.yaml").read_text()),
                        yaml.safe_load((PRESETS / f"{name}.yaml").read_text()))
    validate_config(config)
    return config


def selection_blocks(config, path=()):
    """(path, block) of every `selection:` block with candidate sets in the config."""
    for key, value in config.items():
        if isinstance(value, dict):
            if key == "selection" and "candidates" in value:
                yield path + (key,), value
            else:
                yield from selection_blocks(value, path + (key,))


@pytest.mark.parametrize("name", sorted(p.stem for p in PRESETS.glob("*.yaml")))
def test_preset_is_a_valid_config_over_config_yaml(name):
    tables = merged(name)["tables"]
    # Every predicted key-clip source is scored in Table 4 too.
    assert set(tables["predicted_keyclips"]) <= set(tables["keyclip_systems"])


def test_fixed_selection_preset_leaves_no_candidate_set_while_config_yaml_declares_them():
    default = dict(selection_blocks(yaml.safe_load((REPO / "config.yaml").read_text())))
    fixed = dict(selection_blocks(merged("fixed-selection")))
    assert set(default) == set(fixed) and len(default) == 3  # neural, supervised key clips, supervised tuples
    for path, block in default.items():
        assert any(v is not None for v in block["candidates"].values()), path
        assert fixed[path]["candidates"] and all(v is None for v in fixed[path]["candidates"].values()), path


def test_family_folds_preset_changes_the_fold_grouping_only():
    default = yaml.safe_load((REPO / "config.yaml").read_text())
    validate_config(default)  # fills in the schema's defaults, as merged() does
    family = merged("family-folds")
    assert default["keyclips"]["folds"]["grouping"] == "recipe"
    assert family["keyclips"]["folds"]["grouping"] == "family"
    family["keyclips"]["folds"]["grouping"] = "recipe"
    assert family == default


def test_paper_preset_builds_the_tables_and_figure_without_training(workdir):
    jobs = planned(workdir, "--configfile", str(PRESETS / "paper.yaml"))
    training = sorted(rule for rule in jobs if is_training(rule))
    assert not training, f"the paper preset trains: {training}"
    outputs = {out for outs in jobs.values() for out in outs}
    assert set(PAPER_OUTPUTS) <= outputs
    # Nothing of the SRL tagger: no EWT corpus, no tagging, no agreement of the tagger.
    assert not {"srl_training_data", "srl_parse_tagger"} & set(jobs)
    assert "results/srl/agreement-tagger.tsv" not in outputs
    # The systems it promises: upstream's, spaCy SRL, visual and fusion; not the report's pages
    # (report.build_pages: false), which `snakemake report_all` builds on request.
    assert {"import_upstream_neural", "import_upstream_srl", "srl_parse_spacy",
            "video_tuples_paper", "video_tuples_corrected"} <= set(jobs)
    assert not [rule for rule in jobs if rule.startswith("report_")]


def test_paper_preset_procedures_of_your_own_file_train_nothing(tmp_path):
    # A file of one's own with the paper preset: SRL gives the tuples and decides the key clips.
    work = make_workdir(tmp_path / "work", write_tiny_upstream(tmp_path / "upstream"))
    (work / "data" / "user").mkdir(parents=True)
    (work / "data" / "user" / "soup.txt").write_text("Chop the onions.\nHeat the oil.\n", encoding="utf-8")
    jobs = planned(work, "--configfile", str(PRESETS / "paper.yaml"), target="results/procedures/soup.json")
    assert "procedures_extract" in jobs
    assert not [rule for rule in jobs if is_training(rule) or rule.startswith("deploy_")], sorted(jobs)
    # Without the preset the same file uses both trained models, built on demand.
    jobs = planned(work, target="results/procedures/soup.json")
    assert {"deploy_keyclip_selector", "deploy_tuple_extractor", "train_srl"} <= set(jobs)


def test_full_preset_trains_our_srl_and_the_neural_selectors_but_no_supervised_system(workdir):
    jobs = planned(workdir, "--configfile", str(PRESETS / "full.yaml"))
    assert {"train_srl", "srl_parse_tagger", "keyclips_finetune", "keyclips_neural_full", "kiddon_train"} <= set(jobs)
    assert not [rule for rule in jobs if rule.startswith("supervised")]
    assert "results/srl/agreement-tagger.tsv" in {out for outs in jobs.values() for out in outs}


def test_default_target_without_a_preset_builds_every_configured_system(workdir):
    jobs = planned(workdir)
    outputs = {out for outs in jobs.values() for out in outs}
    assert set(PAPER_OUTPUTS) <= outputs
    assert {"results/significance.csv", "results/srl/agreement-tagger.tsv",
            "results/srl/training_data/alignment.txt"} <= outputs
    assert {"train_srl", "supervised_finetune", "keyclips_tfidf"} <= set(jobs)
    assert {"report_tables", "report_per_recipe", "report_errors_tuples"} <= set(jobs)
