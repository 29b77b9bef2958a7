"""The one exception type for bad input data."""
from __future__ import annotations


class InputError(ValueError):
    """Bad input: the message names the file, the line/row or clip, the column and what was expected."""

    def __init__(self, path, message: str, *, line: int | None = None, column: str | None = None):
        where = str(path)
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.column = str(path), line, column


class IntermediateError(InputError):
    """A Parquet file is damaged or truncated: it fails its page checksums, its column digests or
    cannot be decoded. The message names the file, says what failed and how to rebuild it;
    ``moved_to`` is where the damaged file was moved aside (None when it stayed in place)."""

    def __init__(self, path, reason: str, remedy: str, *, moved_to=None):
        ValueError.__init__(self, f"{path} is damaged ({reason}): {remedy}")
        self.path, self.line, self.column = str(path), None, None
        self.reason, self.moved_to = reason, None if moved_to is None else str(moved_to)
