"""results/numbers.json and the docs' result tables rendered from it (cookproc.evaluation.numbers,
cookproc.evaluation.render), and the deployed models' cards against the table rows of the same systems."""
import csv
import json
import subprocess
import sys

import pytest

from cookproc.evaluation import numbers as nb
from cookproc.evaluation import render
from cookproc.core.errors import InputError
from fixtures import REPO

RUN = {"commit": "0123456789abcdef", "dirty": False, "date": "2026-12-04", "config_digest": "c0ffee", "code": "d1"}


def toy_numbers():
    table4 = [{"system": "upstream-neural", "n_clips": 30, "accuracy": 77.66, "precision": 51.04, "recall": 75.3,
               "f1": 60.84}]
    table5 = [{"system": "srl-heur", "keyclips": k, "counting": c, "field": f, "mode": m, "n_clips": 9,
               "precision": 10.0 + i, "recall": 20.0 + i, "f1": 30.0 + i}
              for i, (k, c, f, m) in enumerate([("oracle", "oracle", "verbs", "exact"),
                                                 ("oracle", "oracle", "arguments", "partial"),
                                                 ("up", "predicted", "verbs", "exact"),
                                                 ("up", "predicted", "arguments", "partial"),
                                                 ("up", "predicted-masked", "verbs", "exact"),
                                                 ("up", "predicted-masked", "arguments", "partial")])]
    return {"format": nb.FORMAT, "format_version": nb.FORMAT_VERSION, "run": RUN, "models": {}, "run_times": {},
            "table4": table4, "table5": table5}


TEMPLATE = """# Results

Prose with a number that is not in a block: 12.5.

<!-- numbers:table4 systems=upstream-neural -->
<!-- /numbers -->

<!-- numbers:table5 rows=srl-heur keyclips=up -->
<!-- /numbers -->
"""


def test_csv_cells_keep_their_type_and_every_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("system,n_clips,f1,significant,new_column\nx,3,60.5,True,\n", encoding="utf-8")
    assert nb.read_rows(path) == [{"system": "x", "n_clips": 3, "f1": 60.5, "significant": True, "new_column": None}]
    path.write_text("system,f1\nx,1,2\n", encoding="utf-8")
    with pytest.raises(InputError, match="t.csv, line 2: more cells than columns"):
        nb.read_rows(path)


def test_a_rendered_text_checks_and_a_changed_number_is_named():
    numbers = toy_numbers()
    text = render.render_text(TEMPLATE, numbers, "doc.md")
    assert "| `upstream-neural` | 77.7 | 51.0 | 75.3 | 60.8 |" in text
    # Predicted key clips: the paper's counting, then masked, in one cell.
    assert "| `srl-heur` | 32.0 / 34.0 | 33.0 / 35.0 |" in text
    assert text.count("*Numbers from run 0123456, 2026-12-04 (`results/numbers.json`).*") == 2
    assert "12.5" in text and render.render_text(text, numbers) == text  # rendering again changes nothing
    assert render.check_text(text, numbers, "doc.md") == []

    changed = text.replace("| 51.0 |", "| 51.1 |")
    [problem] = render.check_text(changed, numbers, "doc.md")
    assert problem.startswith("doc.md, block numbers:table4 (line 5): ") and "is 51.1, the numbers file gives 51.0" in problem
    # The numbers file moves on (another run): every block's stamp and changed number are named.
    numbers["run"] = {**RUN, "commit": "fedcba9876543210", "date": "2026-12-05"}
    numbers["table5"][2]["f1"] = 40.0
    problems = render.check_text(text, numbers, "doc.md")
    assert len(problems) == 2 and all("stamp" in p and "fedcba9, 2026-12-05" in p for p in problems)
    assert "is 32.0, the numbers file gives 40.0" in problems[1]


def test_a_hand_written_block_fails_the_check_until_rendered():
    numbers = toy_numbers()
    text = TEMPLATE.replace("<!-- numbers:table4 systems=upstream-neural -->\n",
                            "<!-- numbers:table4 systems=upstream-neural -->\n*Numbers from earlier runs, to be "
                            "regenerated.*\n\n| system | Acc | P | R | F1 |\n|---|---|---|---|---|\n"
                            "| `upstream-neural` | 77.7 | 51.0 | 75.3 | 60.8 |\n")
    problems = render.check_text(text, numbers, "README.md")
    assert problems[0].startswith("README.md, block numbers:table4") and "Numbers from earlier runs" in problems[0]
    assert render.check_text(render.render_text(text, numbers), numbers) == []


def test_a_block_that_asks_for_missing_numbers_is_an_error_naming_it():
    numbers = toy_numbers()
    with pytest.raises(render.BlockError, match=r"doc.md, block numbers:table4 \(line 1\): table4: 0 rows with "
                                            r"\{'system': 'nope'\}"):
        render.render_text("<!-- numbers:table4 systems=nope -->\n<!-- /numbers -->\n", numbers, "doc.md")
    with pytest.raises(render.BlockError, match="unknown block kind 'tabel4'"):
        render.render_text("<!-- numbers:tabel4 systems=x -->\n<!-- /numbers -->\n", numbers, "doc.md")
    assert "holds no seeds" in render.check_text("<!-- numbers:seeds systems=x -->\n<!-- /numbers -->\n", numbers)[0]


@pytest.mark.parametrize("doc", ["README.md", "docs/results.md", "docs/methods.md", "docs/benchmarks.md"])
def test_the_docs_blocks_are_well_formed_and_say_which_run_they_come_from(doc):
    text = (REPO / doc).read_text(encoding="utf-8")
    assert render.lint_text(text, doc) == []
    if doc in ("README.md", "docs/results.md", "docs/benchmarks.md"):
        assert render.blocks(text), f"{doc} states result numbers: they belong in numbers blocks"
    # Not rendered from a numbers file yet (no full run in this change): each block says so.
    for match in render.blocks(text):
        first = match["body"].splitlines()[0]
        assert first.startswith("*Numbers from run ") or "to be regenerated" in first, first


def test_lint_names_a_malformed_block():
    problems = render.lint_text("<!-- numbers:table4 system=x -->\n| a |\n<!-- /numbers -->\n"
                            "<!-- numbers:table5 rows=x -->\nno stamp\n", "doc.md")
    assert problems[0] == "doc.md: 2 blocks opened, 1 closed by '<!-- /numbers -->'"
    assert "unknown attributes ['system'] of a table4 block" in problems[1]
    assert "the first line must be a stamp" in problems[2]


def test_the_command_renders_checks_and_exits_non_zero_on_a_difference(tmp_path):
    path, doc = tmp_path / "numbers.json", tmp_path / "doc.md"
    path.write_text(nb.dumps(toy_numbers()), encoding="utf-8")
    doc.write_text(TEMPLATE, encoding="utf-8")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "cookproc.evaluation.numbers", *args, str(doc), "--numbers", str(path)],
                              capture_output=True, text=True)

    assert run("check").returncode == 1
    assert run("render").returncode == 0 and run("check").returncode == 0
    doc.write_text(doc.read_text(encoding="utf-8").replace("60.8", "60.9"), encoding="utf-8")
    proc = run("check")
    assert proc.returncode == 1 and "block numbers:table4" in proc.stderr and "is 60.9" in proc.stderr


def test_the_file_is_byte_identical_for_the_same_results(tmp_path):
    table = tmp_path / "table4.csv"
    table.write_text("system,n_clips,accuracy,precision,recall,f1\nb,3,1.5,2.0,3.0,4.25\na,3,1,2,3,4\n",
                     encoding="utf-8")
    first = nb.dumps(nb.collect({"table4": table}, {}, [tmp_path / "missing.tsv"], RUN))
    assert first == nb.dumps(nb.collect({"table4": table}, {}, [], dict(reversed(list(RUN.items())))))
    assert [r["system"] for r in json.loads(first)["table4"]] == ["b", "a"]  # the CSV's order
    assert json.loads(first)["run_times"] == {}  # a benchmark file not there is left out
    with pytest.raises(ValueError, match="unknown tables"):
        nb.collect({"table6": table}, {}, [], RUN)


def test_config_digest_follows_the_settings_not_their_order():
    assert nb.config_digest({"a": 1, "b": {"c": [1, 2]}}) == nb.config_digest({"b": {"c": [1, 2]}, "a": 1})
    assert nb.config_digest({"a": 1}) != nb.config_digest({"a": 2})


# --- the fixture workflow: numbers file, rendering, and cards equal table rows ------------------

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
