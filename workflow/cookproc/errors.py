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
