"""Systems as data: importers that turn upstream files and user files into key-clip and tuple tables.

Every system, ours, upstream's or a user's, is one :data:`~cookproc.core.schemas.KEYCLIPS` table and/or
one :data:`~cookproc.core.schemas.TUPLES` table with exactly one row per benchmark clip.

User format (Parquet or JSONL, one record per clip, every benchmark clip exactly once):
- key clips: ``video_id`` (str), ``clip_idx`` (int), ``is_key`` (bool or 0/1), optional ``score`` (float);
- tuples: ``video_id``, ``clip_idx``, ``verbs`` (list of str), ``args`` (list of str).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pyarrow as pa

from cookproc.data.dataset import video_id_from_url
from cookproc.core.errors import InputError
from cookproc.core.parquet_io import read_table
from cookproc.core.schemas import KEYCLIPS, TUPLES, to_table


#: How much of an offending value a message echoes (a 5 MB ``video_id`` must not flood the log).
SHOWN_CHARS = 80


def cut(text: str) -> str:
    """``text``, cut at :data:`SHOWN_CHARS` characters with an ellipsis and the full length."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text)} characters)"


def shown(value) -> str:
    """``repr(value)``, :func:`cut`."""
    return cut(repr(value))


def clip_keys(clips: pa.Table) -> list[tuple[str, int]]:
    return list(zip(clips.column("video_id").to_pylist(), clips.column("clip_idx").to_pylist()))


def clips_by_video(clips: pa.Table) -> dict[str, list[int]]:
    """video id → its clip indices in order."""
    out: dict[str, list[int]] = {}
    for video_id, clip_idx in clip_keys(clips):
        out.setdefault(video_id, []).append(clip_idx)
    for indices in out.values():
        indices.sort()
    return out


def _per_video_lists(path: Path, per_video: dict[str, list], clips: pa.Table, what: str) -> Iterable[tuple[str, int, object]]:
    """Pair per-video lists (in clip order) with the benchmark clips, checking videos and lengths."""
    expected = clips_by_video(clips)
    missing = sorted(set(expected) - set(per_video))
    extra = sorted(set(per_video) - set(expected))
    if missing or extra:
        raise InputError(path, f"{what}: videos missing {shown(missing[:5])} ({len(missing)}) / unknown "
                               f"{shown(extra[:5])} ({len(extra)})")
    for video_id in sorted(expected):
        values, indices = per_video[video_id], expected[video_id]
        if len(values) != len(indices):
            raise InputError(path, f"{what}: video {video_id} has {len(values)} clips, the benchmark {len(indices)}")
        for clip_idx, value in zip(indices, values):
            yield video_id, clip_idx, value


def import_upstream_keyclips(path: str | Path, clips: pa.Table, system: str = "upstream-neural") -> pa.Table:
    """The paper's neural key-clip predictions: ``key_sentence_prediction`` of the attached TSV, by file order."""
    path = Path(path)
    per_video: dict[str, list[bool]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        for column in ("VideoUrl", "key_sentence_prediction"):
            if column not in (reader.fieldnames or []):
                raise InputError(path, f"missing column {column!r}", line=1)
        for row in reader:
            line = reader.line_num
            try:
                video_id = video_id_from_url(row["VideoUrl"])
            except ValueError as exc:
                raise InputError(path, str(exc), line=line, column="VideoUrl") from None
            flag = (row["key_sentence_prediction"] or "").strip()
            if flag not in ("0", "1"):
                raise InputError(path, f"expected 0 or 1, got {flag!r}", line=line, column="key_sentence_prediction")
            per_video.setdefault(video_id, []).append(flag == "1")
    rows = [{"system": system, "video_id": v, "clip_idx": c, "is_key": k, "score": None, "fold": None}
            for v, c, k in _per_video_lists(path, per_video, clips, "key_sentence_prediction")]
    return to_table(rows, KEYCLIPS, what=str(path))


def _string_list(path: Path, value, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InputError(path, f"{where}: expected a list of strings, got {shown(value)}")
    return value


def import_upstream_srl(path: str | Path, clips: pa.Table, system: str = "upstream-srl-heur") -> tuple[pa.Table, pa.Table]:
    """Upstream's SRL-with-heuristics output ``[verbs, args]``: (key clips, tuples).

    A clip is key exactly when a frame survived the heuristics, i.e. when it has a verb.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    if not (isinstance(data, list) and len(data) == 2 and all(isinstance(d, dict) for d in data)):
        raise InputError(path, "expected [verbs, args], each {youtube id: [per-clip list of strings]}")
    verbs = list(_per_video_lists(path, data[0], clips, "verbs"))
    args = list(_per_video_lists(path, data[1], clips, "args"))
    tuples, keys = [], []
    for (video_id, clip_idx, clip_verbs), (_, _, clip_args) in zip(verbs, args):
        where = f"video {video_id} clip {clip_idx}"
        clip_verbs = _string_list(path, clip_verbs, where + " verbs")
        clip_args = _string_list(path, clip_args, where + " args")
        tuples.append({"system": system, "video_id": video_id, "clip_idx": clip_idx,
                       "verbs": clip_verbs, "args": clip_args})
        keys.append({"system": system, "video_id": video_id, "clip_idx": clip_idx,
                     "is_key": bool(clip_verbs), "score": None, "fold": None})
    return to_table(keys, KEYCLIPS, what=str(path)), to_table(tuples, TUPLES, what=str(path))


# ----------------------------------------------------------------------------- user systems
KEYCLIP_FIELDS = {"video_id", "clip_idx", "is_key"}
KEYCLIP_OPTIONAL = {"score"}
TUPLE_FIELDS = {"video_id", "clip_idx", "verbs", "args"}

#: A user system is one file ``<name>.<kind>.<format>`` of the user-systems folder (kind and format
#: in any case); its name becomes ``user-<name>`` in the tables, paths and logs.
USER_KINDS = ("keyclips", "tuples")
USER_FORMATS = ("jsonl", "parquet")
USER_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_USER_FILE = re.compile(rf"(?P<name>.*)\.(?P<kind>{'|'.join(USER_KINDS)})\.(?P<format>{'|'.join(USER_FORMATS)})",
                        re.IGNORECASE)


@dataclass
class UserSystems:
    """What the user-systems folder holds: the files of each (kind, name), and one line per problem
    (a file that is no system's, a bad name, two files for one system). A system with a problem is
    left out of the tables, and the workflow's check job fails listing every problem."""

    folder: str
    candidates: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def names(self, kind: str) -> list[str]:
        """The systems of ``kind`` that have exactly one file."""
        return sorted(name for (k, name), files in self.candidates.items() if k == kind and len(files) == 1)

    def files(self, kind: str, name: str) -> list[str]:
        """Every file found for system ``name`` of ``kind`` (one when all is well)."""
        return list(self.candidates.get((kind, name), []))

    def message(self, *, one_line: bool = False) -> str:
        """The one message listing every problem (a line each, or ``one_line``: on one line), or ""
        when there is none."""
        if not self.problems:
            return ""
        head = (f"{self.folder}: {len(self.problems)} problem(s) with user systems (each must be one file "
                f"<name>.keyclips.jsonl|parquet or <name>.tuples.jsonl|parquet, <name> matching {USER_NAME}); "
                "these are left out of the tables until fixed:")
        if one_line:
            return f"{head} " + "; ".join(self.problems)
        return head + "\n" + "\n".join(f"  - {p}" for p in self.problems)


def scan_user_systems(folder: str | os.PathLike) -> UserSystems:
    """Sort the entries of the user-systems folder into systems and problems (hidden files, such as
    ``.gitkeep``, are left alone; a missing folder holds no systems)."""
    scan = UserSystems(str(folder))
    try:
        entries = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return scan
    for entry in entries:
        if entry.startswith("."):
            continue
        path = os.path.join(folder, entry)
        match = _USER_FILE.fullmatch(entry)
        if not match:
            scan.problems.append(f"{shown(entry)}: not a system file (move it out of the folder or rename it)")
        elif not os.path.isfile(path):
            scan.problems.append(f"{shown(entry)}: a folder, not a file")
        elif not re.fullmatch(USER_NAME, match["name"]):
            scan.problems.append(f"{shown(entry)}: the name {shown(match['name'])} must start with a letter or "
                                 "digit and hold only letters, digits, '_', '.' and '-' (rename the file)")
        else:
            scan.candidates.setdefault((match["kind"].lower(), match["name"]), []).append(path)
    for (kind, name), files in sorted(scan.candidates.items()):
        if len(files) > 1:
            scan.problems.append(f"user system {name!r} ({kind}): {len(files)} files, "
                                 f"{', '.join(os.path.basename(f) for f in files)}; keep one")
    return scan


def user_system_file(files: Iterable[str], kind: str, name: str, folder: str | os.PathLike) -> Path:
    """The one file of user system ``name``, or an InputError naming what was found instead."""
    files = sorted(files)
    if len(files) == 1:
        return Path(files[0])
    if not files:
        raise InputError(folder, f"user system {name!r} ({kind}): no file {name}.{kind}.jsonl or "
                                 f"{name}.{kind}.parquet")
    raise InputError(folder, f"user system {name!r} ({kind}): {len(files)} files, "
                             f"{', '.join(os.path.basename(f) for f in files)}; keep one")


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (json keeps the last silently)."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _where(path: Path, number: int) -> dict:
    """``line=`` for a JSONL file, ``row=`` (1-based) for a Parquet file: what a message names."""
    return {"row": number} if path.suffix.lower() == ".parquet" else {"line": number}


def _read_records(path: Path) -> list[tuple[int, dict]]:
    """(line or row number, record) from a JSONL or Parquet file."""
    if path.suffix.lower() == ".jsonl":
        records = []
        with open(path, encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line, object_pairs_hook=_unique_keys)
                except json.JSONDecodeError as exc:
                    raise InputError(path, f"invalid JSON: {exc.msg}", line=line_no) from None
                except _DuplicateKey as exc:
                    raise InputError(path, f"the key {shown(exc.args[0])} appears twice in one object (JSON keeps "
                                           "only the last): give it once", line=line_no) from None
                if not isinstance(record, dict):
                    raise InputError(path, "expected one JSON object per line", line=line_no)
                records.append((line_no, record))
        return records
    if path.suffix.lower() == ".parquet":
        return [(i + 1, r) for i, r in enumerate(read_table(path, user_file=True).to_pylist())]
    raise InputError(path, "expected a .jsonl or .parquet file")


def _check_coverage(path: Path, seen: dict[tuple[str, int], int], clips: pa.Table) -> None:
    expected = set(clip_keys(clips))
    missing = sorted(expected - set(seen))
    if missing:
        raise InputError(path, f"{len(missing)} benchmark clips have no prediction, e.g. "
                               f"{[f'{v}#{c}' for v, c in missing[:3]]}")


def _user_records(path: Path, clips: pa.Table, required: set[str], optional: set[str]):
    known = set(clip_keys(clips))
    seen: dict[tuple[str, int], int] = {}
    for line, record in _read_records(path):
        where = _where(path, line)
        fields = set(record)
        if not required <= fields or fields - required - optional:
            raise InputError(path, f"expected fields {sorted(required)} (optional {sorted(optional)}), "
                                   f"got {shown(sorted(fields))}", **where)
        video_id, clip_idx = record["video_id"], record["clip_idx"]
        if not isinstance(video_id, str) or isinstance(clip_idx, bool) or not isinstance(clip_idx, int):
            raise InputError(path, f"expected video_id string and clip_idx integer, got {shown(video_id)}, "
                                   f"{shown(clip_idx)}", **where)
        key = (video_id, clip_idx)
        if key not in known:
            raise InputError(path, f"clip {cut(f'{video_id}#{clip_idx}')} is not in the benchmark", **where)
        if key in seen:
            raise InputError(path, f"clip {video_id}#{clip_idx} appears twice (first on {next(iter(where))} "
                                   f"{seen[key]})", **where)
        seen[key] = line
        yield line, record
    _check_coverage(path, seen, clips)


def _finite_number(value) -> bool:
    """A number (not a boolean) that a float holds, neither NaN nor infinite (JSON's NaN/Infinity)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def read_user_keyclips(path: str | Path, clips: pa.Table, system: str) -> pa.Table:
    """A user's key-clip system. Its scores are all or nothing: a score that is NaN or infinite, or
    missing (null, or absent in JSONL) while other clips have one, is an error naming its line or
    row (a system with some scores missing would silently be scored as decisions only)."""
    path = Path(path)
    rows = []
    first_scored = first_unscored = None
    for line, record in _user_records(path, clips, KEYCLIP_FIELDS, KEYCLIP_OPTIONAL):
        flag = record["is_key"]
        if isinstance(flag, float) or flag not in (0, 1):
            raise InputError(path, f"is_key must be true/false or 0/1, got {shown(flag)}", **_where(path, line))
        score = record.get("score")
        if score is not None and not _finite_number(score):
            raise InputError(path, f"score must be a finite number, got {shown(score)}", **_where(path, line))
        if score is None:
            first_unscored = first_unscored or line
        else:
            first_scored = first_scored or line
        if first_scored and first_unscored:
            unit = next(iter(_where(path, line)))
            raise InputError(path, f"this clip has no score (null, NaN written as null, or absent) but the clip on "
                                   f"{unit} {first_scored} has one: give every clip a finite score, or none",
                             **_where(path, first_unscored))
        rows.append({"system": system, "video_id": record["video_id"], "clip_idx": record["clip_idx"],
                     "is_key": bool(flag), "score": None if score is None else float(score), "fold": None})
    return to_table(rows, KEYCLIPS, what=str(path))


def read_user_tuples(path: str | Path, clips: pa.Table, system: str) -> pa.Table:
    path = Path(path)
    rows = []
    for line, record in _user_records(path, clips, TUPLE_FIELDS, set()):
        where = f"{next(iter(_where(path, line)))} {line}"
        rows.append({"system": system, "video_id": record["video_id"], "clip_idx": record["clip_idx"],
                     "verbs": _string_list(path, record["verbs"], where + " verbs"),
                     "args": _string_list(path, record["args"], where + " args")})
    return to_table(rows, TUPLES, what=str(path))


def write_jsonl(table: pa.Table) -> str:
    """A table as JSONL text (the user format), for examples and tests."""
    out = io.StringIO()
    for row in table.to_pylist():
        row.pop("system", None)
        row.pop("fold", None)
        out.write(json.dumps(row, sort_keys=True) + "\n")
    return out.getvalue()
