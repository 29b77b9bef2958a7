"""Which library files a workflow script runs: its ``cookproc`` imports, followed transitively.

The code fingerprints (cookproc.core.fingerprint) hash these files, so editing a library module
reruns exactly the rules whose scripts can execute it; a compiled module (``_fuzz``) is represented
by its C source. Imports are read from the source (absolute or relative, at module level or inside
functions); a superset is safe (it can only rerun too much, never too little).
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path


class ContentStore:
    """Results of the slow steps of code fingerprints (parsing syntax trees), kept between
    processes in one JSON file and keyed by a file's content hash, so a result can never belong to
    other content. Every Snakemake run reads the workflow (and every cluster job reads it again):
    with the store, only files changed since the last run are parsed. Without a file (the default,
    and when it cannot be read or written) it only lives as long as the process: a cache, never
    an input of a result."""

    def __init__(self):
        self.path: Path | None = None
        self.entries: dict[str, object] = {}
        self.dirty = False

    def use_file(self, path: str | os.PathLike) -> None:
        """Keep entries in ``path`` (read now, written by :meth:`save`)."""
        self.path = Path(path)
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        if isinstance(loaded, dict):
            self.entries = {**loaded, **self.entries}

    def get(self, key: str):
        return self.entries.get(key)

    def put(self, key: str, value):
        self.entries[key] = value
        self.dirty = True
        return value

    def save(self) -> None:
        """Write the entries when new ones were added (atomically; a failed write is no error)."""
        if not (self.dirty and self.path):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.entries, handle)  # unsorted: a stored dict keeps its key order
            os.replace(tmp, self.path)
            self.dirty = False
        except OSError:
            pass


#: The store of this process (rules/common.smk points it at .snakemake/cookproc/store.json).
STORE = ContentStore()


def content_hash(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
    key = f"imports {package} {content_hash(current)}"
    names = STORE.get(key)
    if names is None:
        names = STORE.put(key, _library_imports(current, package))
    found: list[Path] = []
    for name in names:
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


def _library_imports(current: Path, package: list[str] | None) -> list[str]:
    """The ``cookproc`` modules one source file names in its imports (relative ones resolved
    against its ``package``, its folder inside the library; None outside it), in order."""
    names: list[str] = []
    for node in ast.walk(ast.parse(current.read_text(encoding="utf-8"), filename=str(current))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and package is not None:
            base = package[: len(package) - (node.level - 1)]
            module = ["cookproc", *base, *(node.module.split(".") if node.module else [])]
            names += [".".join(module)] + [".".join(module + [alias.name]) for alias in node.names]
    return [name for name in dict.fromkeys(names) if name == "cookproc" or name.startswith("cookproc.")]
