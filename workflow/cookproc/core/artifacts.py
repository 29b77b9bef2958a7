"""Model folders under results/models/, written atomically (torch-free).

A model is a folder of several files; a job that fails half-way must leave no half-written folder,
and a cluster's jobs must all be able to read it.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


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
