"""Where a workflow file was written and where it may be read: the one answer every reader of a
Parquet file and ``cookproc inspect`` give (:mod:`cookproc.core.parquet_io`), from the provenance
each file carries (:mod:`cookproc.core.provenance`).

A job records, in every Parquet file it writes, the path it wrote the file as (``written_as``,
relative to the working directory, symbolic links not followed). The file is read at that path
only: not at another output of the same job (two outputs swapped), not through a link to it, not
as a copy. A folder built beside its place and renamed into it when complete (a model folder, the
corpus dataset: :func:`publishing`) records each file's path in the folder's place.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from cookproc.core.digests import compact


def relative_path(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """``path`` relative to ``root`` (default: the working directory), normalised, symbolic links
    not followed: how provenance names a job's outputs and how a reader names what it reads."""
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root or os.curdir))).as_posix()


def within(path: str, outputs: list[str]) -> bool:
    """Whether ``path`` is one of ``outputs`` or lies inside one of them (a folder)."""
    return any(path == output or path.startswith(output.rstrip("/") + "/") for output in outputs)


_publishing: list[tuple[str, str]] = []


@contextmanager
def publishing(building: str | os.PathLike, final: str | os.PathLike) -> Iterator[None]:
    """Within the block, a file written inside the folder ``building`` (a temporary folder that
    will be renamed to ``final``: a model folder, a dataset, built whole before it replaces the
    old one) is recorded as written at its place in ``final``: its ``written_as`` is the path it
    will be read at, never the temporary folder's random name."""
    entry = (relative_path(building), relative_path(final))
    _publishing.append(entry)
    try:
        yield
    finally:
        _publishing.remove(entry)


def published_path(here: str) -> str:
    """Where a file written at ``here`` will lie once the folder being built around it is renamed."""
    for building, final in reversed(_publishing):
        if within(here, [building]):
            return final + here[len(building):]
    return here


def written_elsewhere(record: Mapping | None, path: str | os.PathLike, root: str | os.PathLike | None = None,
                      running_job: Mapping | None = None) -> str | None:
    """Why the file at ``path`` (relative to ``root``, default the working directory; symbolic links
    not followed) is not the one its job wrote for that path, or None when it is: a file a job
    wrote must lie at the very path it was written as (``written_as``), not at another output of
    the same job (two outputs swapped) nor behind a link to it. A file whose provenance names no
    such path (written before ``written_as`` was recorded) must lie at one of the job's ``outputs``
    or inside one of them. A file written outside a job (no rule) says nothing either way (None),
    and neither does one the ``running_job`` wrote itself (it reads back a folder it builds beside
    its output). The answer, e.g. "written as results/keyclips/a.parquet by rule srl_systems_noheur
    {}", names where and by which job."""
    if not record or not record.get("rule"):
        return None
    outputs = record.get("outputs")
    wildcards = record.get("wildcards") or {}
    job = f"rule {record['rule']}" + (f" {compact(wildcards)}" if wildcards else "")
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        return f"written by {job} of an older version of this workflow, whose provenance does not say which path " \
               "it was written for"
    written_as = record.get("written_as")
    here = relative_path(path, root)
    if here == written_as or (not isinstance(written_as, str) and within(here, outputs)):
        return None
    if running_job is not None and all(record.get(key) == running_job[key] for key in ("rule", "wildcards", "outputs")):
        return None
    where = written_as if isinstance(written_as, str) else " or ".join(outputs) or "(no declared output)"
    return f"written as {where} by {job}"
