"""``cookproc inspect --lineage``: the tree of files a workflow output was made from.

It walks back from the file through its inputs' provenance (``cookproc.core.provenance``), and
through Snakemake's job records (``.snakemake/metadata``) for files that are not Parquet, down to
the benchmark's own files, checking each input's digest against the one recorded when it was used.
"""
from __future__ import annotations

import json
import os
from base64 import urlsafe_b64encode
from pathlib import Path
from typing import Any

from cookproc.core import integrity, provenance
from cookproc.core.digests import compact, file_digest


def workflow_root(path: str | os.PathLike) -> Path:
    """The working directory of the run that wrote ``path``: the folder holding its ``results/``
    (the current directory for a file elsewhere). Input paths in provenance are relative to it. The
    path is taken as given (its folders resolved only when that finds no ``results/``), and a
    symbolic link is never followed to its target's folder: a job reads the link where it lies."""
    for candidate in (Path(os.path.abspath(path)), integrity.place(path)):
        for parent in candidate.parents:
            if parent.name == integrity.RESULTS_DIR:
                return parent.parent
    return Path.cwd()


def snakemake_record(root: Path, path: str) -> dict | None:
    """Snakemake's record of the job that wrote ``path`` (relative to ``root``): rule, inputs,
    params, ... as JSON, from ``.snakemake/metadata`` (None when there is none)."""
    folder = root / ".snakemake" / "metadata"
    if not folder.is_dir():
        return None
    try:
        max_len = os.pathconf(folder, "PC_NAME_MAX") or 255
    except (OSError, ValueError):
        max_len = 255
    b64 = urlsafe_b64encode(path.encode()).decode()
    parts = [b64[i:i + max_len - 1] for i in range(0, len(b64), max_len - 1)]
    record = folder.joinpath(*["@" + p for p in parts[:-1]], parts[-1])
    try:
        return json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def lineage(path: str | os.PathLike, *, root: Path | None = None, _seen: set | None = None) -> dict[str, Any]:
    """The tree of files ``path`` was made from: for a Parquet file of the workflow its provenance's
    inputs, for another file under ``results/`` the inputs of Snakemake's job record, down to the
    files no rule wrote (the benchmark's). Each node: path, rule, digest check, inputs."""
    import pyarrow.parquet as pq

    path = Path(path)
    root = workflow_root(path) if root is None else root
    seen = set() if _seen is None else _seen
    rel = os.path.relpath(path, root) if path.is_absolute() else str(path)
    full = path if path.is_absolute() else root / path
    node: dict[str, Any] = {"path": rel}
    if rel in seen:
        node["repeated"] = True
        return node
    seen.add(rel)
    if not full.exists():
        node["missing"] = True
        return node
    inputs: list[dict[str, Any]] = []
    record = None
    if full.suffix == ".parquet":
        try:
            record = provenance.stored_provenance(pq.read_metadata(full).metadata)
        except Exception as exc:  # a damaged footer or provenance entry
            node["damaged"] = " ".join(str(exc).split())[:300]
            return node
    if record is not None and record.get("rule"):
        node["rule"] = record["rule"]
        node["wildcards"] = record.get("wildcards") or {}
        inputs = record.get("inputs") or []
    else:
        job = snakemake_record(root, rel)
        if job is not None:
            node["rule"] = job.get("rule")
            node["via"] = "snakemake record"
            inputs = [{"path": p} for p in job.get("input") or []]
        else:
            node["rule"] = None  # a file no job of this workflow wrote: the benchmark's, or the user's
    children = []
    for entry in inputs:
        input_path = Path(entry["path"])
        child = lineage(input_path, root=root, _seen=seen)
        if entry.get("digest") is not None and not child.get("missing") and not child.get("repeated"):
            child["digest_matches"] = file_digest(
                input_path if input_path.is_absolute() else root / input_path) == entry["digest"]
        children.append(child)
    if children:
        node["inputs"] = children
    return node


def render_lineage(node: dict[str, Any], depth: int = 0) -> str:
    pad = "  " * depth
    if node.get("repeated"):
        return f"{pad}{node['path']} (see above)\n"
    notes = []
    if node.get("rule"):
        notes.append(f"rule {node['rule']}" + (f" {compact(node['wildcards'])}" if node.get("wildcards") else ""))
    elif not node.get("missing") and not node.get("damaged"):
        notes.append("source file (no rule)")
    if node.get("via"):
        notes.append(node["via"])
    if node.get("missing"):
        notes.append("MISSING")
    if node.get("damaged"):
        notes.append(f"DAMAGED: {node['damaged']}")
    if node.get("digest_matches") is False:
        notes.append("CHANGED since used")
    text = f"{pad}{node['path']}" + (f"  [{'; '.join(notes)}]" if notes else "") + "\n"
    for child in node.get("inputs", []):
        text += render_lineage(child, depth + 1)
    return text
