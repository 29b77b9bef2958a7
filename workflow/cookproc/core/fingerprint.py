"""Code fingerprints: one digest per workflow script over the code it can execute.

Every rule carries ``params: code=code_fingerprint(...)`` (rules/common.smk), so Snakemake's
params trigger reruns a rule exactly when the code its script can run has changed. The digest is
taken over each file's parsed syntax tree, not its bytes: comments, docstrings, blank lines and
formatting change nothing; files are keyed by their path relative to the repository, never by
an absolute path or a modification time, so a moved or re-cloned checkout with its results, or
a touched file, reruns nothing.

Run ``python -m cookproc.core.fingerprint workflow/scripts/<script>.py`` to see the per-file digests.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from functools import lru_cache
from pathlib import Path

from cookproc.core.deps import STORE, content_hash, imported_library_files

#: Bump when the normalisation below changes (it changes every rule's fingerprint once).
FINGERPRINT_VERSION = "1"

# C tokens: string and character literals are kept whole (a "//" inside one is no comment);
# comments are dropped; every other token stands alone, so spacing cannot matter.
_C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*|\w+|\S', re.DOTALL)


def _without_docstrings(tree: ast.AST) -> ast.AST:
    """Drop the docstring of the module and of every class and function (in place)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:]
    return tree


def normalized_code(path: str | Path) -> str:
    """What of a source file can change behaviour: the syntax tree of Python (no docstrings,
    comments or layout), the token stream of C (no comments or layout)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        tree = _without_docstrings(ast.parse(text, filename=str(path)))
        return ast.dump(tree, annotate_fields=False, include_attributes=False)
    if path.suffix in (".c", ".h"):
        tokens = (t for t in _C_TOKEN.findall(text) if not t.startswith(("/*", "//")))
        return "\x00".join(tokens)
    raise ValueError(f"{path}: no code normalisation for {path.suffix!r} files")


@lru_cache(maxsize=None)
def _code_digest(path: Path, mtime_ns: int, size: int) -> str:
    # Keyed by (path, mtime, size) only to reuse work within one process: the digest itself is of
    # the content, and the syntax-tree work is kept between processes by content (STORE).
    key = f"digest {FINGERPRINT_VERSION} {path.suffix} {content_hash(path)}"
    digest = STORE.get(key)
    if digest is None:
        digest = STORE.put(key, hashlib.sha256(normalized_code(path).encode("utf-8")).hexdigest())
    return digest


def code_digest(path: str | Path) -> str:
    """SHA-256 of a file's normalised code."""
    path = Path(path).resolve()
    st = path.stat()
    return _code_digest(path, st.st_mtime_ns, st.st_size)


def code_files(script: str | Path, library: str | Path) -> list[Path]:
    """The script and every library file it can execute (its cookproc imports, transitively)."""
    return [Path(script)] + imported_library_files(script, library)


def code_digests(script: str | Path, library: str | Path, repo: str | Path) -> dict[str, str]:
    """{repository-relative path: digest} of every file ``script`` can execute."""
    # Paths as given, not resolved: a repository assembled from symlinked folders keys its files
    # by where they appear in it.
    repo = os.path.abspath(repo)
    digests = {}
    for path in code_files(script, library):
        rel = os.path.relpath(os.path.abspath(path), repo)
        if rel.startswith(".."):
            raise ValueError(f"{path} lies outside the repository {repo}")
        digests[Path(rel).as_posix()] = code_digest(path)
    return digests


def code_fingerprint(script: str | Path, library: str | Path, repo: str | Path) -> str:
    """One digest of everything ``script`` can execute, independent of where the checkout lies."""
    digest = hashlib.sha256(f"cookproc-fingerprint {FINGERPRINT_VERSION}\n".encode())
    for rel, file_hash in sorted(code_digests(script, library, repo).items()):
        digest.update(f"{rel} {file_hash}\n".encode())
    STORE.save()
    return digest.hexdigest()[:32]


def main(argv: list[str]) -> int:
    repo = Path(__file__).resolve().parents[3]
    library = repo / "workflow" / "cookproc"
    if not argv:
        print("usage: python -m cookproc.core.fingerprint workflow/scripts/<script>.py ...", file=sys.stderr)
        return 2
    for script in argv:
        print(f"{script}: {code_fingerprint(script, library, repo)}")
        for rel, file_hash in sorted(code_digests(script, library, repo).items()):
            print(f"  {file_hash[:16]}  {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
