"""Which library files a workflow script runs: its ``cookproc`` imports, followed transitively.

The code fingerprints (cookproc.core.fingerprint) hash these files, so editing a library module
reruns exactly the rules whose scripts can execute it; a compiled module (``_fuzz``) is represented
by its C source. Imports are read from the source (absolute or relative, at module level or inside
functions); a superset is safe (it can only rerun too much, never too little).
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path


def imported_library_files(script: str | Path, library: str | Path) -> list[Path]:
    """Library files (``library`` is the ``cookproc`` package folder) that ``script`` imports,
    directly or through other library modules, sorted; the package's ``__init__.py`` included."""
    script, library = Path(script), Path(library)
    seen: set[Path] = {library / "__init__.py"}
    todo = [script]
    while todo:
        current = todo.pop()
        st = current.stat()
        for candidate in _imported_files(current, library, st.st_mtime_ns, st.st_size):
            if candidate not in seen:
                seen.add(candidate)
                if candidate.suffix == ".py":
                    todo.append(candidate)
    return sorted(seen)


@lru_cache(maxsize=None)
def _imported_files(current: Path, library: Path, mtime_ns: int, size: int) -> tuple[Path, ...]:
    """The library files one source file imports directly (cached per file version: every rule's
    fingerprint walks the same modules when the workflow is read)."""
    package = list(current.parent.relative_to(library).parts) if current.is_relative_to(library) else None
    found: list[Path] = []
    for node in ast.walk(ast.parse(current.read_text(encoding="utf-8"), filename=str(current))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and package is not None:
            base = package[: len(package) - (node.level - 1)]
            module = ["cookproc", *base, *(node.module.split(".") if node.module else [])]
            names = [".".join(module)] + [".".join(module + [alias.name]) for alias in node.names]
        for name in names:
            if name != "cookproc" and not name.startswith("cookproc."):
                continue
            parts = name.split(".")[1:]
            # Importing a.b.c runs the __init__ of every package on the way.
            for depth in range(1, len(parts) + 1):
                rel = Path(*parts[:depth])
                for candidate in (library / f"{rel}.py", library / rel / "__init__.py"):
                    if candidate.exists():
                        found.append(candidate)
                # A compiled module counts by its C source (what an edit changes).
                source = library / f"{rel}.c"
                if source.exists():
                    found.append(source)
    return tuple(dict.fromkeys(found))
