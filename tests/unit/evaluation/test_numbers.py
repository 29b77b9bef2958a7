"""results/numbers.json and the docs' result tables rendered from it (cookproc.evaluation.numbers,
cookproc.evaluation.render), on toy numbers. On the fixture workflow's own numbers, and the deployed
models' cards against the table rows of the same systems: tests/workflow/test_numbers_workflow.py;
the docs' blocks: tests/contracts/test_docs_numbers.py."""
import json
import subprocess
import sys

import pytest

from cookproc.evaluation import numbers as nb
from cookproc.evaluation import render
from cookproc.core.errors import InputError

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
