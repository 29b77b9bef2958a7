"""Resources that jobs read at run time come from folders of the workflow, never from an
environment's own install: WordNet from the folder rule `wordnet` lays out (rules/resources.smk),
read by NLTK's own reader; nothing the workflow runs points into the .venv."""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from snakemake.iocontainers import Namedlist

from cookproc.data import wordnet
from cookproc.core.logs import NLTK_DATA_ENV, script_logging
from fixtures import REPO, make_workdir, run_snakemake, write_tiny_upstream

# Python whose path APIs point into the running environment (the .venv or a conda env).
ENVIRONMENT_PATHS = {("sys", "prefix"), ("sys", "base_prefix"), ("sys", "exec_prefix"), ("site", "getsitepackages"),
                     ("site", "getusersitepackages"), ("sysconfig", "get_paths"), ("sysconfig", "get_path")}


def workflow_python_files():
    return sorted((REPO / "workflow").rglob("*.py"))


def test_no_code_of_the_workflow_reads_from_the_python_environments_folders():
    found = []
    for path in workflow_python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and (node.value.id, node.attr) in ENVIRONMENT_PATHS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value.id}.{node.attr}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.search(r"site-packages|(^|[^\w`])\.venv/(?!bin/)", node.value):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
    assert not found, f"code that reads from the Python environment's folders: {found}"


def test_only_cookproc_wordnet_uses_nltk_and_never_its_global_wordnet():
    users = {}
    for path in workflow_python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if name.split(".")[0] == "nltk":
                    users.setdefault(path.relative_to(REPO).as_posix(), set()).add(name)
    # The reader class and the data path: not nltk.corpus.wordnet or WordNetLemmatizer, whose
    # loader searches NLTK's default path, <sys.prefix>/nltk_data (the .venv's) included.
    assert users == {"workflow/cookproc/data/wordnet.py": {"nltk.data", "nltk.corpus.reader.wordnet"}}


def test_rules_profiles_and_envs_name_no_venv_path():
    files = [REPO / "Snakefile", *(REPO / "rules").glob("*.smk"), *(REPO / "envs").glob("*.yaml"),
             *(REPO / "profiles").rglob("*.yaml")]
    found = [f"{path.relative_to(REPO)}:{i}" for path in files
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\.venv|site-packages|sys\.prefix", line.split("#", 1)[0])]
    assert not found, f"paths into the .venv outside comments: {found}"


@pytest.fixture(scope="module")
def rule_folder(tmp_path_factory):
    """The nltk_data folder as rule `wordnet` lays it out, in a fresh working directory."""
    tmp = tmp_path_factory.mktemp("resources")
    workdir = make_workdir(tmp / "work", write_tiny_upstream(tmp / "upstream"))
    run_snakemake(workdir, "resources/nltk_data", timeout=600)
    assert (workdir / "logs" / "resources" / "wordnet.log").is_file()
    return workdir / "resources" / "nltk_data"


# NLTK's own loader and lemmatizer with nothing on its path but the rule's folder.
NLTK_ON_THE_FOLDER = r"""
import json, sys
import nltk
nltk.data.path[:] = [sys.argv[1]]
from nltk.corpus import wordnet as wn
from nltk.stem import WordNetLemmatizer
print(json.dumps({"root": str(wn.root), "lemma": WordNetLemmatizer().lemmatize("chopped", "v"),
                  "lexname": wn.synsets("chop", pos="v")[0].lexname(), "nouns": len(list(wn.all_synsets("n")))}))
"""


@pytest.mark.slow
def test_the_rules_folder_serves_nltks_wordnet_reader_on_a_clean_data_path(rule_folder):
    env = {k: v for k, v in os.environ.items() if k not in ("NLTK_DATA", NLTK_DATA_ENV)}
    env["HOME"] = str(rule_folder.parent)  # no ~/nltk_data either
    proc = subprocess.run([sys.executable, "-c", NLTK_ON_THE_FOLDER, str(rule_folder)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    assert Path(got["root"]) == rule_folder / "corpora" / "wordnet"
    assert got["lemma"] == "chop"
    assert got["lexname"] == "verb.contact"  # the lexnames file Debian lacks, written by the rule
    assert got["nouns"] == 82115  # every noun synset of WordNet 3.0


@pytest.mark.slow
def test_cookproc_reads_wordnet_from_the_configured_folder_only(rule_folder, tmp_path, monkeypatch):
    monkeypatch.setenv(NLTK_DATA_ENV, str(rule_folder))
    assert wordnet.wordnet().root.path == str(rule_folder / "corpora" / "wordnet")
    assert wordnet.verb_lemma("sliced") == "slice" and wordnet.has_verb_synset("whisk")
    # A folder without WordNet fails, whatever the environment has installed (the .venv may hold a
    # copy under <sys.prefix>/nltk_data, on NLTK's default path).
    monkeypatch.setenv(NLTK_DATA_ENV, str(tmp_path))
    with pytest.raises(RuntimeError, match=re.escape(str(tmp_path / "corpora" / "wordnet"))):
        wordnet.has_verb_synset("simmer")
    # In a job whose rule has no wordnet input.
    monkeypatch.setenv(NLTK_DATA_ENV, "")
    with pytest.raises(RuntimeError, match="no `wordnet` input"):
        wordnet.verb_lemma("stirred")


class FakeJob:
    """What script_logging reads of the `snakemake` object of a script job."""

    def __init__(self, log, **inputs):
        self.log, self.input, self.rule = Namedlist(log), Namedlist(fromdict=inputs), "some_rule"


def test_script_logging_hands_the_rules_wordnet_input_to_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv(NLTK_DATA_ENV, "elsewhere")  # and back to what it was after the test
    with script_logging(FakeJob([str(tmp_path / "a.log")], clips="x.parquet", wordnet="resources/nltk_data")):
        assert os.environ[NLTK_DATA_ENV] == "resources/nltk_data"
    with script_logging(FakeJob([str(tmp_path / "b.log")], clips="x.parquet")):
        assert os.environ[NLTK_DATA_ENV] == ""
        with pytest.raises(RuntimeError, match="no `wordnet` input"):
            wordnet.wordnet()


def test_a_missing_wordnet_source_says_what_to_install(tmp_path):
    with pytest.raises(FileNotFoundError, match="wordnet-base.*resources.wordnet_source"):
        wordnet.install(tmp_path / "nowhere", tmp_path / "nltk_data")
    assert not (tmp_path / "nltk_data").exists()
