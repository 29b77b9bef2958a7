"""Tables 4 and 5: scores of systems in tidy form, and wide renderings laid out like the paper."""
from __future__ import annotations

import io
from typing import Mapping, Sequence

import pyarrow as pa

from .metrics import FIELDS, MODES, SimilarityCache, score_keyclips, score_table5_cells
from cookproc.core.schemas import CLIP_SCORES, KEYCLIPS, TABLE4, TABLE5, TUPLES, conform, to_table

ORACLE = "oracle"


def _clip_order(clips: pa.Table) -> list[tuple[str, int]]:
    return list(zip(clips.column("video_id").to_pylist(), clips.column("clip_idx").to_pylist()))


def align_to_clips(clips: pa.Table, table: pa.Table, columns: Sequence[str], *, what: str) -> dict[str, list]:
    """Columns of a per-clip system table in the benchmark's clip order (every clip exactly once)."""
    order = _clip_order(clips)
    keys = list(zip(table.column("video_id").to_pylist(), table.column("clip_idx").to_pylist()))
    position = {key: i for i, key in enumerate(keys)}
    if len(position) != len(keys):
        raise ValueError(f"{what}: a clip appears more than once")
    missing = [k for k in order if k not in position]
    extra = set(position) - set(order)
    if missing or extra:
        raise ValueError(f"{what}: {len(missing)} benchmark clips missing (e.g. {missing[:3]}), "
                         f"{len(extra)} unknown clips (e.g. {sorted(extra)[:3]})")
    index = [position[k] for k in order]
    return {c: [values[i] for i in index] for c in columns for values in [table.column(c).to_pylist()]}


def gold_sets(clips: pa.Table) -> dict[str, list[frozenset[str]]]:
    return {"verbs": [frozenset(v) for v in clips.column("gold_verbs").to_pylist()],
            "arguments": [frozenset(a) for a in clips.column("gold_args").to_pylist()]}


def prediction_sets(clips: pa.Table, tuples: pa.Table, *, what: str) -> dict[str, list[frozenset[str]]]:
    tuples = conform(tuples, TUPLES, what=what)
    cols = align_to_clips(clips, tuples, ["verbs", "args"], what=what)
    return {"verbs": [frozenset(v) for v in cols["verbs"]], "arguments": [frozenset(a) for a in cols["args"]]}


def keyclip_flags(clips: pa.Table, keyclips: pa.Table, *, what: str) -> list[bool]:
    keyclips = conform(keyclips, KEYCLIPS, what=what)
    return align_to_clips(clips, keyclips, ["is_key"], what=what)["is_key"]


def table4(clips: pa.Table, systems: Mapping[str, pa.Table]) -> pa.Table:
    """Key-clip Acc/P/R/F1 (percent) of each system, in the given order."""
    gold = clips.column("is_key").to_pylist()
    rows = []
    for name, table in systems.items():
        score = score_keyclips(gold, keyclip_flags(clips, table, what=f"key-clip system {name}"))
        rows.append({"system": name, "n_clips": score.n_clips, "accuracy": 100 * score.accuracy,
                     "precision": 100 * score.precision, "recall": 100 * score.recall, "f1": 100 * score.f1})
    return to_table(rows, TABLE4, what="table4")


def table5(clips: pa.Table, tuple_systems: Mapping[str, pa.Table], predicted_keyclips: Mapping[str, pa.Table],
           *, masked: bool = True, cache: SimilarityCache | None = None) -> pa.Table:
    """Tuple P/R/F1 (percent) of each system: oracle key clips, then each predicted key-clip source
    (upstream's counting, and the stricter masked variant when ``masked``)."""
    return table5_with_clip_scores(clips, tuple_systems, predicted_keyclips, masked=masked, cache=cache)[0]


def table5_with_clip_scores(clips: pa.Table, tuple_systems: Mapping[str, pa.Table],
                            predicted_keyclips: Mapping[str, pa.Table], *, masked: bool = True,
                            cache: SimilarityCache | None = None) -> tuple[pa.Table, pa.Table]:
    """:func:`table5` and the per-clip scores behind it (:data:`~cookproc.core.schemas.CLIP_SCORES`)."""
    cache = cache or SimilarityCache()
    gold = gold_sets(clips)
    order = _clip_order(clips)
    sources = {name: keyclip_flags(clips, t, what=f"key-clip system {name}") for name, t in predicted_keyclips.items()}
    rows = []
    clip_columns: dict[str, list] = {name: [] for name in CLIP_SCORES.names}
    for system, tuples in tuple_systems.items():
        pred = prediction_sets(clips, tuples, what=f"tuple system {system}")
        blocks = [(ORACLE, "oracle", None, False)]
        for source, flags in sources.items():
            blocks.append((source, "predicted", flags, False))
            if masked:
                blocks.append((source, "predicted-masked", flags, True))
        for source, counting, flags, mask in blocks:
            for cell in score_table5_cells(gold, pred, flags, masked=mask, cache=cache):
                per_clip = cell.pop("clips")
                rows.append({"system": system, "keyclips": source, "counting": counting, **cell,
                             "precision": 100 * cell["precision"], "recall": 100 * cell["recall"],
                             "f1": 100 * cell["f1"]})
                n = len(per_clip.positions)
                for name, value in (("system", system), ("keyclips", source), ("counting", counting),
                                    ("field", cell["field"]), ("mode", cell["mode"])):
                    clip_columns[name].extend([value] * n)
                clip_columns["video_id"].extend(order[i][0] for i in per_clip.positions)
                clip_columns["clip_idx"].extend(order[i][1] for i in per_clip.positions)
                clip_columns["precision"].extend(per_clip.precision)
                clip_columns["recall"].extend(per_clip.recall)
    return to_table(rows, TABLE5, what="table5"), pa.table(clip_columns, schema=CLIP_SCORES)


# ----------------------------------------------------------------------------- renderings
def fmt(value: float) -> str:
    """Percent with one decimal, as upstream prints (``"{:.1f}"``)."""
    return f"{value:.1f}"


def table4_wide(table: pa.Table) -> tuple[list[str], list[list[str]]]:
    header = ["System", "Acc", "P", "R", "F1"]
    body = [[r["system"], fmt(r["accuracy"]), fmt(r["precision"]), fmt(r["recall"]), fmt(r["f1"])]
            for r in table.to_pylist()]
    return header, body


def table5_wide(table: pa.Table) -> tuple[list[str], list[list[str]]]:
    """One line per (key clips, counting, system); columns Verbs/Arguments × Exact/Fuzzy/Partial × P/R/F1."""
    header = ["Key clips", "Counting", "System"] + [
        f"{field[0].upper()} {mode} {m}" for field in FIELDS for mode in MODES for m in ("P", "R", "F1")]
    lines: dict[tuple[str, str, str], dict[tuple[str, str], dict]] = {}
    for r in table.to_pylist():
        lines.setdefault((r["keyclips"], r["counting"], r["system"]), {})[(r["field"], r["mode"])] = r
    body = []
    for (keyclips, counting, system), cells in lines.items():
        row = [keyclips, counting, system]
        for field in FIELDS:
            for mode in MODES:
                c = cells[(field, mode)]
                row += [fmt(c["precision"]), fmt(c["recall"]), fmt(c["f1"])]
        body.append(row)
    order = {"oracle": 0, "predicted": 1, "predicted-masked": 2}
    body.sort(key=lambda r: (r[0] != ORACLE, r[0], order[r[1]]))  # stable: system order kept
    return header, body


def to_csv(header: list[str], body: list[list[str]]) -> str:
    import csv

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(body)
    return out.getvalue()


def to_markdown(header: list[str], body: list[list[str]], title: str = "") -> str:
    lines = [f"## {title}", ""] if title else []
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def tidy_csv(table: pa.Table) -> str:
    """A tidy table as CSV with full-precision numbers (repr of the float: exact round trip)."""
    import csv

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow([repr(v) if isinstance(v, float) else v for v in row.values()])
    return out.getvalue()
