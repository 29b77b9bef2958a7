"""How provenance identifies values and files: canonical JSON of a value and its SHA-256, and a
file's digest (a workflow Parquet file by its stored column digests, any other file by its content,
a folder by its files). :mod:`cookproc.core.provenance` records them; ``cookproc inspect``
(:mod:`cookproc.app.inspection`) computes them again to tell whether a file is current.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping


def compact(value: Any) -> str:
    """Canonical compact JSON: sorted keys, no spaces (the form every hash here is taken of)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plain(value: Any) -> Any:
    """A JSON value of a param or wildcard (Snakemake's named lists are lists; paths become strings)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=None)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    """Keyed by (path, mtime, size) only to reuse work within one process."""
    if path.endswith(".parquet"):
        summary = parquet_digest_summary(path)
        if summary is not None:
            return summary
    return "sha256:" + sha256_file(Path(path))


def parquet_digest_summary(path: str | os.PathLike) -> str | None:
    """``columns:<sha256>`` of the column digests a workflow Parquet file stores (read from its
    footer, no data read); None for a file without them or with an unreadable footer."""
    import pyarrow.parquet as pq

    from cookproc.core import integrity

    try:
        digests = integrity.stored_digests(pq.read_metadata(path).metadata)
    except Exception:  # a damaged footer: the content hash stands in; readers report the damage
        return None
    return None if digests is None else "columns:" + sha256_text(compact(digests))


def file_digest(path: str | os.PathLike) -> str | None:
    """A file's digest as provenance records it: a workflow Parquet file's stored column digests
    (``columns:...``, so that rewriting the same data counts as the same input), any other file's
    content (``sha256:...``), a folder's files and their contents (``tree:...``); None when absent."""
    path = Path(path)
    if path.is_dir():
        digest = hashlib.sha256()
        for top, dirs, names in os.walk(path):
            dirs.sort()
            for name in sorted(names):
                full = Path(top, name)
                digest.update(f"{full.relative_to(path).as_posix()}\0{file_digest(full)}\n".encode("utf-8"))
        return "tree:" + digest.hexdigest()
    try:
        st = path.stat()
    except OSError:
        return None
    return _digest(str(path), st.st_mtime_ns, st.st_size)
