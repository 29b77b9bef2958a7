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

from cookproc.core import places
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
    ``out_dir`` (readable by all), and when the block fails it is removed. Parquet files written in
    it record ``out_dir``'s paths as where they were written (:func:`places.publishing`)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        # A Parquet file written in it is recorded as written at its place in out_dir.
        with places.publishing(tmp, out_dir):
            yield tmp
        readable_by_all(tmp)
        replace_folder(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux's renameat2 with RENAME_EXCHANGE); False where the system
    or the file system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def replace_folder(new: str | os.PathLike, target: str | os.PathLike) -> None:
    """Put the folder ``new`` in the place of ``target`` (a folder, or nothing yet) as a whole: a
    reader sees the old folder or the new one, never a mix. Where the file system can, the two are
    exchanged in one step; elsewhere the old one is renamed aside, the new one into place (a moment
    with neither), and the old one removed."""
    new, target = Path(new), Path(target)
    if not target.exists() and not target.is_symlink():
        os.replace(new, target)
        return
    if _exchange(new, target):
        shutil.rmtree(new)  # now the old folder
        return
    old = new.with_name(new.name + ".old")
    os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


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


#: Weight formats other than safetensors: pickles (PyTorch's .bin/.pt/.pth/.ckpt, .pkl, joblib) can
#: run code when loaded, and a loader given the choice may prefer them. Models load from
#: safetensors only, so a folder holding one of these is refused before anything is read.
OTHER_WEIGHTS = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle", ".joblib", ".h5", ".msgpack")
#: Code a loader could import from a model folder (Hugging Face's remote code, custom modules).
CODE_FILES = (".py", ".pyc", ".pyo", ".so")
#: Keys of a model folder's JSON files that ask a loader to run code from the folder or the hub.
CODE_KEYS = ("auto_map", "trust_remote_code", "custom_pipelines")


def refuse_unsafe_model_files(folder: str | os.PathLike, trusted: Sequence[str] = ()) -> None:
    """Refuse a model folder (any depth) that holds weights other than safetensors, Python code, a
    JSON file asking for remote code (``auto_map``, ``trust_remote_code``), or a sentence-transformers
    module that is not sentence-transformers' own. The InputError names the file; nothing is loaded.
    ``trusted``: paths (relative to ``folder``) whose loader reads them without running code
    (``torch.load(weights_only=True)``), passed over."""
    folder = Path(folder)
    trusted_paths = {folder / name for name in trusted}
    seen: set[str] = set()
    for top, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:  # a link back up the tree
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        for name in sorted(names):
            path = Path(top, name)
            if path in trusted_paths:
                continue
            suffix = path.suffix.lower()
            if suffix in OTHER_WEIGHTS:
                raise InputError(path, f"refused: weights are loaded from .safetensors files only, and {suffix} "
                                       "files can hold pickled code; remove it (convert it to safetensors if it is "
                                       "the only copy of the weights)")
            if suffix in CODE_FILES:
                raise InputError(path, "refused: a model folder must hold no code (a loader could import it); "
                                       "remove it")
            if suffix == ".json":
                _refuse_code_hooks(path)


def _refuse_code_hooks(path: Path) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return  # not a settings file this check understands; the loader reports a broken one
    if isinstance(data, dict):
        hooks = [key for key in CODE_KEYS if key in data]
        if hooks:
            raise InputError(path, f"refused: {hooks[0]!r} asks to run code shipped with the model; remove the key "
                                   "(models run with the library's own code only)")
    if path.name == "modules.json" and isinstance(data, list):
        for module in data:
            kind = module.get("type") if isinstance(module, dict) else None
            if not isinstance(kind, str) or not kind.startswith("sentence_transformers."):
                raise InputError(path, f"refused: module type {str(kind)[:80]!r} is not one of sentence-transformers' "
                                       "own (it would import code named by the model)")
