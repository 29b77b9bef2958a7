"""Every rule's job runs in one of envs/*.yaml under `--software-deployment-method conda`, and that
env has what the job imports.

The rules are read from Snakemake's own parse of the Snakefile (the API), in a Python that does not
have cookproc installed, as a job in a conda env would not: the workflow must still load, and the
search path that Snakemake hands to script jobs must lead to this checkout's library (see the top
of rules/common.smk). What a script imports is read from its source and from the library files it
imports, followed transitively (cookproc.core.deps, the same machinery as the rules' `lib` inputs).
"""
from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from cookproc.core.deps import imported_library_files
from fixtures import REPO, make_workdir
from test_envs import ENV_FILES, GPU_STACK, normalise, read_env, third_party_imports

LIBRARY = REPO / "workflow" / "cookproc"
CPU_ENV = REPO / "envs" / "cpu.yaml"
TORCH_ENV = REPO / "envs" / "torch.yaml"

# Run with `python -S`: the .venv's site-packages is put on the path by hand, so its .pth files
# (the editable install of cookproc among them) are not read.
LOAD_RULES = r"""
import importlib.util, json, sys
from pathlib import Path
site_packages, snakefile, workdir, out = sys.argv[1:]
sys.path.append(site_packages)
assert importlib.util.find_spec("cookproc") is None, "cookproc is importable before the workflow is read"

from snakemake.api import SnakemakeApi
from snakemake.common import get_snakemake_searchpaths
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings

with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    workflow_api = api.workflow(snakefile=Path(snakefile), workdir=Path(workdir), resource_settings=ResourceSettings(),
                                config_settings=ConfigSettings(), storage_settings=StorageSettings())
    rules = []
    for rule in workflow_api._workflow.rules:  # private: the rules as declared
        basedir = Path(str(rule.basedir))
        kind = ("script" if rule.is_script else "shell" if rule.is_shell else "none" if rule.norun
                else "run" if rule.is_run else "other")
        rules.append({"name": rule.name, "kind": kind,
                      "script": str((basedir / rule.script).resolve()) if rule.is_script else None,
                      "conda": str((basedir / str(rule.conda_env)).resolve()) if rule.conda_env else None,
                      "wordnet": str(rule.input.wordnet) if "wordnet" in rule.input.keys() else None,
                      "outputs": [str(path) for path in rule.output]})
    import cookproc
    # What a script job's preamble appends to the job's sys.path (snakemake.script.PythonScript).
    searchpaths = get_snakemake_searchpaths()
Path(out).write_text(json.dumps({"rules": rules, "searchpaths": searchpaths, "cookproc": cookproc.__file__}))
"""


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    """The workflow as Snakemake reads it, in a Python without cookproc installed. The configured
    upstream folder does not exist, so that the download rule is defined too."""
    tmp = tmp_path_factory.mktemp("rule_envs")
    workdir = make_workdir(tmp / "work", tmp / "absent-upstream")
    out = tmp / "rules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}  # no PYTHONPATH
    proc = subprocess.run([sys.executable, "-S", "-c", LOAD_RULES, sysconfig.get_paths()["purelib"],
                           str(REPO / "Snakefile"), str(workdir), str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"the workflow does not load without cookproc installed:\n{proc.stderr[-6000:]}"
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def rules(parsed):
    rules = {rule["name"]: rule for rule in parsed["rules"]}
    assert {"download_upstream", "table5", "train_srl", "keyclips_neural", "all"} <= set(rules)
    return rules


def env_pins(path: str | Path) -> set[str]:
    return set(read_env(Path(path))[1])


@functools.cache
def imports_of(script: str) -> list[str]:
    """Third-party top-level modules the script can import: its own, and those of every library
    module it imports (transitively). The C source of a compiled library module is no import."""
    files = [Path(script)] + [p for p in imported_library_files(script, LIBRARY) if p.suffix == ".py"]
    return third_party_imports(files)


@functools.cache
def installed_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def providers(module: str) -> set[str]:
    """The (normalised) distributions that provide a top-level module, as installed in the .venv."""
    dists = installed_distributions()
    assert module in dists, f"{module!r} is imported but not installed"
    return {normalise(d) for d in dists[module]}


def test_the_library_reaches_jobs_from_this_checkout(parsed):
    # Rule files and script jobs import cookproc; the workflow puts workflow/ on the path itself.
    assert Path(parsed["cookproc"]) == LIBRARY / "__init__.py"
    assert str(REPO / "workflow") in parsed["searchpaths"]


def test_no_rule_runs_python_inside_snakemake(rules):
    # `run:` blocks execute in Snakemake's own process, where no conda env applies.
    assert {name for name, rule in rules.items() if rule["kind"] in ("run", "other")} == set()
    assert {name for name, rule in rules.items() if rule["kind"] == "none"} == {"all", "report_all", "video_all",
                                                                                     "corpus_all"}


def test_every_rule_with_a_job_has_an_env_of_envs(rules):
    for name, rule in rules.items():
        if rule["kind"] == "none":
            assert rule["conda"] is None, f"rule {name} has no job, so no env"
            continue
        assert rule["conda"], f"rule {name} has no conda: directive"
        assert Path(rule["conda"]) in ENV_FILES, f"rule {name}: conda env {rule['conda']} is not one of envs/*.yaml"


def test_a_rule_uses_the_torch_env_exactly_when_its_script_needs_more_than_the_cpu_env(rules):
    cpu = env_pins(CPU_ENV)
    wrong = {}
    for name, rule in sorted(rules.items()):
        if rule["kind"] != "script" or not rule["conda"]:  # a missing env fails the test above
            continue
        beyond_cpu = sorted(m for m in imports_of(rule["script"]) if not providers(m) & cpu)
        gpu_stack = sorted(m for m in imports_of(rule["script"]) if providers(m) & GPU_STACK)
        assert not gpu_stack or beyond_cpu, f"rule {name}: the cpu env provides {gpu_stack}"
        expected = TORCH_ENV if beyond_cpu else CPU_ENV
        if Path(rule["conda"]) != expected:
            wrong[name] = (Path(rule["conda"]).name, f"expected {expected.name}", beyond_cpu)
    assert not wrong, f"rules in the wrong env (env, expected, imports beyond the cpu env): {wrong}"
    # The scan sees the torch stack where it is, and its absence where it is not.
    assert Path(rules["train_srl"]["conda"]) == TORCH_ENV and Path(rules["table5"]["conda"]) == CPU_ENV


def test_every_module_a_rules_script_imports_is_in_its_env(rules):
    missing = {}
    for name, rule in sorted(rules.items()):
        if rule["kind"] != "script" or not rule["conda"]:  # a missing env fails the test above
            continue
        pins = env_pins(rule["conda"])
        lacking = [m for m in imports_of(rule["script"]) if not providers(m) & pins]
        if lacking:
            missing[name] = (Path(rule["conda"]).name, lacking)
    assert not missing, f"rules whose env lacks modules their script imports (env, modules): {missing}"
    assert "pyarrow" in imports_of(rules["table5"]["script"])  # the scan follows the library


def can_read_wordnet(script: str) -> bool:
    return LIBRARY / "data" / "wordnet.py" in imported_library_files(script, LIBRARY)


def test_a_rule_takes_the_workflows_wordnet_exactly_when_its_script_can_read_wordnet(rules):
    # A job reads WordNet only from its rule's `wordnet` input, the folder rule `wordnet` lays out
    # (cookproc.core.logs.script_logging hands it to cookproc.data.wordnet); without it WordNet raises.
    folder = rules["wordnet"]["outputs"]
    assert folder == ["resources/nltk_data"]
    wrong = {}
    for name, rule in sorted(rules.items()):
        if rule["kind"] != "script" or name == "wordnet":  # rule wordnet builds the folder
            continue
        reads = can_read_wordnet(rule["script"])
        takes = [rule["wordnet"]] if rule["wordnet"] else []
        if (takes == folder) != reads:
            wrong[name] = f"script can read WordNet: {reads}; wordnet input: {takes or None}"
    assert not wrong, f"rules whose wordnet input does not match their script: {wrong}"
    # The scan sees WordNet where it is, and its absence where it is not.
    assert rules["kiddon_train"]["wordnet"] and rules["video_tuples_corrected"]["wordnet"]
    assert not rules["table5"]["wordnet"] and not can_read_wordnet(rules["table5"]["script"])
