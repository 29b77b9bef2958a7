"""The exception types of the project's expected errors: bad input, a damaged or misplaced
intermediate, an output that cannot be written, a bad config or table schema.

Each message says what and where (the file, the line/row or clip) and what to do, so it reaches the
user as one line without a traceback: ``cookproc`` prints it, and a workflow script prints it to
its log and exits 1 (:func:`cookproc.core.logs.script_logging`). Any other exception is a bug, and
keeps its traceback.
"""
from __future__ import annotations

from typing import Callable, NoReturn, Sequence


class ExpectedError(ValueError):
    """An error of the project's own kinds (the subclasses, and ``ConfigError``, ``SchemaError``):
    its message is the whole story, so no traceback is shown."""


class InputError(ExpectedError):
    """Bad input: the message names the file, the line/row or clip, the column and what was expected."""

    def __init__(self, path, message: str, *, line: int | None = None, column: str | None = None,
                 row: int | None = None):
        where = str(path)
        if line is not None:
            where += f", line {line}"
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.column, self.row = str(path), line, column, row


class IntermediateError(InputError):
    """A Parquet file of the workflow cannot be used: it is damaged or truncated (it fails its page
    checksums, its column digests or cannot be decoded), or it is intact but was written for another
    path (``what`` "not the file its rule wrote for this path"). The message names the file, says
    what failed and how to rebuild it; ``moved_to`` is where the file was moved aside (None when it
    stayed in place)."""

    def __init__(self, path, reason: str, remedy: str, *, moved_to=None, what: str = "damaged"):
        ValueError.__init__(self, f"{path} is {what} ({reason}): {remedy}")
        self.path, self.line, self.column, self.row = str(path), None, None, None
        self.reason, self.moved_to = reason, None if moved_to is None else str(moved_to)


class OutputError(ExpectedError):
    """An output file that cannot be written (no permission, a full disk): the message names the
    output, not the temporary file it was being written through."""

    def __init__(self, path, message: str):
        super().__init__(f"{path}: {message}")
        self.path = str(path)


class ConfigError(ExpectedError):
    """A config file or value that is not a valid workflow config: the message names the key, and
    the file and line when they are known; ``keys`` is the key's path (empty: the file as a whole)."""

    def __init__(self, message: str, keys: Sequence[str] = ()):
        super().__init__(message)
        self.keys = tuple(keys)


def one_line(exc: BaseException) -> str:
    """An expected error's message on one line (a message listing several problems joins them)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return " ".join(lines) if lines else type(exc).__name__


def require_file(path, what: str = "file") -> None:
    """Raise InputError unless ``path`` is a readable regular file, saying why it is not: missing,
    a link to nothing, a symbolic link loop, a folder, no permission (``os.path.exists`` says
    "no such file" for all of these)."""
    import errno
    import os
    import stat

    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(path, f"a symbolic link to {os.readlink(path)!r}, which does not exist") from None
        raise InputError(path, f"no such {what}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(path, "a symbolic link loop (following its links leads back to them): point it at "
                                   f"the real {what}") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise InputError(path, f"no permission to reach the {what}") from None
        if exc.errno == errno.ENOTDIR:
            raise InputError(path, f"no such {what} (a part of the path is not a folder)") from None
        raise InputError(path, f"cannot be read: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(path, f"is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(path, f"not a regular {what} (a device, pipe or socket)")
    if not os.access(path, os.R_OK):
        raise InputError(path, f"no permission to read the {what}")


def stop(message: str, report: Callable[[str], object] | None = None) -> NoReturn:
    """End the program with ``message`` on one line and exit status 1, without a traceback: how the
    workflow's rule files stop Snakemake while it reads them (a bad config value, an unknown
    system), since an exception raised there is printed with the rule file's frames. ``report``
    shows the message (Snakemake's ``logger.error``; default: stderr)."""
    if report is None:
        import sys

        print(message, file=sys.stderr)
    else:
        report(message)
    raise SystemExit(1)
