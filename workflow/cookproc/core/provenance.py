"""Provenance of every Parquet file the workflow writes, stored in its footer next to the digests.

A workflow script runs inside :func:`cookproc.core.logs.script_logging`, which hands this module
the job's ``snakemake`` object (duck-typed: this library never imports snakemake). Every file
``cookproc.core.parquet_io.write_parquet`` then writes carries, under the key-value entry
``cookproc.provenance``, one compact JSON object:

- ``rule``, ``wildcards``, ``outputs`` (the job's declared outputs, relative to the working
  directory) and ``written_as`` (the path it was written at, when that is one of them or inside
  one; in a folder built beside its output, the path it has once renamed into place): a file is
  the one its rule wrote for a path when the path is its ``written_as``, never another output of
  the same job (:func:`written_elsewhere`), ``script`` (repository-relative) and ``code``, the rule's code
  fingerprint (its ``code`` param, :mod:`cookproc.core.fingerprint`), with ``code_files``, the
  SHA-256 (16 hex digits) of the script and of each cookproc module the job loaded, so that a
  stale file can name the changed module;
- ``commit``: the last commit that changed one of those files (not HEAD; see below) and
  ``commit_dirty``, whether they differ from it; both null outside a git checkout;
- ``params``: the rule's params (``code`` excepted) and ``params_hash``; ``config``: the config
  keys those params come from, ``{dotted key: value}``, found by value and name in the job's config
  (:func:`config_keys`), and ``config_hash``; ``untraced_params``: params that are no config value
  as such (set in the rule file, or built from several keys), which :mod:`cookproc.app.inspection`
  cannot check;
- ``inputs``: each input's name, path and digest (:func:`cookproc.core.digests.file_digest`);
- ``software``: Python and the versions of the packages the job imported that shape results, and
  the encoders it loaded (name and a digest of their weights).

Nothing that varies from run to run goes in: rerunning a job on the same inputs with the same code
writes byte-identical files. So the time a job ran is written to its log instead, and the commit is
the last one that changed the job's code rather than HEAD: with HEAD, a file rebuilt after an
unrelated commit (say, to the docs) would differ in its footer, and Snakemake, finding its checksum
changed, would rerun everything downstream of it. Outside a job (tests, the ``cookproc`` command)
a file carries a minimal provenance: ``rule`` null and the software versions.
"""
from __future__ import annotations

import json
import logging
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from cookproc.core import integrity, places
from cookproc.core.digests import compact, file_digest, plain, sha256_file, sha256_text
from cookproc.core.places import relative_path, within

PROVENANCE_KEY = b"cookproc.provenance"
PROVENANCE_FORMAT = "cookproc-provenance/1"

#: Packages whose versions are recorded when the job has imported them (import names).
SOFTWARE = ("numpy", "pyarrow", "scipy", "sklearn", "torch", "transformers", "sentence_transformers",
            "spacy", "nltk", "cv2", "decord", "av")

#: The checkout this library belongs to (workflow/cookproc/core/provenance.py -> the checkout).
CHECKOUT = Path(__file__).resolve().parents[3]

_job: dict | None = None
_encoders: dict[str, dict[str, str]] = {}


# ----------------------------------------------------------------------------- config keys
def _config_nodes(config: Mapping, prefix: str = "") -> dict[str, Any]:
    nodes = {}
    for key, value in config.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        nodes[path] = value
        if isinstance(value, Mapping):
            nodes.update(_config_nodes(value, path))
    return nodes


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        n += 1
    return n


def config_keys(params: Mapping[str, Any], config: Mapping, rule: str | None = None
                ) -> tuple[dict[str, Any], list[str]]:
    """The config keys a rule's params come from: ``({dotted key: value}, untraced param names)``.

    A param is traced to the config node that has its value and its name as the last key
    (``epochs=KC_NEURAL["epochs"]`` -> ``keyclips.neural.epochs``); a dict or list param with no
    such name, to the one node with its value. A dict found nowhere as a whole is traced key by key
    (a selection of a section's keys). When several keys fit, the one closest to the rule's keys
    traced so far wins, then the one in the section the rule is named after (``device`` of rule
    ``keyclips_finetune`` -> ``keyclips.device``); a tie, or no fit, leaves the param untraced."""
    nodes = _config_nodes(config)
    by_value: dict[str, list[str]] = {}
    for path, value in nodes.items():
        by_value.setdefault(compact(plain(value)), []).append(path)
    traced: dict[str, Any] = {}
    ambiguous: list[tuple[str, Any, list[str]]] = []
    untraced: list[str] = []

    def trace(name: str, value: Any, label: str) -> None:
        candidates = by_value.get(compact(value), [])
        named = [c for c in candidates if c.rsplit(".", 1)[-1] == name]
        fits = named or (candidates if isinstance(value, (dict, list)) and value else [])
        if len(fits) == 1:
            traced[fits[0]] = value
        elif fits:
            ambiguous.append((label, value, fits))
        elif isinstance(value, dict) and value:
            for key, item in value.items():
                trace(key, item, f"{label}.{key}")
        else:
            untraced.append(label)

    for name, value in params.items():
        trace(name, plain(value), name)
    stage = (rule or "").split("_", 1)[0]
    while ambiguous:
        left = []
        for label, value, fits in ambiguous:
            closeness = {fit: (max((_shared_prefix(fit, other) for other in traced), default=0),
                               int(fit.split(".", 1)[0] == stage)) for fit in fits}
            best = max(closeness.values())
            winners = [fit for fit in fits if closeness[fit] == best]
            if best > (0, 0) and len(winners) == 1:
                traced[winners[0]] = value
            else:
                left.append((label, value, fits))
        if len(left) == len(ambiguous):
            untraced += [label for label, _, _ in left]
            break
        ambiguous = left
    return dict(sorted(traced.items())), sorted(untraced)


# ----------------------------------------------------------------------------- the job
def _git(repo: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None


def code_commit(repo: Path, files: list[str]) -> tuple[str | None, bool | None]:
    """The last commit that changed any of ``files`` (repository-relative) and whether they differ
    from it now; (None, None) outside a git checkout."""
    if not files:
        return None, None
    found = _git(repo, "log", "-1", "--format=%H", "--", *files)
    if found is None or found.returncode != 0 or not found.stdout.strip():
        return None, None
    diff = _git(repo, "diff", "--quiet", "HEAD", "--", *files)
    return found.stdout.strip(), bool(diff is None or diff.returncode != 0)


def _script_path() -> Path | None:
    """The running workflow script: Snakemake sets its ``__file__`` to the script's real path."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return None
    path = Path(path).resolve()
    return path if path.parent.name == "scripts" and path.parent.parent.name == "workflow" else None


def script_name() -> str | None:
    """The file name of the running workflow script (``corpus_shard.py``), None elsewhere."""
    script = _script_path()
    return None if script is None else script.name


def _named_paths(files) -> list[dict[str, Any]]:
    """[{name, path}] of a Snakemake input list, named entries by name, the others with name null."""
    paths = [str(p) for p in files]
    names: list[str | None] = [None] * len(paths)
    spans = getattr(files, "_names", None) or {}
    for name, (start, end) in spans.items():
        for i in range(start, start + 1 if end is None else end):
            if i < len(names):
                names[i] = name
    # Absolute paths (the upstream mirror, say) relative to the working directory, as the workflow
    # addresses its own files: data and results moved together give the same provenance.
    paths = [os.path.relpath(p) if os.path.isabs(p) else p for p in paths]
    return [{"name": name, "path": path} for name, path in zip(names, paths)]


def start_job(smk) -> None:
    """Remember the provenance of the job whose ``snakemake`` object is ``smk`` (what
    ``script_logging`` calls); the parts that read files are computed at the first write."""
    global _job
    params = getattr(smk, "params", None)
    named_params = dict(params.items()) if params is not None and hasattr(params, "items") else {}
    code = named_params.pop("code", None)
    params_json = plain(named_params)
    config = getattr(smk, "config", None) or {}
    traced, untraced = config_keys(params_json, config, getattr(smk, "rule", None))
    wildcards = getattr(smk, "wildcards", None)
    _job = {
        "rule": getattr(smk, "rule", None),
        "wildcards": plain(dict(wildcards.items())) if wildcards is not None and hasattr(wildcards, "items") else {},
        "outputs": [relative_path(p) for p in getattr(smk, "output", [])],
        "code": code,
        "params": params_json,
        "params_hash": sha256_text(compact(params_json)),
        "config": traced,
        "config_hash": sha256_text(compact(traced)),
        "untraced_params": untraced,
        "_inputs": _named_paths(getattr(smk, "input", [])),
        "_script": _script_path(),
    }
    _encoders.clear()
    logging.getLogger("cookproc.provenance").info(
        "job of rule %s started at %s (the time is kept here, not in the outputs: see cookproc.core.provenance)",
        _job["rule"], datetime.now(timezone.utc).isoformat(timespec="seconds"))


def written_elsewhere(record: Mapping | None, path: str | os.PathLike,
                      root: str | os.PathLike | None = None) -> str | None:
    """:func:`cookproc.core.places.written_elsewhere`, the running job (if any) allowed to read back
    what it wrote."""
    return places.written_elsewhere(record, path, root, _job)


def end_job() -> None:
    global _job
    _job = None
    _encoders.clear()


def record_encoder(path: str | os.PathLike) -> None:
    """Note a model folder the job loaded: its name and a digest of its weights (or config)."""
    path = Path(path)
    for name in ("model.safetensors", "pytorch_model.bin", "config.json"):
        if (path / name).is_file():
            revision = f"{name}:{file_digest(path / name)}"
            break
    else:
        revision = None
    # A packaged model's folder is often just `model`: its package names it.
    name = f"{path.parent.name}/{path.name}" if path.name in ("model", "encoder") else path.name
    _encoders[name] = {"name": name, "revision": revision}


def _software(in_job: bool = True) -> dict[str, Any]:
    """Python's version and those of the packages of SOFTWARE the job imported. Outside a job only
    the writer's own (numpy, pyarrow): what a test process happens to have imported is no record."""
    versions: dict[str, Any] = {"python": platform.python_version()}
    for module in SOFTWARE if in_job else ("numpy", "pyarrow"):
        if module in sys.modules:
            versions[module] = getattr(sys.modules[module], "__version__", None)
    if in_job and _encoders:
        versions["encoders"] = [_encoders[name] for name in sorted(_encoders)]
    return versions


def _loaded_code_files(script: Path, repo: Path) -> list[Path]:
    """The script and the cookproc modules this process has loaded from ``repo``. (Not the code
    fingerprint's own list: importing cookproc.core.fingerprint here would make every rule's
    fingerprint cover it, so that an edit to the fingerprinting would rerun everything.)"""
    library = (repo / "workflow" / "cookproc").resolve()
    files = {script}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py") and Path(path).resolve().is_relative_to(library):
            files.add(Path(path).resolve())
    return sorted(files)


def _job_code(job: dict) -> dict[str, Any]:
    script = job["_script"]
    if script is None:
        return {"script": None, "code_files": {}, "commit": None, "commit_dirty": None}
    repo = script.parents[2]
    files = {path.relative_to(repo).as_posix(): sha256_file(path)[:16] for path in _loaded_code_files(script, repo)}
    commit, dirty = code_commit(repo, sorted(files))
    return {"script": script.relative_to(repo).as_posix(), "code_files": dict(sorted(files.items())),
            "commit": commit, "commit_dirty": dirty}


def current() -> dict[str, Any]:
    """The provenance a file written now carries."""
    if _job is None:
        return {"format": PROVENANCE_FORMAT, "rule": None, "software": _software(in_job=False)}
    if "_code" not in _job:
        _job["_code"] = _job_code(_job)
        _job["_input_digests"] = [{**entry, "digest": file_digest(entry["path"])} for entry in _job["_inputs"]]
    public = {k: v for k, v in _job.items() if not k.startswith("_")}
    return {"format": PROVENANCE_FORMAT, **public, **_job["_code"], "inputs": _job["_input_digests"],
            "software": _software()}


def metadata_entry(path: str | os.PathLike | None = None) -> dict[bytes, bytes]:
    """The key-value metadata entry ``write_parquet`` adds for a file written at ``path``: in a job,
    ``written_as`` is that path (in a folder being built, :func:`cookproc.core.places.publishing`,
    the path it will have once the folder is renamed into place) when it is (or lies in) one of the
    job's outputs, so that a reader accepts the file at that path only and a message can name the
    very file; None otherwise (a scratch file in a temporary folder, whose random name would make
    the bytes differ from run to run)."""
    record = current()
    if record.get("rule") is not None:
        here = None if path is None else places.published_path(relative_path(path))
        record["written_as"] = here if here is not None and within(here, record["outputs"]) else None
    return {PROVENANCE_KEY: compact(record).encode("utf-8")}


class ProvenanceError(ValueError):
    """A file's provenance entry cannot be read."""


def stored_provenance(metadata: Mapping[bytes, bytes] | None) -> dict | None:
    """The provenance in a file's key-value metadata; None when it has none (a file this workflow
    did not write, or wrote before provenance existed)."""
    try:
        integrity.verify_entries(metadata)
    except integrity.Damage as exc:
        raise ProvenanceError(str(exc)) from None
    if not metadata or PROVENANCE_KEY not in metadata:
        return None
    try:
        value = json.loads(metadata[PROVENANCE_KEY].decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ProvenanceError("its provenance entry is not valid JSON") from None
    if not isinstance(value, dict) or value.get("format") != PROVENANCE_FORMAT:
        raise ProvenanceError(f"its provenance entry is not in format {PROVENANCE_FORMAT}")
    return value
