"""The benchmark CSV (``youcook2/reviewed_0812.csv``) parsed into one row per clip (docs/protocol.md §2).

Parsing follows upstream's evaluator exactly: gold verbs are the ``Verb`` cell split on ``,`` and
``;``; gold arguments are the five argument cells, each split on ``;``; every item stripped and
lowercased, empty items dropped. The lists keep the annotation's order and duplicates (nothing is
lost); scoring treats them as sets, as upstream does.

Anything that cannot be parsed stops with an :class:`InputError` naming file, line and column.
The one known dirty cell that would otherwise be a duplicate clip is corrected through an explicit,
versioned repair table (``workflow/schemas/upstream-repairs.tsv``), never silently.
"""
from __future__ import annotations

import csv
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.core.schemas import CLIPS, GOLD_ARG_ROLES, to_table

log = logging.getLogger(__name__)

#: Source column of each gold argument role, in upstream's concatenation order.
ROLE_COLUMNS = {
    "objects": "Object(directly related with Verb)",
    "locations": "Location",
    "times": "Time",
    "temperatures": "Temperature",
    "others": "Other important phrase(like with",
}
REQUIRED_COLUMNS = ("Title", "VideoUrl", "TimeStamp", "Sentence", "RowNumber", "IsUsefulSentence",
                    "Key steps", "Verb", *ROLE_COLUMNS.values())

# MM:SS.s (the usual form) or H:MM:SS(.s) (a few rows).
_TIMESTAMP = re.compile(r"^(?:(?P<h>\d+):(?P<m2>[0-5]?\d)|(?P<m>\d+)):(?P<s>[0-5]?\d(?:\.\d+)?)$")


def parse_timestamp(text: str) -> float:
    """Seconds from ``MM:SS.s`` or ``H:MM:SS[.s]``; ``ValueError`` for anything else."""
    match = _TIMESTAMP.match(text.strip())
    if not match:
        raise ValueError(f"expected a timestamp MM:SS.s or H:MM:SS, got {text!r}")
    if match["h"] is not None:
        minutes = int(match["h"]) * 60 + int(match["m2"])
    else:
        minutes = int(match["m"])
    return round(minutes * 60 + float(match["s"]), 6)


def split_items(cell: str, separators: str = ";") -> list[str]:
    """Upstream's item split: replace each separator by the first, split, strip, lowercase, drop empties."""
    for sep in separators[1:]:
        cell = cell.replace(sep, separators[0])
    return [item.strip().lower() for item in cell.split(separators[0]) if item.strip()]


def gold_verbs(cell: str) -> list[str]:
    return split_items(cell, ";,")


def video_id_from_url(url: str) -> str:
    """The YouTube id after ``?v=`` (upstream: ``url.split('?v=')[1]``)."""
    if "?v=" not in url:
        raise ValueError(f"expected a YouTube URL with '?v=', got {url!r}")
    vid = url.split("?v=", 1)[1].split("&", 1)[0].strip()
    if not vid:
        raise ValueError(f"empty video id in {url!r}")
    return vid


@dataclass(frozen=True)
class Repair:
    """One documented correction of a dirty upstream cell."""

    line: int
    column: str
    old: str
    new: str
    reason: str


def read_repairs(path: str | Path) -> list[Repair]:
    """Read the repair table (TSV with header line, column, old, new, reason; # comments)."""
    repairs = []
    with open(path, encoding="utf-8", newline="") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
        for row in rows:
            repairs.append(Repair(int(row["line"]), row["column"], row["old"], row["new"], row["reason"]))
    return repairs


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(path, f"not valid UTF-8 (byte {raw[exc.start]:#04x} at character {column})",
                         line=line) from None


def read_benchmark_csv(path: str | Path, *, repairs: Sequence[Repair] = (),
               video_durations: dict[str, float] | None = None) -> pa.Table:
    """Parse the benchmark CSV into a :data:`~cookproc.core.schemas.CLIPS` table.

    ``video_durations`` (video id → seconds) gives the end of each video's last clip; without it
    that end is null.
    """
    path = Path(path)
    text = _decode(path, path.read_bytes())
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(path, "empty file: expected a header line", line=1) from None
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise InputError(path, f"missing column(s) {missing}; header is {header}", line=1)
    index = {name: header.index(name) for name in REQUIRED_COLUMNS}
    pending = {(r.line, r.column): r for r in repairs}

    rows = []
    seen: dict[tuple[str, int], int] = {}
    line_start = reader.line_num + 1
    for record in reader:
        line = line_start
        line_start = reader.line_num + 1
        if not record or all(not cell.strip() for cell in record):
            continue
        if len(record) != len(header):
            raise InputError(path, f"expected {len(header)} fields, found {len(record)}", line=line)

        def cell(column: str) -> str:
            value = record[index[column]]
            repair = pending.pop((line, column), None)
            if repair is not None:
                if value != repair.old:
                    raise InputError(path, f"repair expects {repair.old!r} but the cell holds {value!r}",
                                     line=line, column=column)
                log.warning("%s line %d column %r: %r -> %r (%s)", path, line, column, value,
                            repair.new, repair.reason)
                value = repair.new
            return value

        def parsed(column: str, parse, expected: str):
            value = cell(column)
            try:
                return parse(value)
            except ValueError:
                raise InputError(path, f"expected {expected}, got {value!r}", line=line, column=column) from None

        video_id = parsed("VideoUrl", video_id_from_url, "a YouTube URL with '?v=<id>'")
        clip_idx = parsed("RowNumber", _non_negative_int, "a non-negative integer")
        is_key = parsed("IsUsefulSentence", _flag, "0 or 1")
        start_s = parsed("TimeStamp", parse_timestamp, "a timestamp MM:SS.s or H:MM:SS")
        key = (video_id, clip_idx)
        if key in seen:
            raise InputError(path, f"duplicate clip (video {video_id}, RowNumber {clip_idx}); first seen on "
                                   f"line {seen[key]}", line=line, column="RowNumber")
        seen[key] = line
        roles = {role: split_items(cell(column)) for role, column in ROLE_COLUMNS.items()}
        rows.append({
            "video_id": video_id,
            "recipe": cell("Title").strip(),
            "clip_idx": clip_idx,
            "start_s": start_s,
            "end_s": None,
            "sentence": cell("Sentence"),
            "is_key": is_key,
            "gold_verbs": gold_verbs(cell("Verb")),
            "gold_args": [item for role in GOLD_ARG_ROLES for item in roles[role]],
            **{f"gold_{role}": roles[role] for role in GOLD_ARG_ROLES},
            "key_steps": cell("Key steps").strip(),
            "source_line": line,
        })
    if pending:
        raise InputError(path, f"repairs for lines {sorted(k[0] for k in pending)} matched no cell (the repair table is for the pinned upstream CSV; set upstream.repairs: null for other data)")
    if not rows:
        raise InputError(path, "no data rows")
    _check_videos(path, rows)
    _fill_end_times(rows, video_durations or {})
    return to_table(rows, CLIPS, what=str(path))


def _non_negative_int(text: str) -> int:
    value = int(text.strip())
    if value < 0:
        raise ValueError(text)
    return value


def _flag(text: str) -> bool:
    value = int(text.strip())
    if value not in (0, 1):
        raise ValueError(text)
    return bool(value)


def _check_videos(path: Path, rows: list[dict]) -> None:
    """Each video's clips must be RowNumber 0..n-1 in file order, with non-decreasing start times."""
    by_video: dict[str, list[dict]] = {}
    for row in rows:
        by_video.setdefault(row["video_id"], []).append(row)
    for video_id, clips in by_video.items():
        for expected, row in enumerate(clips):
            if row["clip_idx"] != expected:
                raise InputError(path, f"video {video_id}: expected RowNumber {expected} (clips in order "
                                       f"0..n-1), got {row['clip_idx']}", line=row["source_line"],
                                 column="RowNumber")
        for prev, row in zip(clips, clips[1:]):
            if row["start_s"] < prev["start_s"]:
                raise InputError(path, f"video {video_id}: clip {row['clip_idx']} starts before clip "
                                       f"{prev['clip_idx']}", line=row["source_line"], column="TimeStamp")
        recipes = {row["recipe"] for row in clips}
        if len(recipes) != 1:
            raise InputError(path, f"video {video_id} has several titles {sorted(recipes)}",
                             line=clips[0]["source_line"], column="Title")


def _fill_end_times(rows: list[dict], durations: dict[str, float]) -> None:
    """Clip i ends where clip i+1 starts; a video's last clip ends at the video's end if known."""
    for row, nxt in zip(rows, rows[1:] + [None]):
        if nxt is not None and nxt["video_id"] == row["video_id"]:
            row["end_s"] = nxt["start_s"]
        else:
            end = durations.get(row["video_id"])
            row["end_s"] = max(end, row["start_s"]) if end is not None else None


def video_durations_from_manifest(path: str | Path) -> dict[str, float]:
    """Video lengths from upstream's ``clip_manifest_10s.txt`` (``clipid youtubeid start end``)."""
    durations: dict[str, float] = {}
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise InputError(path, f"expected 'clipid youtubeid start end', got {line.strip()!r}", line=line_no)
            try:
                end = float(parts[3])
            except ValueError:
                raise InputError(path, f"expected a number of seconds, got {parts[3]!r}", line=line_no,
                                 column="end") from None
            durations[parts[1]] = max(end, durations.get(parts[1], 0.0))
    return durations


def iter_videos(table: pa.Table) -> Iterable[tuple[str, list[dict]]]:
    """(video_id, clips in clip order) in the table's video order."""
    current, clips = None, []
    for row in table.to_pylist():
        if row["video_id"] != current:
            if clips:
                yield current, clips
            current, clips = row["video_id"], []
        clips.append(row)
    if clips:
        yield current, clips
