"""Which pages of a Parquet file carry a CRC checksum.

pyarrow verifies a page's CRC only when the page carries one, and says nothing of pages without
(a file another tool wrote has none by default): whether a file has them is read here from its page
headers (Thrift compact protocol; PageHeader field 4 is the optional CRC), so that
``cookproc inspect`` says exactly what it verified.
"""
from __future__ import annotations

import os

import pyarrow as pa

_PAGE_HEADER_CRC_FIELD = 4


class _Compact:
    """Just enough of Thrift's compact protocol to walk a struct and skip what it does not need."""

    def __init__(self, data: bytes, pos: int = 0):
        self.data, self.pos = data, pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("truncated page header")
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ValueError("bad varint in a page header")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, type_: int, depth: int = 0) -> None:
        if depth > 32:
            raise ValueError("page header nested too deep")
        if type_ in (1, 2):  # booleans: the value is in the type
            return
        if type_ == 3:
            self.byte()
        elif type_ in (4, 5, 6):
            self.varint()
        elif type_ == 7:
            self.pos += 8
        elif type_ == 8:
            size = self.varint()  # read before pos is taken: `pos += varint()` would lose its bytes
            self.pos += size
        elif type_ in (9, 10):
            head = self.byte()
            size, element = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            for _ in range(size):
                self.byte() if element in (1, 2) else self.skip(element, depth + 1)
        elif type_ == 11:
            size = self.varint()
            if size:
                kinds = self.byte()
                for _ in range(size):
                    self.skip(kinds >> 4, depth + 1)
                    self.skip(kinds & 0x0F, depth + 1)
        elif type_ == 12:
            self.struct_fields(depth + 1, skip_all=True)
        else:
            raise ValueError(f"unknown Thrift type {type_} in a page header")
        if self.pos > len(self.data):
            raise ValueError("truncated page header")

    def struct_fields(self, depth: int = 0, *, skip_all: bool = False) -> dict[int, int]:
        """The struct's i32 fields (id -> value); other fields skipped."""
        fields, last = {}, 0
        while True:
            head = self.byte()
            if head == 0:
                return fields
            type_, delta = head & 0x0F, head >> 4
            last = last + delta if delta else self.zigzag()
            if type_ == 5 and not skip_all:
                fields[last] = self.zigzag()
            else:
                self.skip(type_, depth)


def page_checksum_counts(path: str | os.PathLike) -> tuple[int, int] | None:
    """``(pages with a CRC, pages)`` over every column chunk of a Parquet file, from its page
    headers; None when the headers cannot be walked (a damaged file, or an encrypted one)."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path)
        with open(path, "rb") as handle:
            data = handle.read()
        with_crc = total = 0
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                start = chunk.data_page_offset
                if chunk.has_dictionary_page and chunk.dictionary_page_offset:
                    start = min(start, chunk.dictionary_page_offset)
                end = start + chunk.total_compressed_size
                pos = start
                while pos < end:
                    reader = _Compact(data, pos)
                    header = reader.struct_fields()
                    if 3 not in header or header[3] < 0:
                        raise ValueError("page header without its size")
                    total += 1
                    with_crc += _PAGE_HEADER_CRC_FIELD in header
                    pos = reader.pos + header[3]
                if pos != end:
                    raise ValueError("pages overrun their column chunk")
        return with_crc, total
    except (OSError, ValueError, IndexError, pa.ArrowException):
        return None
