"""The one writer and the verified readers of the workflow's Parquet files.

Writes are atomic (temporary file, then rename) and deterministic (rows sorted by key, no pandas
index, fixed writer options), so the same inputs give byte-identical files whatever
PYTHONHASHSEED is; a writer validates against the file's schema (:mod:`cookproc.core.schemas`).

Files carry page checksums and a digest of every column (``cookproc.core.integrity``); ``read_table``,
the one reader for data, verifies both, so damage is an ``IntermediateError`` naming the file and
never silently different data.
"""
from __future__ import annotations

import errno
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, NoReturn, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from cookproc.core import integrity, provenance
from cookproc.core.errors import InputError, IntermediateError, OutputError
from cookproc.core.schemas import SchemaError, conform


def _readable_temp(path: Path) -> str:
    """A temporary file beside ``path`` with the permissions a plain ``open`` would give
    (mkstemp's 0600 would survive the rename and hide results from other users)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    os.close(fd)
    return tmp


def sort_by_key(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    return table.sort_by([(k, "ascending") for k in keys])


def write_parquet(table: pa.Table, path: str | os.PathLike, schema: pa.Schema, *,
                  sort_keys: Sequence[str] | None = None) -> None:
    """Validate ``table`` against ``schema`` and write it atomically and deterministically, with
    page checksums and column digests (see :func:`read_table`), and the provenance of the job
    writing it (:mod:`cookproc.core.provenance`)."""
    path = Path(path)
    table = conform(table, schema, what=str(path))
    if sort_keys:
        table = sort_by_key(table, sort_keys)
    entries = provenance.metadata_entry(path)
    table = table.replace_schema_metadata({**integrity.digest_metadata(table, entries), **entries})
    with atomic_output(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=True,
                       use_dictionary=True, store_schema=True, write_page_checksum=True)


# Whatever a corrupt file makes the decoder raise (pyarrow's errors are OSError/ValueError/
# IndexError subclasses; absurd sizes in a damaged header can also exhaust memory).
DECODER_ERRORS = (pa.ArrowException, OSError, ValueError, EOFError, IndexError, MemoryError)


def _check_magic(path: str | os.PathLike) -> None:
    """The reader never looks at the leading magic number; damage there is damage all the same."""
    with open(path, "rb") as raw:
        if raw.read(4) not in (b"PAR1", b"PARE"):
            raise integrity.Damage("no Parquet magic number at its start")


def _check_footer(handle: pq.ParquetFile, path: str | os.PathLike, require_digests: bool,
                  root: str | os.PathLike | None) -> tuple[list[str], dict[str, str] | None]:
    """The checks of a file's footer (no data read): its entries' digests; with ``require_digests``
    (a workflow output), the column digests and the place it was written for (``path`` relative to
    ``root``: its provenance's ``written_as``, else integrity.Misplaced); the columns it was written
    with. Returns its column names and digests."""
    names = handle.schema_arrow.names
    digests = integrity.stored_digests(handle.metadata.metadata)
    integrity.verify_entries(handle.metadata.metadata)
    if digests is None and require_digests:
        raise integrity.Damage("it carries no column digests, so this workflow did not write it as it is")
    if require_digests:
        try:
            record = provenance.stored_provenance(handle.metadata.metadata)
        except provenance.ProvenanceError as exc:
            raise integrity.Damage(str(exc)) from None
        elsewhere = provenance.written_elsewhere(record, path, root)
        if elsewhere is not None:
            raise integrity.Misplaced(elsewhere)
    if digests is not None and sorted(digests) != sorted(names):
        raise integrity.Damage(f"its columns {sorted(names)} are not those it was written with {sorted(digests)}")
    return names, digests


def _read_checked(path: str | os.PathLike, columns: Sequence[str] | None, require_digests: bool,
                  root: str | os.PathLike | None = None) -> pa.Table:
    """Read with page-checksum verification and check the column digests when the file has them
    (``require_digests``: a file without them is damage, and the file must be the one its job wrote
    for ``path`` relative to ``root``: its provenance's ``written_as``, else integrity.Misplaced).
    Raises integrity.Damage for damage, InputError for a column the (intact) file does not have."""
    try:
        _check_magic(path)
        with pq.ParquetFile(path, page_checksum_verification=True) as handle:
            names, digests = _check_footer(handle, path, require_digests, root)
            missing = [c for c in (columns or ()) if c not in names]
            if missing:
                table = None
            else:
                table = handle.read(columns=None if columns is None else list(columns))
                # Damaged headers can decode to arrays that break Arrow's own invariants.
                table.validate(full=True)
                if digests is not None:
                    integrity.verify_digests(table, digests)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except DECODER_ERRORS as exc:
        raise integrity.Damage(" ".join(str(exc).split())[:300] or type(exc).__name__) from None
    if missing:
        raise InputError(path, f"has no column(s) {missing}; its columns are {names}")
    metadata = {k: v for k, v in (table.schema.metadata or {}).items()
                if k not in (integrity.DIGESTS_KEY, provenance.PROVENANCE_KEY)}
    return table.replace_schema_metadata(metadata or None)


def verify(path: str | os.PathLike, columns: Sequence[str] | None = None, *, user_file: bool = False,
           root: str | os.PathLike | None = None) -> pa.Table:
    """The one check of a Parquet file, made by every reader (:func:`read_table`) and by
    ``cookproc inspect``, so that both give one verdict: the file read (all columns, or ``columns``)
    with its page checksums and column digests verified; a workflow output (a file under the
    ``results/`` of ``root``, default the working directory; a symbolic link placed there is one)
    must carry the digests and be the file its job wrote for this very path. Raises
    ``integrity.Misplaced`` for an intact file written for another path, ``integrity.Damage`` for
    damage, ``InputError`` for a column the file lacks; moves nothing."""
    output = not user_file and integrity.is_workflow_output(path, root)
    return _read_checked(path, columns, require_digests=output, root=root)


def read_table(path: str | os.PathLike, columns: Sequence[str] | None = None, *,
               user_file: bool = False) -> pa.Table:
    """Read a Parquet file (all columns, or ``columns`` in that order), verified.

    Every page's checksum is checked, and the content of each column read is checked against the
    digest ``write_parquet`` stored. A damaged or truncated file raises ``IntermediateError`` naming
    it and saying how to rebuild it; a workflow output (a file under ``results/``) is first moved
    aside to ``<file>.damaged``, so that the next ``snakemake`` run finds it missing and rebuilds it.
    A workflow output must carry the digests, and must have the ``columns`` asked for: a file
    without them (swapped in, or of another schema) is damage too; and it must be the file its
    job wrote for this very path (its provenance's ``written_as``): one written for another path,
    another output of the same job included (copied, swapped or linked into place), is refused and
    moved aside alike (``IntermediateError`` "not the file its rule wrote for this path", naming
    where and by which rule it was written). Elsewhere a file without digests gets the page
    checksums only, and a column it lacks raises ``InputError``. The checks are :func:`verify`'s,
    which ``cookproc inspect`` makes too.
    ``user_file``: a file the user placed deliberately (a user system): digests are checked when
    present but never required, and it is never moved aside, wherever it lies."""
    output = not user_file and integrity.is_workflow_output(path)
    try:
        return verify(path, columns, user_file=user_file)
    except integrity.Misplaced as exc:
        _raise_damaged(path, str(exc), what=MISPLACED)
    except integrity.Damage as exc:
        _raise_damaged(path, str(exc), move=not user_file)
    except InputError as exc:
        if not output:
            raise
        _raise_damaged(path, str(exc).removeprefix(f"{path}: "))


def column_names(path: str | os.PathLike) -> list[str]:
    """The column names of a Parquet file, read from its footer after the footer's checks of
    :func:`verify` (a workflow output must carry its digests and lie where its job wrote it); damage
    or a misplaced file is reported (and a workflow output moved aside) as by :func:`read_table`,
    which then verifies the data read."""
    try:
        _check_magic(path)
        with pq.ParquetFile(path) as handle:
            return _check_footer(handle, path, integrity.is_workflow_output(path), None)[0]
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except integrity.Misplaced as exc:
        _raise_damaged(path, str(exc), what=MISPLACED)
    except integrity.Damage as exc:
        _raise_damaged(path, str(exc))
    except DECODER_ERRORS as exc:
        _raise_damaged(path, " ".join(str(exc).split())[:300] or type(exc).__name__)


def wrong_columns(path: str | os.PathLike, message: str) -> NoReturn:
    """Raise for a file that lacks columns its reader needs (found with :func:`column_names`): a
    workflow output is damage (moved aside, to be rebuilt), any other file an ``InputError``."""
    if integrity.is_workflow_output(path):
        _raise_damaged(path, message)
    raise InputError(path, message)


#: How an intact file written for another path is described (IntermediateError's ``what``).
MISPLACED = "not the file its rule wrote for this path"


def _raise_damaged(path: str | os.PathLike, reason: str, *, move: bool = True, what: str = "damaged",
                   set_aside: str | os.PathLike | None = None) -> NoReturn:
    """Raise IntermediateError for a damaged (or misplaced: ``what``) file, moving a workflow output
    aside first (not a user's file: ``move`` False), so that the next run rebuilds it: the file, or
    ``set_aside``, what it is part of (a dataset folder, set aside as a whole)."""
    if not move:
        raise IntermediateError(path, reason, "it is your file, so no rule rebuilds it: replace it with an intact copy",
                                what=what)
    aside = path if set_aside is None else set_aside
    if not integrity.is_workflow_output(aside):
        raise IntermediateError(path, reason, "it is not under results/, so no rule rebuilds it: "
                                              "replace it with an intact copy", what=what)
    moved_to = integrity.move_aside(aside)
    if moved_to is None:
        raise IntermediateError(path, reason, f"rebuild it with `snakemake --forcerun {os.path.relpath(aside)}`",
                                what=what)
    it = "it" if set_aside is None else f"{os.path.relpath(aside)} (all of it)"
    raise IntermediateError(path, reason, f"moved {it} aside to {moved_to}; run `snakemake` again to rebuild it",
                            moved_to=moved_to, what=what)


def refuse_damaged(path: str | os.PathLike, reason: str, *, set_aside: str | os.PathLike | None = None,
                   what: str = "damaged") -> NoReturn:
    """Refuse a damaged workflow output as :func:`read_table` does (``IntermediateError``), moving
    it aside, or ``set_aside``: the folder it is part of, as a whole (a dataset whose part failed),
    so that the next ``snakemake`` rebuilds it."""
    _raise_damaged(path, reason, what=what, set_aside=set_aside)


def copy_parquet(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Copy a Parquet file by reading it verified and writing it again, so that the copy carries the
    provenance of the job making it (for the path it lies at): a byte copy would carry its source's,
    and a reader refuses a file written for another path."""
    table = read_table(source)
    write_parquet(table, target, table.schema)


def read_parquet(path: str | os.PathLike, schema: pa.Schema, *, user_file: bool = False) -> pa.Table:
    """Read a Parquet file verified (:func:`read_table`) and check it against ``schema``: a workflow
    output of another schema is damage (moved aside, to be rebuilt), any other file a SchemaError."""
    table = read_table(path, user_file=user_file)
    try:
        return conform(table, schema, what=str(path))
    except SchemaError as exc:
        if user_file or not integrity.is_workflow_output(path):
            raise
        _raise_damaged(path, f"not the schema this workflow reads: {str(exc).removeprefix(f'{path}: ')}")


#: Errors of writing a file that are about the place, not the data: named with the output's path.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                 errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EINVAL}


def output_problem(path: str | os.PathLike, exc: OSError) -> OutputError:
    """An OSError met writing ``path`` (through a temporary file beside it) as an error naming
    ``path`` and its folder, never the temporary file, with what to do."""
    folder = os.path.dirname(os.path.abspath(path))
    # A folder that exists but takes no new file this way (/proc, /sys, ...) says "no such file".
    missing = f"the folder {folder} does not exist (or was removed meanwhile)" if not os.path.isdir(folder) else \
        f"{folder} takes no new files (a special file system such as /proc or /sys?): write somewhere else"
    why = {errno.ENOSPC: f"no space left on the disk holding {folder}: free some space and run again",
           errno.EDQUOT: f"over the disk quota of {folder}: free some space and run again",
           errno.EFBIG: "too large for the file system",
           errno.EROFS: f"{folder} is on a read-only file system: write somewhere else",
           errno.EACCES: f"no permission to create files in {folder}: write somewhere else",
           errno.EPERM: f"no permission to create files in {folder}: write somewhere else",
           errno.ENOENT: missing,
           errno.ENOTDIR: f"{folder} is not a folder",
           errno.ENAMETOOLONG: "its name is too long for the file system: give a shorter one",
           errno.EINVAL: f"{folder} refuses a file of this name: give another"}.get(exc.errno, exc.strerror or str(exc))
    return OutputError(path, f"cannot write it: {why} [{errno.errorcode.get(exc.errno, exc.errno)}]")


def check_writable(path: str | os.PathLike) -> None:
    """Before any work: create, then remove, the temporary file :func:`atomic_output` would write
    ``path`` through (in ``path``'s folder, which must exist), so that an output that cannot be
    written (no permission even for root, a read-only or special file system such as /proc, a name
    too long) is an ``OutputError`` saying why now, not after the work."""
    path = Path(path)
    try:
        tmp = _readable_temp(path)
    except OSError as exc:
        raise output_problem(path, exc) from None
    os.unlink(tmp)


@contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[str]:
    """A temporary path beside ``path`` to write to; it replaces ``path`` when the block ends
    normally and is removed otherwise, so a failed job never leaves a half-written file. A write
    that fails for want of space or permission raises ``OutputError`` naming ``path``."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _readable_temp(path)
    except OSError as exc:
        raise output_problem(path, exc) from None
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        # The temporary file's own trouble (a full disk mid-write) is the output's; another file's
        # error (an input the block was reading) stays as it is.
        if exc.filename in (None, tmp, str(path)) and exc.errno in _WRITE_ERRNOS:
            raise output_problem(path, exc) from None
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file through a temporary file and a rename."""
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
