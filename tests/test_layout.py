"""The library's import contracts (CONTRIBUTING.md, Layout): the packages show the DAG, and no import
runs back up it.

Read from the source with `ast` (imports at module level and inside functions alike, relative ones
resolved), so a lazy import cannot hide an edge. The layering:

    core  <-  data  <-  learn  <-  stages (srl, kiddon, video, keyclips, supervised)
    evaluation above the stages, app on top (evaluation never imports it); no stage imports another
    stage; nothing imports snakemake.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cookproc.core.deps import _library_imports

REPO = Path(__file__).resolve().parents[1]
LIBRARY = REPO / "workflow" / "cookproc"
STAGES = {"srl", "kiddon", "video", "keyclips", "supervised"}
PACKAGES = {"core", "data", "learn", "evaluation", "app"} | STAGES
# The cookproc packages each lower package may import (itself always allowed).
MAY_IMPORT = {"core": set(), "data": {"core"}, "learn": {"core", "data"}}
LARGEST_MODULE_LINES = 350


def library_modules() -> list[Path]:
    return sorted(LIBRARY.rglob("*.py"))


def package_of(path: Path) -> str:
    """The top-level cookproc package of a library file ('' for cookproc/__init__.py)."""
    parts = path.relative_to(LIBRARY).parts
    return parts[0] if len(parts) > 1 else ""


def import_edges() -> list[tuple[str, str, str]]:
    """(importing package, imported package, 'file -> module') for every cookproc import that
    crosses a package boundary."""
    edges = {}
    for path in library_modules():
        package = list(path.parent.relative_to(LIBRARY).parts)
        source = package_of(path)
        for name in _library_imports(path, package):
            parts = name.split(".")
            if len(parts) >= 2 and parts[1] != source:
                # One edge per file and imported package, named by the first module it imports.
                edges.setdefault((source, parts[1], path), f"{path.relative_to(REPO)} -> {name}")
    return sorted((source, target, edge) for (source, target, _), edge in edges.items())


def violations(allowed) -> list[str]:
    return [edge for source, target, edge in import_edges() if not allowed(source, target)]


def test_the_scan_sees_the_library():
    edges = import_edges()
    assert {source for source, _, _ in edges} >= {"data", "learn", "keyclips", "supervised", "app"}
    assert ("keyclips", "learn") in {(source, target) for source, target, _ in edges}


def test_every_module_lives_in_a_package_of_the_layering():
    packages = {package_of(path) for path in library_modules()} - {""}
    unplaced = sorted(packages - PACKAGES)
    assert not unplaced, (f"cookproc packages {unplaced} have no place in the layering: add them to "
                          "tests/test_layout.py and to CONTRIBUTING.md's Layout")
    flat = [str(p.relative_to(REPO)) for p in library_modules() if package_of(p) == "" and p.name != "__init__.py"]
    assert not flat, f"modules at the top of cookproc (put each in a package): {flat}"


def test_no_stage_imports_another_stage():
    bad = violations(lambda source, target: not (source in STAGES and target in STAGES))
    assert not bad, "a stage imports another stage (move the shared code to cookproc.learn or data):\n" + "\n".join(bad)


def test_evaluation_never_imports_the_app():
    """The app (user files, documents, corpora) sits on top: scoring never depends on it."""
    bad = violations(lambda source, target: not (source == "evaluation" and target == "app"))
    assert not bad, "cookproc.evaluation imports cookproc.app:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_lower_packages_import_only_below_them(package):
    bad = violations(lambda source, target: source != package or target in MAY_IMPORT[package])
    allowed = ", ".join(sorted(MAY_IMPORT[package])) or "no other cookproc package"
    assert not bad, f"cookproc.{package} may import {allowed}, but:\n" + "\n".join(bad)


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
