"""Column digests: what Parquet page checksums cannot protect, and where a damaged output goes.

Page checksums (CRC32, written and verified by ``cookproc.core.schemas``) cover page bodies only. Page
headers and the footer (schema, offsets, row counts, key-value metadata) are unprotected, so a
flipped byte there can make a file read back *different* data without an error. ``write_parquet``
therefore also stores, in the footer's key-value metadata, a BLAKE2b digest of each column's
content and of the provenance entry beside it, and ``read_table`` recomputes the digests of the
columns it reads and checks the provenance entry's.

A digest covers the column's Arrow type, its length, which slots are null and the values, never
the buffer layout: chunking, slice offsets, an absent validity bitmap and the bytes under null
slots (which Arrow leaves undefined) do not change it, and nothing depends on PYTHONHASHSEED.
Fixed-width values are hashed as their native (little-endian) bytes, so a changed float bit, -0.0
against 0.0 or a NaN payload all count as changes.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Footer key-value entry holding the digests; its value names the digest format.
DIGESTS_KEY = b"cookproc.column_digests"
DIGEST_FORMAT = "cookproc-blake2b-256/1"

#: The workflow's output folder (relative to the working directory Snakemake runs in): only files
#: below it are moved aside when damaged, because only they can be rebuilt by a plain rerun.
RESULTS_DIR = "results"


def _blake2b() -> "hashlib._Hash":
    return hashlib.blake2b(digest_size=32)


def _is_binary_like(type_: pa.DataType) -> bool:
    return (pa.types.is_binary(type_) or pa.types.is_string(type_) or pa.types.is_large_binary(type_)
            or pa.types.is_large_string(type_) or pa.types.is_binary_view(type_)
            or pa.types.is_string_view(type_))


def _is_list_like(type_: pa.DataType) -> bool:
    return (pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_)
            or pa.types.is_list_view(type_) or pa.types.is_large_list_view(type_))


def _type_tag(type_: pa.DataType) -> str:
    """The type as the digest sees it: ``str(type)`` except that the name of a list's child field
    (``item`` in Arrow, ``element`` after a Parquet round trip) and nested nullability are left out."""
    if pa.types.is_fixed_size_list(type_):
        return f"fixed_size_list[{type_.list_size}]<{_type_tag(type_.value_type)}>"
    if pa.types.is_map(type_):
        return f"map<{_type_tag(type_.key_type)},{_type_tag(type_.item_type)}>"
    if _is_list_like(type_):
        return f"{type(type_).__name__}<{_type_tag(type_.value_type)}>"
    if pa.types.is_struct(type_):
        return "struct<" + ",".join(f"{f.name}:{_type_tag(f.type)}" for f in type_) + ">"
    return str(type_)


class _NodeHasher:
    """Streams one node of a column's type tree, chunk after chunk; nested types have children.

    Each stream is a concatenation of per-slot records, so splitting the column into chunks
    anywhere feeds the same bytes."""

    def __init__(self, type_: pa.DataType):
        self.type = type_
        self.count = 0
        self.nulls = _blake2b()    # positions of null slots, counted over all chunks
        self.lengths = _blake2b()  # per-slot lengths of variable-size values (lists, strings)
        self.values = _blake2b()   # the values, nulls zeroed or empty
        self.children: dict[int, _NodeHasher] = {}

    def _child(self, index: int, type_: pa.DataType) -> "_NodeHasher":
        if index not in self.children:
            self.children[index] = _NodeHasher(type_)
        return self.children[index]

    def update(self, arr: pa.Array) -> None:
        # Hash what the values mean, not how they are encoded.
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if isinstance(arr.type, pa.ExtensionType):
            arr = arr.storage
        null_mask = None
        if arr.null_count:
            null_mask = arr.is_null().to_numpy(zero_copy_only=False)
            self.nulls.update((np.flatnonzero(null_mask) + self.count).astype("<i8"))
        self._update_values(arr, null_mask)
        self.count += len(arr)

    def _update_values(self, arr: pa.Array, null_mask) -> None:
        n, type_ = len(arr), arr.type
        if n == 0 or pa.types.is_null(type_):
            return
        if pa.types.is_boolean(type_):
            self.values.update(pc.fill_null(arr, False).to_numpy(zero_copy_only=False))
        elif pa.types.is_struct(type_):
            # flatten() applies the parent's offset and nulls to the children.
            for index, child in enumerate(arr.flatten()):
                self._child(index, type_.field(index).type).update(child)
        elif _is_list_like(type_):
            self.lengths.update(pc.fill_null(pc.list_value_length(arr), 0).to_numpy().astype("<i8"))
            valid = arr.filter(arr.is_valid()) if arr.null_count else arr
            self._child(0, type_.value_type).update(valid.flatten())
        elif _is_binary_like(type_):
            arr = pc.fill_null(arr.cast(pa.large_binary()), pa.scalar(b"", pa.large_binary()))
            offsets = np.frombuffer(arr.buffers()[1], dtype="<i8")[arr.offset:arr.offset + n + 1]
            self.lengths.update(np.diff(offsets).astype("<i8"))
            if offsets[-1] > offsets[0]:
                self.values.update(memoryview(arr.buffers()[2])[offsets[0]:offsets[-1]])
        elif self._fixed_width(type_) and len(arr.buffers()) == 2:
            width = type_.bit_width // 8
            raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * width:(arr.offset + n) * width]
            if null_mask is not None:
                raw = raw.reshape(n, width).copy()
                raw[null_mask] = 0
            self.values.update(np.ascontiguousarray(raw))
        else:
            # Rare types (maps, unions, ...): one length-prefixed repr per slot.
            for value in arr.to_pylist():
                record = repr(value).encode("utf-8")
                self.values.update(len(record).to_bytes(8, "little") + record)

    @staticmethod
    def _fixed_width(type_: pa.DataType) -> bool:
        try:
            return type_.bit_width % 8 == 0
        except ValueError:
            return False

    def digest(self) -> bytes:
        out = _blake2b()
        out.update(f"{_type_tag(self.type)}\0{self.count}\0".encode("utf-8"))
        for stream in (self.nulls, self.lengths, self.values):
            out.update(stream.digest())
        for index in sorted(self.children):
            out.update(self.children[index].digest())
        return out.digest()


def column_digest(column: pa.ChunkedArray | pa.Array) -> str:
    """BLAKE2b-256 (hex) of a column's type and content, independent of its chunking and layout."""
    hasher = _NodeHasher(column.type)
    for chunk in (column.chunks if isinstance(column, pa.ChunkedArray) else [column]):
        hasher.update(chunk)
    return hasher.digest().hex()


def _entry_digest(value: bytes) -> str:
    hasher = _blake2b()
    hasher.update(value)
    return hasher.hexdigest()


def digest_metadata(table: pa.Table, entries: Mapping[bytes, bytes] | None = None) -> dict[bytes, bytes]:
    """The key-value metadata entry that records the digest of every column of ``table`` and of
    each of the other footer ``entries`` (the provenance), which no page checksum covers."""
    digests = {name: column_digest(table.column(name)) for name in table.column_names}
    record = {"format": DIGEST_FORMAT, "columns": digests}
    if entries:
        record["entries"] = {key.decode("utf-8"): _entry_digest(value) for key, value in sorted(entries.items())}
    value = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return {DIGESTS_KEY: value.encode("utf-8")}


class Damage(Exception):
    """A file cannot be read back as it was written (the message says why)."""


class Misplaced(Damage):
    """An intact workflow file that its job wrote for another path (the message says which and by
    which rule): a file swapped or copied into place is never read as this path's."""


def _stored_record(metadata: Mapping[bytes, bytes] | None) -> dict | None:
    if not metadata or DIGESTS_KEY not in metadata:
        return None
    try:
        entry = json.loads(metadata[DIGESTS_KEY].decode("utf-8"))
        digests, entries = entry["columns"], entry.get("entries", {})
        if entry["format"] != DIGEST_FORMAT or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in (*digests.items(), *entries.items())):
            raise ValueError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise Damage("its column digests are unreadable") from None
    return entry


def stored_digests(metadata: Mapping[bytes, bytes] | None) -> dict[str, str] | None:
    """The column digests of a file's key-value metadata; None when it has none (a file this
    workflow did not write, or wrote before digests existed)."""
    entry = _stored_record(metadata)
    return None if entry is None else entry["columns"]


def verify_entries(metadata: Mapping[bytes, bytes] | None) -> None:
    """Check the footer entries whose digests were stored with the column digests (the provenance:
    files written before it was covered list none). A file without digests passes unchecked."""
    entry = _stored_record(metadata)
    for key, digest in ({} if entry is None else entry.get("entries", {})).items():
        value = metadata.get(key.encode("utf-8"))
        if value is None:
            raise Damage(f"its footer entry {key!r} is missing")
        if _entry_digest(value) != digest:
            raise Damage(f"its footer entry {key!r} differs from what was written")


def verify_digests(table: pa.Table, digests: Mapping[str, str]) -> None:
    """Check every column of ``table`` against the digest stored for it."""
    for name in table.column_names:
        if name not in digests or column_digest(table.column(name)) != digests[name]:
            raise Damage(f"column {name!r} differs from what was written")


def is_workflow_output(path: str | os.PathLike, root: str | os.PathLike | None = None) -> bool:
    """Whether ``path`` lies under the workflow's ``results/`` folder (of ``root``, default the
    working directory).

    The criterion is the path, not the file's metadata, because a damaged footer may no longer say
    who wrote the file; and a file elsewhere (user data, an upstream mirror) has no rule that could
    rebuild it, so moving it away would only turn damage into a missing input. The folders on the
    way are resolved (``results/`` may be a link to another disk), the file itself is not: a
    symbolic link placed under ``results/`` is a workflow output, wherever it points."""
    try:
        return place(path).is_relative_to((Path(root or Path.cwd()) / RESULTS_DIR).resolve())
    except OSError:
        return False


def place(path: str | os.PathLike) -> Path:
    """``path`` absolute, its folder resolved but not the file itself: where a reader finds it (a
    symbolic link to another file is the link, not its target)."""
    path = Path(os.path.abspath(path))
    return path.parent.resolve() / path.name


def move_aside(path: str | os.PathLike) -> Path | None:
    """Rename ``path`` to ``<path>.damaged`` (``.damaged.2``, ... when taken: nothing is overwritten).
    None when it could not be moved (already gone, or no permission)."""
    path = Path(path)
    for attempt in range(1, 1000):
        target = path.with_name(path.name + (".damaged" if attempt == 1 else f".damaged.{attempt}"))
        if target.exists():
            continue
        try:
            # Unlike a rename, never replaces a file that appeared meanwhile; a symbolic link is
            # moved as the link, not as a second name of the file it points to.
            os.link(path, target, follow_symlinks=False)
            os.unlink(path)
        except FileExistsError:
            continue
        except OSError:  # gone, no permission, or no hard links on this file system
            try:
                os.rename(path, target)
            except OSError:
                return None
        return target
    return None
