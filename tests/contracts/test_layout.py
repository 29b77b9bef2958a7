"""The library's import contracts (CONTRIBUTING.md, Layout): the packages show the DAG, and no import
runs back up it.

Read from the source with `ast` (imports at module level and inside functions alike, relative ones
resolved), so a lazy import cannot hide an edge. The layering:

    core  <-  data, scoring  <-  learn  <-  stages (srl, kiddon, video, keyclips, supervised, captions)
    evaluation above the stages, app on top (evaluation never imports it); a stage imports only the
    layers below it (no other stage, no evaluation, no app); nothing imports snakemake; no two
    modules import each other, directly or round a longer loop.

Each rule is a function of the import edges, so the tests below also run it on a synthetic
offending library (the check must fire, not only pass).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cookproc.core.deps import _library_imports
from fixtures import REPO

LIBRARY = REPO / "workflow" / "cookproc"
STAGES = {"srl", "kiddon", "video", "keyclips", "supervised", "captions"}
PACKAGES = {"core", "data", "scoring", "learn", "evaluation", "app"} | STAGES
# The cookproc packages each lower package may import (itself always allowed).
MAY_IMPORT = {"core": set(), "data": {"core"}, "scoring": {"core"}, "learn": {"core", "data"}}
#: What a stage may import: the layers below the stages (never another stage, evaluation or the app).
STAGE_MAY_IMPORT = {"core", "data", "scoring", "learn"}
LARGEST_MODULE_LINES = 350


def library_modules(library: Path = LIBRARY) -> list[Path]:
    return sorted(library.rglob("*.py"))


def package_of(path: Path, library: Path = LIBRARY) -> str:
    """The top-level cookproc package of a library file ('' for cookproc/__init__.py)."""
    parts = path.relative_to(library).parts
    return parts[0] if len(parts) > 1 else ""


def import_edges(library: Path = LIBRARY) -> list[tuple[str, str, str]]:
    """(importing package, imported package, 'file -> module') for every cookproc import that
    crosses a package boundary."""
    edges = {}
    for path in library_modules(library):
        package = list(path.parent.relative_to(library).parts)
        source = package_of(path, library)
        for name in _library_imports(path, package):
            parts = name.split(".")
            if len(parts) >= 2 and parts[1] != source:
                # One edge per file and imported package, named by the first module it imports.
                edges.setdefault((source, parts[1], path), f"{path.relative_to(library.parent)} -> {name}")
    return sorted((source, target, edge) for (source, target, _), edge in edges.items())


def violations(allowed, library: Path = LIBRARY) -> list[str]:
    return [edge for source, target, edge in import_edges(library) if not allowed(source, target)]


def module_of(path: Path, library: Path = LIBRARY) -> str:
    """The dotted name of a library file (a package by its ``__init__.py``)."""
    parts = list(path.relative_to(library.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(library: Path = LIBRARY) -> dict[str, set[str]]:
    """{module: the cookproc modules it imports} (a name that is an attribute counts as its module;
    package ``__init__``s, which only hold docstrings, are left out of the graph)."""
    modules = {module_of(p, library): p for p in library_modules(library) if p.name != "__init__.py"}
    graph = {}
    for name, path in modules.items():
        package = list(path.parent.relative_to(library).parts)
        imported = set()
        for target in _library_imports(path, package):
            while target and target not in modules:  # from a.b import name: the module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                imported.add(target)
        graph[name] = imported
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules that import each other, directly or round a longer loop: each strongly connected
    component of more than one module (Tarjan's algorithm), sorted."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def stage_imports_only_below(source: str, target: str) -> bool:
    return source not in STAGES or target in STAGE_MAY_IMPORT


def synthetic_library(root: Path, files: dict[str, str]) -> Path:
    """A cookproc folder under ``root`` holding ``files`` ({path inside cookproc: source})."""
    library = root / "cookproc"
    for rel, source in {"__init__.py": "", **files}.items():
        path = library / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name != "__init__.py":
            (path.parent / "__init__.py").touch()
        path.write_text(source, encoding="utf-8")
    return library


def test_the_scan_sees_the_library():
    edges = import_edges()
    assert {source for source, _, _ in edges} >= {"data", "learn", "keyclips", "supervised", "app"}
    assert ("keyclips", "learn") in {(source, target) for source, target, _ in edges}


def test_every_module_lives_in_a_package_of_the_layering():
    packages = {package_of(path) for path in library_modules()} - {""}
    unplaced = sorted(packages - PACKAGES)
    assert not unplaced, (f"cookproc packages {unplaced} have no place in the layering: add them to "
                          "tests/contracts/test_layout.py and to CONTRIBUTING.md's Layout")
    flat = [str(p.relative_to(REPO)) for p in library_modules() if package_of(p) == "" and p.name != "__init__.py"]
    assert not flat, f"modules at the top of cookproc (put each in a package): {flat}"


def test_no_stage_imports_another_stage():
    bad = violations(lambda source, target: not (source in STAGES and target in STAGES))
    assert not bad, "a stage imports another stage (move the shared code to cookproc.learn or data):\n" + "\n".join(bad)


def test_stages_import_only_the_layers_below_them():
    """Evaluation scores the stages' outputs and the app runs them: a stage importing either runs
    back up the DAG (the scorer that stages share lives in cookproc.scoring, below them)."""
    bad = violations(stage_imports_only_below)
    assert not bad, (f"a stage imports outside {sorted(STAGE_MAY_IMPORT)} (move what it needs down a layer):\n"
                     + "\n".join(bad))


@pytest.mark.parametrize("offender, target", [
    ("from cookproc.evaluation.tables import table4\n", "evaluation"),
    ("def lazy():\n    from ..evaluation import bootstrap\n", "evaluation"),
    ("import cookproc.app.cli\n", "app"),
    ("from cookproc.keyclips.lexical import token_matrix\n", "keyclips"),
])
def test_the_stage_rule_fires_on_an_offending_import(tmp_path, offender, target):
    library = synthetic_library(tmp_path, {"video/tuples.py": offender, "evaluation/tables.py": "",
                                           "evaluation/bootstrap.py": "", "app/cli.py": "",
                                           "keyclips/lexical.py": "", "scoring/metrics.py": "",
                                           "video/fine.py": "from cookproc.scoring.metrics import x\n"})
    bad = violations(stage_imports_only_below, library)
    assert len(bad) == 1 and bad[0].startswith("cookproc/video/tuples.py -> cookproc." + target), bad


def test_evaluation_never_imports_the_app():
    """The app (user files, documents, corpora) sits on top: scoring never depends on it."""
    bad = violations(lambda source, target: not (source == "evaluation" and target == "app"))
    assert not bad, "cookproc.evaluation imports cookproc.app:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_lower_packages_import_only_below_them(package):
    bad = violations(lambda source, target: source != package or target in MAY_IMPORT[package])
    allowed = ", ".join(sorted(MAY_IMPORT[package])) or "no other cookproc package"
    assert not bad, f"cookproc.{package} may import {allowed}, but:\n" + "\n".join(bad)


def test_the_lower_package_rule_fires_on_an_offending_import(tmp_path):
    library = synthetic_library(tmp_path, {"scoring/metrics.py": "from cookproc.learn import folds\n",
                                           "learn/folds.py": ""})
    bad = violations(lambda source, target: source != "scoring" or target in MAY_IMPORT["scoring"], library)
    assert bad == ["cookproc/scoring/metrics.py -> cookproc.learn"]


def test_no_modules_import_each_other():
    """No import cycle, of two modules or more: a cycle makes import order matter and hides which
    module is the lower one."""
    graph = module_imports()
    assert graph["cookproc.evaluation.render"], "the scan sees no imports"
    cycles = import_cycles(graph)
    assert not cycles, "modules that import each other (move what both need into a third):\n" + "\n".join(
        " <-> ".join(cycle) for cycle in cycles)


def test_the_cycle_check_fires_on_two_and_three_modules_in_a_loop(tmp_path):
    library = synthetic_library(tmp_path, {
        "evaluation/a.py": "from cookproc.evaluation.b import f\n",
        "evaluation/b.py": "def g():\n    from .a import h\n",  # lazy and relative: still an edge
        "core/x.py": "import cookproc.core.y\n", "core/y.py": "from cookproc.core import z\n",
        "core/z.py": "from cookproc.core.x import name\n", "core/leaf.py": "import cookproc.core.x\n"})
    assert import_cycles(module_imports(library)) == [
        ["cookproc.core.x", "cookproc.core.y", "cookproc.core.z"], ["cookproc.evaluation.a", "cookproc.evaluation.b"]]


def test_the_library_never_imports_snakemake():
    bad = []
    for path in library_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            bad += [f"{path.relative_to(REPO)}:{node.lineno} -> {name}" for name in names
                    if name.split(".")[0] == "snakemake"]
    assert not bad, "the library imports snakemake (scripts and rule files may; the library may not):\n" + "\n".join(bad)


def test_largest_module_is_under_the_limit():
    lengths = {str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines()) for p in library_modules()}
    over = sorted(((n, path) for path, n in lengths.items() if n >= LARGEST_MODULE_LINES), reverse=True)
    assert not over, f"modules of {LARGEST_MODULE_LINES} lines or more: " + ", ".join(f"{p} ({n})" for n, p in over)


def test_contributing_maps_every_package_and_module():
    """CONTRIBUTING.md's table of packages names each package of the library and each of its modules."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in
            re.finditer(r"^\s*\| `(\w+)/` \|(.*)\|\s*$", text, re.M)}
    assert set(rows) == PACKAGES, f"packages in the table {sorted(rows)}, in the library {sorted(PACKAGES)}"
    missing = [f"{package}/{path.stem}" for package in sorted(PACKAGES)
               for path in sorted((LIBRARY / package).glob("*.py"))
               if path.stem != "__init__" and f"`{path.stem}`" not in rows[package]]
    assert not missing, f"modules CONTRIBUTING.md's table does not name: {missing}"
