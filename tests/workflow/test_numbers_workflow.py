"""results/numbers.json of the fixture workflow (rule numbers) rendered into a doc with every kind of
block and checked, and the deployed models' cards against the table rows of the same systems. On toy
numbers: tests/unit/evaluation/test_numbers.py."""
import csv
import json
import subprocess
import sys

import pytest

from cookproc.evaluation import numbers as nb
from fixtures import REPO


def _csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def numbers_run(tmp_path_factory):
    from fixtures import make_workdir, run_snakemake, write_tiny_upstream

    base = tmp_path_factory.mktemp("numbers")
    upstream = write_tiny_upstream(base / "upstream")
    # The deployed systems in the tables, both deployed models built (the tuple extractor on spaCy's
    # parses: no tagger to train).
    workdir = make_workdir(base / "run", upstream, {
        "tables": {"keyclip_systems": ["upstream-neural", "srl-heur-spacy", "neural-text"],
                   "tuple_systems": ["upstream-srl-heur", "srl-heur-spacy", "supervised-text"],
                   "predicted_keyclips": ["upstream-neural"]},
        "supervised": {"srl_backend": "spacy"},
        "numbers": {"models": ["results/models/keyclips-neural-text", "results/models/tuples-supervised-text"]}})
    run_snakemake(workdir, "results/numbers.json")
    return workdir


FIXTURE_DOC = """# A doc with every kind of block

<!-- numbers:table4 systems=upstream-neural,neural-text -->
<!-- /numbers -->

<!-- numbers:table5 rows=upstream-srl-heur,supervised-text keyclips=upstream-neural -->
<!-- /numbers -->

<!-- numbers:table5 rows=upstream-srl-heur@oracle,upstream-srl-heur@upstream-neural values=prf cells=verbs:exact,verbs:fuzzy -->
<!-- /numbers -->

<!-- numbers:seeds systems=neural-text,neural-full -->
<!-- /numbers -->

<!-- numbers:seed-runs systems=neural-text -->
<!-- /numbers -->

<!-- numbers:intervals rows=upstream-neural,supervised-text@oracle/oracle/verbs/exact -->
<!-- /numbers -->

<!-- numbers:models models=keyclips-neural-text,tuples-supervised-text -->
<!-- /numbers -->

<!-- numbers:run-times jobs=benchmarks/deploy/keyclip_selector.tsv -->
<!-- /numbers -->

<!-- numbers:table4 systems=neural-text metrics=f1,seeds,threshold_objective,auc_roc,average_precision -->
<!-- /numbers -->

<!-- numbers:significance tables=table4,table5 -->
<!-- /numbers -->

<!-- numbers:stamp -->
<!-- /numbers -->

In prose: F1 <!-- n:table4 system=neural-text -->0<!-- /n -->, <!-- n:seeds system=neural-text -->0<!-- /n --> ± <!-- n:seeds system=neural-text stat=sd -->0<!-- /n -->; the card <!-- n:models model=tuples-supervised-text field=verbs -->0<!-- /n -->; the constant <!-- n:predicted-counting keyclips=upstream-neural -->0<!-- /n -->; <!-- n:table2 field=arguments column=items thousands=, -->0<!-- /n --> arguments.
"""


@pytest.mark.slow
def test_the_fixture_run_renders_every_block_and_the_check_names_a_changed_number(numbers_run, tmp_path):
    numbers = nb.read_numbers(numbers_run / "results/numbers.json")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert numbers["run"]["commit"] == head and len(numbers["run"]["date"]) == 10
    assert len(numbers["run"]["config_digest"]) == 32 and numbers["run"]["code"]
    assert numbers["table4"] == nb.read_rows(numbers_run / "results/table4.csv")  # every row and column, as is
    assert {"table5", "table4_ci", "table5_ci", "significance", "seeds"} <= set(numbers)
    assert numbers["table2"] == nb.read_rows(numbers_run / "results/table2.csv")  # Table 2 (rule dataset_stats)

    doc = tmp_path / "doc.md"
    doc.write_text(FIXTURE_DOC, encoding="utf-8")
    cmd = [sys.executable, "-m", "cookproc.evaluation.numbers", "--numbers", str(numbers_run / "results/numbers.json")]
    assert subprocess.run([*cmd[:3], "render", str(doc), *cmd[3:]], capture_output=True, text=True).returncode == 0
    text = doc.read_text(encoding="utf-8")
    neural = next(r for r in numbers["table4"] if r["system"] == "neural-text")
    # A mean over the fixture's two seeds, with the sd of each score.
    assert (f"| `neural-text` | {neural['accuracy']:.1f} ± {neural['accuracy_sd']:.1f} | "
            f"{neural['precision']:.1f} ± {neural['precision_sd']:.1f} |") in text
    assert text.count(f"*Numbers from run {head[:7]}") == 11
    # Threshold-free scores and the threshold objective next to the seeds label.
    assert (f"| `neural-text` | {neural['f1']:.1f} ± {neural['f1_sd']:.1f} | {neural['seeds']} | "
            f"{neural['threshold_objective']} | "
            f"{neural['auc_roc']:.3f} | {neural['average_precision']:.3f} |") in text
    # The declared family, every comparison once, none with p = 0.
    family = text[text.index("<!-- numbers:significance"):]
    family = family[:family.index("<!-- /numbers -->")]
    assert family.count("\n| Table ") == len(numbers["significance"]) > 0
    assert "| 0.0000 |" not in family and "`upstream-" in family
    assert f"F1 <!-- n:table4 system=neural-text -->{neural['f1']:.1f}<!-- /n -->," in text
    # Two seeds in the fixture: their mean and sample sd (results/keyclips/seed_summary.csv).
    seeds = {r["run"]: r for r in _csv(numbers_run / "results/keyclips/seed_summary.csv")
             if r["system"] == "neural-text"}
    assert {"seed0", "seed1", "mean", "std"} <= set(seeds)
    assert (f"-->{float(seeds['mean']['f1']):.2f}<!-- /n --> ± <!-- n:seeds system=neural-text stat=sd -->"
            f"{float(seeds['std']['f1']):.2f}<!-- /n -->;") in text
    # And each seed's run, as the seed summary holds it.
    for seed in ("0", "1"):
        run = seeds[f"seed{seed}"]
        assert f"| `neural-text` | {seed} | {run['accuracy']} | {run['precision']} | {run['recall']} | {run['f1']} |" in text
    # The predicted-counting constant, measured from Table 5's rows, equals the one rule table5 wrote.
    [constant] = [r for r in _csv(numbers_run / "results/table5_predicted_counting.csv")
                  if r["keyclips"] == "upstream-neural" and r["field"] == "verbs"]
    assert f"-->{float(constant['constant']):.2f}<!-- /n -->;" in text
    [arguments] = [r for r in _csv(numbers_run / "results/table2.csv") if r["field"] == "arguments"]
    assert f"thousands=, -->{int(arguments['items']):,}<!-- /n --> arguments." in text
    check = subprocess.run([*cmd[:3], "check", str(doc), *cmd[3:]], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr

    # One number of the models block (the card: seed 0's run) changed by hand: the check fails and names it.
    models = text.index("<!-- numbers:models")
    card_f1 = numbers["models"]["keyclips-neural-text"]["crossval"]["runs"][0]["f1"]
    f1 = f"F1 {card_f1:.1f}"
    wrong = f"F1 {card_f1 + 0.1:.1f}"
    doc.write_text(text[:models] + text[models:].replace(f1, wrong, 1), encoding="utf-8")
    check = subprocess.run([*cmd[:3], "check", str(doc), *cmd[3:]], capture_output=True, text=True)
    assert check.returncode == 1
    assert f"block numbers:models (line {text[:models].count(chr(10)) + 1})" in check.stderr
    assert f"is {wrong[3:]}, the numbers file gives {f1[3:]}" in check.stderr


@pytest.mark.slow
def test_each_deployed_model_card_equals_the_table_row_of_its_system(numbers_run):
    """The card states the cross-validated scores of the configuration and seed the model was built
    with: the selector's, the seed-0 row of results/keyclips/seed_summary.csv (not Table 4's row of
    neural-text, the mean over the fixture's two seeds) with that run's bootstrap intervals; the tuple
    extractor's, Table 5's supervised-text oracle cells with the intervals of results/table5_ci.csv
    (computed independently, by rule confidence_intervals)."""
    import yaml

    from cookproc.core.parquet_io import read_parquet
    from cookproc.core.schemas import CLIPS, KEYCLIPS
    from cookproc.evaluation.bootstrap import table4_intervals
    from cookproc.evaluation.tables import keyclip_flags

    results = numbers_run / "results"
    selector = json.loads((results / "models/keyclips-neural-text/model.json").read_text(encoding="utf-8"))
    [run] = selector["crossval"]["runs"]
    assert selector["training"]["seed"] == 0 and run["run"] == "seed 0"
    seeds = {r["run"]: r for r in _csv(results / "keyclips/seed_summary.csv") if r["system"] == "neural-text"}
    row = next(r for r in _csv(results / "table4.csv") if r["system"] == "neural-text")
    assert selector["crossval"]["system"] == "neural-text" and row["seeds"] == "mean over seeds 0, 1"
    for metric in ("accuracy", "precision", "recall", "f1"):
        assert f"{run[metric]:.2f}" == seeds["seed0"][metric], metric  # the summary's two decimals
        # Table 4's row is the mean over both seeds' runs, the card one of them.
        mean = (float(seeds["seed0"][metric]) + float(seeds["seed1"][metric])) / 2
        assert float(row[metric]) == pytest.approx(mean, abs=0.01), metric
    # The card's intervals are the seed-0 run's, from the same resamples as rule confidence_intervals.
    bootstrap = yaml.safe_load((numbers_run / "config.yaml").read_text(encoding="utf-8"))["tables"]["bootstrap"]
    clips = read_parquet(results / "dataset/clips.parquet", CLIPS)
    seed0 = read_parquet(results / "keyclips/seeds/neural-text.seed0.parquet", KEYCLIPS)
    intervals, _ = table4_intervals(clips, {"neural-text": keyclip_flags(clips, seed0, what="seed 0")},
                                    unit=bootstrap["unit"], resamples=bootstrap["resamples"], seed=bootstrap["seed"],
                                    confidence=bootstrap["confidence"])
    assert selector["crossval"]["intervals"]["metrics"] == {r["metric"]: [r["ci_low"], r["ci_high"]]
                                                           for r in intervals.to_pylist()}
    card = (results / "models/keyclips-neural-text/MODEL_CARD.md").read_text(encoding="utf-8")
    assert (f"| seed 0 | {run['accuracy']:.1f} | {run['precision']:.1f} | {run['recall']:.1f} | "
            f"{run['f1']:.1f} |") in card
    # What the weights saw and what chose the settings, by recipe.
    training = selector["training"]
    assert training["train_recipes"] and training["val_recipes"]
    assert not set(training["train_recipes"]) & set(training["val_recipes"])
    assert (f"fitted on the {training['n_train']} clips of the {len(training['train_recipes'])} recipes outside "
            "inner validation") in card
    assert ", ".join(training["val_recipes"]) in card

    extractor = json.loads((results / "models/tuples-supervised-text/model.json").read_text(encoding="utf-8"))
    cells = {(c["field"], c["mode"], c["metric"]): c for c in extractor["crossval"]["cells"]}
    table5 = {(r["field"], r["mode"]): r for r in _csv(results / "table5.csv")
              if r["system"] == "supervised-text" and r["keyclips"] == "oracle"}
    ci5 = {(r["field"], r["mode"], r["metric"]): r for r in _csv(results / "table5_ci.csv")
           if r["system"] == "supervised-text" and r["keyclips"] == "oracle"}
    card = (results / "models/tuples-supervised-text/MODEL_CARD.md").read_text(encoding="utf-8")
    for field, mode in (("verbs", "exact"), ("arguments", "partial")):
        for metric in ("precision", "recall", "f1"):
            cell = cells[(field, mode, metric)]
            # Equal to float precision: the card's scorer sums the clips in another order than Table 5's.
            assert cell["value"] == pytest.approx(float(table5[(field, mode)][metric]), rel=1e-12), (field, metric)
            ci = ci5[(field, mode, metric)]
            assert [cell["ci_low"], cell["ci_high"]] == pytest.approx([float(ci["ci_low"]), float(ci["ci_high"])],
                                                                      rel=1e-12)
        f1 = cells[(field, mode, "f1")]
        assert f"{f1['value']:.1f} [{f1['ci_low']:.1f}, {f1['ci_high']:.1f}] |" in card
    assert ", ".join(extractor["training"]["val_recipes"]) in card
