"""Model folders under results/models/: written atomically, their model.json checked (torch-free).

A model is a folder of several files; a job that fails half-way must leave no half-written folder,
a cluster's jobs must all be able to read it, and a folder of another format or version is refused.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from cookproc.core.errors import InputError


def readable_by_all(folder: Path) -> None:
    """The permissions of a folder and files made the usual way (``mkdtemp`` and some writers make
    them private): a model on a cluster's shared file system is read by every job."""
    umask = os.umask(0)
    os.umask(umask)
    for path in [folder, *folder.rglob("*")]:
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask)


@contextmanager
def building_folder(out_dir: str | os.PathLike) -> Iterator[Path]:
    """A fresh folder beside ``out_dir`` for the block to fill; when the block ends it replaces
    ``out_dir`` (readable by all), and when the block fails it is removed."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        yield tmp
        readable_by_all(tmp)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_model_json(path: str | os.PathLike, *, kind: str, files: Sequence[str], format: str, version: int,
                    rebuild: str) -> dict:
    """A model folder's model.json, checked: ``path`` is a folder holding ``files``, and its model.json
    is JSON of this ``format`` and ``version`` (an older one is refused, saying to ``rebuild`` it).
    ``kind`` names the model in the messages ("key-clip selector")."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, f"not a {kind} folder (expected results/models/<name>/ with model.json)")
    missing = [name for name in files if not (path / name).exists()]
    if missing:
        raise InputError(path, f"incomplete {kind}: missing {', '.join(missing)}")
    meta_path = path / "model.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(meta_path, f"not valid JSON: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != format:
        raise InputError(meta_path, f"format {meta.get('format') if isinstance(meta, dict) else None!r}, "
                                    f"expected {format!r}")
    if meta.get("format_version") != version:
        raise InputError(meta_path, f"format version {meta.get('format_version')!r}; this code reads version "
                                    f"{version}: {rebuild} with this workflow")
    return meta
