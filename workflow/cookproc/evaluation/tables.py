"""Tables 4 and 5: scores of systems in tidy form, and wide renderings laid out like the paper."""
from __future__ import annotations

import io
from collections import Counter
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from cookproc.core import registry
from cookproc.scoring.metrics import FIELDS, MODES, score_keyclips, score_table5_cells
from cookproc.scoring.similarity import SimilarityCache
from cookproc.core.formatting import format_number
from cookproc.core.schemas import CLIP_SCORES, KEYCLIPS, TABLE4, TABLE5, TUPLES, conform, to_table
from cookproc.evaluation.threshold_free import (TABLE4_FOLD_MEANS, TABLE4_POOLED, THRESHOLD_FREE_HEADERS, fold_mean_scores,
                                                mean_over_runs, threshold_free_scores)

ORACLE = "oracle"
#: Table 4 as rule table4 writes it: core.schemas.TABLE4, then the fold means (null unless the
#: system's file names the fold that scored each clip). Kept here, beside their only writer: an edit of
#: core.schemas would rerun every rule whose script imports it, the trainings included.
TABLE4_COLUMNS = pa.schema([*TABLE4, *(pa.field(name, pa.float64(), nullable=True) for name in TABLE4_FOLD_MEANS)])


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
    return keyclip_columns(clips, keyclips, what=what)["is_key"]


#: ``threshold_objective`` of a system whose file has no scores: only its key decisions exist.
BINARY_ONLY = "none (binary decisions)"
#: ``threshold_objective`` of a system with scores whose threshold rule the run does not record.
RULE_NOT_RECORDED = "not recorded"
#: ``seeds`` of a system without a label (not trained here, or not known to the workflow).
NO_SEED = "-"
METRICS4 = ("accuracy", "precision", "recall", "f1")


def seeds_label(seeds: Sequence[int]) -> str:
    """How a learned system's row was obtained from its seeds: ``mean over seeds 0, 1, 2`` or
    ``one seed (0)``."""
    if len(seeds) == 1:
        return f"one seed ({seeds[0]})"
    return "mean over seeds " + ", ".join(str(s) for s in seeds)


def seeds_of(system: str, kind: str, config: Mapping, *, file: bool = False) -> str:
    """The ``seeds`` label of a key-clip (``kind`` "keyclips") or tuple system in Tables 4/5, from its
    entry in the system registry (:mod:`cookproc.core.registry`) and the workflow's ``config``: the
    row of a system scored over its seeds is the mean over them; ``file``: the label of the system's
    one file (results/<kind>/<name>.parquet, e.g. as Table 5's predicted key clips), which for such a
    system is its first seed's run."""
    entry = registry.lookup(kind, system)
    seeds = entry.seed_list(config)
    if seeds is not None:
        return seeds_label(seeds[:1] if file else seeds)
    if entry.origin == registry.UPSTREAM:
        return "upstream's predictions"
    if entry.origin == registry.USER:
        return "user's predictions"
    return "deterministic fit" if entry.deterministic else NO_SEED


def block_label(system_label: str, keyclips: str, keyclips_label: str | None) -> str:
    """The ``seeds`` of a Table 5 row: the tuple system's, and on predicted key clips the key-clip
    source's when it is learned (``one seed (0); key clips supervised: one seed (0)``)."""
    if keyclips == ORACLE or keyclips_label in (None, NO_SEED):
        return system_label
    source = f"key clips {keyclips}: {keyclips_label}"
    return source if system_label == NO_SEED else f"{system_label}; {source}"


def threshold_rule_summary(infos: Sequence[Mapping], fallback: str) -> str:
    """The threshold rule of a cross-validated system from its runs' info files (one dict per seed,
    ``folds`` → fold → ``selected.threshold_metric`` when nested selection chose it): the rule, or
    each rule with the share of (seed, fold) runs that chose it. A fold without a choice used
    ``fallback`` (the configured rule)."""
    rules = [fold.get("selected", {}).get("threshold_metric", fallback)
             for info in infos for _, fold in sorted(info["folds"].items(), key=lambda kv: int(kv[0]))]
    if not rules:
        return fallback
    counts = Counter(rules)
    if len(counts) == 1:
        return rules[0]
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{rule} ({n}/{len(rules)} folds)" for rule, n in ordered)


def table4(clips: pa.Table, systems: Mapping[str, pa.Table], *, seed_runs: Mapping[str, Sequence[pa.Table]] | None = None,
           threshold_rules: Mapping[str, str] | None = None, seeds: Mapping[str, str] | None = None) -> pa.Table:
    """Key-clip Acc/P/R/F1 (percent) of each system, in the given order, with the run(s) behind the
    row (``seeds``), the rule that made its key decisions and its threshold-free AUC-ROC and average
    precision (null for a system with binary decisions only): pooled, over every clip's score at
    once (out of fold for a cross-validated system, one ranking across folds whose scores can be
    scaled differently), and for a system whose file names the fold that scored each clip, the mean
    over folds of each fold's own (``*_fold_mean``). A system in ``seed_runs`` (one KEYCLIPS table
    per seed) gets the mean over its seeds and their sample standard deviations (``*_sd``); the
    threshold-free scores are then means over the seeds too."""
    seed_runs, threshold_rules, seeds = seed_runs or {}, threshold_rules or {}, seeds or {}
    gold = clips.column("is_key").to_pylist()
    rows = []
    for name, table in systems.items():
        runs = list(seed_runs.get(name) or [table])
        scores, free, per_fold = [], [], []
        for i, run in enumerate(runs):
            what = f"key-clip system {name}" + (f" (run {i + 1} of {len(runs)})" if len(runs) > 1 else "")
            columns = keyclip_columns(clips, run, what=what)
            score = score_keyclips(gold, columns["is_key"])
            scores.append([100 * getattr(score, m) for m in METRICS4])
            free.append(threshold_free_scores(gold, columns["score"]))
            per_fold.append(fold_mean_scores(gold, columns["score"], columns["fold"]))
        values = np.array(scores)
        spread = values.std(axis=0, ddof=1) if len(runs) > 1 else [None] * len(METRICS4)
        has_scores = all(f is not None for f in free)
        rule = threshold_rules.get(name) or (RULE_NOT_RECORDED if has_scores else BINARY_ONLY)
        rows.append({"system": name, "n_clips": len(gold),
                     **{m: float(v) for m, v in zip(METRICS4, values.mean(axis=0))},
                     **{f"{m}_sd": None if v is None else float(v) for m, v in zip(METRICS4, spread)},
                     "seeds": seeds.get(name, NO_SEED), "threshold_objective": rule,
                     **dict(zip(TABLE4_POOLED, mean_over_runs(free))),
                     **dict(zip(TABLE4_FOLD_MEANS, mean_over_runs(per_fold)))})
    return to_table(rows, TABLE4_COLUMNS, what="table4")


def keyclip_columns(clips: pa.Table, keyclips: pa.Table, *, what: str) -> dict[str, list]:
    """A key-clip system's decisions (``is_key``), scores and cross-validation folds (None where it
    has none) in the benchmark's clip order."""
    keyclips = conform(keyclips, KEYCLIPS, what=what)
    return align_to_clips(clips, keyclips, ["is_key", "score", "fold"], what=what)


def table5(clips: pa.Table, tuple_systems: Mapping[str, pa.Table], predicted_keyclips: Mapping[str, pa.Table],
           *, masked: bool = True, cache: SimilarityCache | None = None, tuple_seeds: Mapping[str, str] | None = None,
           keyclip_seeds: Mapping[str, str] | None = None) -> pa.Table:
    """Tuple P/R/F1 (percent) of each system: oracle key clips, then each predicted key-clip source
    (upstream's counting, and the stricter masked variant when ``masked``). ``seeds`` of each row:
    :func:`block_label` of the tuple system's label (``tuple_seeds``) and the key-clip source's
    (``keyclip_seeds``)."""
    return table5_with_clip_scores(clips, tuple_systems, predicted_keyclips, masked=masked, cache=cache,
                                   tuple_seeds=tuple_seeds, keyclip_seeds=keyclip_seeds)[0]


def table5_with_clip_scores(clips: pa.Table, tuple_systems: Mapping[str, pa.Table],
                            predicted_keyclips: Mapping[str, pa.Table], *, masked: bool = True,
                            cache: SimilarityCache | None = None, tuple_seeds: Mapping[str, str] | None = None,
                            keyclip_seeds: Mapping[str, str] | None = None) -> tuple[pa.Table, pa.Table]:
    """:func:`table5` and the per-clip scores behind it (:data:`~cookproc.core.schemas.CLIP_SCORES`)."""
    cache = cache or SimilarityCache()
    tuple_seeds, keyclip_seeds = tuple_seeds or {}, keyclip_seeds or {}
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
                             "f1": 100 * cell["f1"],
                             "seeds": block_label(tuple_seeds.get(system, NO_SEED), source, keyclip_seeds.get(source))})
                n = len(per_clip.positions)
                for name, value in (("system", system), ("keyclips", source), ("counting", counting),
                                    ("field", cell["field"]), ("mode", cell["mode"])):
                    clip_columns[name].extend([value] * n)
                clip_columns["video_id"].extend(order[i][0] for i in per_clip.positions)
                clip_columns["clip_idx"].extend(order[i][1] for i in per_clip.positions)
                clip_columns["precision"].extend(per_clip.precision)
                clip_columns["recall"].extend(per_clip.recall)
    return to_table(rows, TABLE5, what="table5"), pa.table(clip_columns, schema=CLIP_SCORES)


#: One row per predicted key-clip source and field: the constant of the paper's counting.
PREDICTED_COUNTING = pa.schema([
    pa.field("keyclips", pa.string(), nullable=False),
    pa.field("field", pa.string(), nullable=False),
    # Clips with gold items (the oracle block's counted clips).
    pa.field("n_gold", pa.int64(), nullable=False),
    # Clips counted under the paper's counting: gold items or predicted key.
    pa.field("n_counted", pa.int64(), nullable=False),
    # n_gold / n_counted: every system's F1 there is its oracle F1 times this.
    pa.field("constant", pa.float64(), nullable=False),
    # Predicted-counting F1 / oracle F1 over every system and mode with an oracle F1 above 0.
    pa.field("f1_ratio_min", pa.float64(), nullable=True),
    pa.field("f1_ratio_max", pa.float64(), nullable=True),
])


def predicted_counting_constants(table: pa.Table) -> pa.Table:
    """The paper's counting of predicted key clips (``counting == "predicted"``) counts every clip
    that has gold items or is predicted key and never masks: a clip added only because it is
    predicted key has no gold items, so it adds 0 to every clip's precision and recall sum, and a
    system's macro P and R there are its oracle ones times n_gold / n_counted, hence its F1 too.
    This measures that constant per key-clip source and field, and the observed F1 ratios."""
    rows = table.to_pylist()
    oracle = {(r["system"], r["field"], r["mode"]): r for r in rows if r["counting"] == "oracle"}
    out: dict[tuple[str, str], dict] = {}
    for r in rows:
        if r["counting"] != "predicted":
            continue
        base = oracle[(r["system"], r["field"], r["mode"])]
        entry = out.setdefault((r["keyclips"], r["field"]), {
            "keyclips": r["keyclips"], "field": r["field"], "n_gold": base["n_clips"], "n_counted": r["n_clips"],
            "constant": base["n_clips"] / r["n_clips"] if r["n_clips"] else 0.0, "ratios": []})
        if (entry["n_gold"], entry["n_counted"]) != (base["n_clips"], r["n_clips"]):
            raise ValueError(f"table5: counted clips of {r['keyclips']} / {r['field']} differ between systems")
        if base["f1"] > 0:
            entry["ratios"].append(r["f1"] / base["f1"])
    result = []
    for entry in out.values():
        ratios = entry.pop("ratios")
        result.append({**entry, "f1_ratio_min": min(ratios) if ratios else None,
                       "f1_ratio_max": max(ratios) if ratios else None})
    return pa.Table.from_pylist(result, schema=PREDICTED_COUNTING)


def predicted_counting_note(constants: pa.Table) -> str:
    """A Markdown note under Table 5 on what its ``predicted`` rows (the paper's counting) measure."""
    if not constants.num_rows:
        return ""
    parts = []
    for r in constants.to_pylist():
        ratio = ("" if r["f1_ratio_min"] is None else "; observed F1 / oracle F1 "
                 f"{format_number(r['f1_ratio_min'], 4)}-{format_number(r['f1_ratio_max'], 4)}")
        parts.append(f"{r['keyclips']}, {r['field']}: {r['n_gold']}/{r['n_counted']} = "
                     f"{format_number(r['constant'], 4)}{ratio}")
    return ("Counting `predicted` is the paper's: it counts every clip with gold items or predicted key and "
            "never masks, so every system's F1 there is its oracle F1 times n_gold / n_counted, one constant "
            "per key-clip source (" + "; ".join(parts) + "). Its comparisons say nothing about the key-clip "
            "selector; compare systems on predicted key clips under `predicted-masked`.\n")


# ----------------------------------------------------------------------------- renderings
#: Decimals of a percentage in the wide tables, as upstream prints them (``"{:.1f}"``).
PERCENT_DIGITS = 1
#: Decimals of a threshold-free score (a fraction).
FRACTION_DIGITS = 3


def percent_with_spread(value: float, sd: float | None) -> str:
    """A percentage, followed by `` ± sd`` for a mean over seeds."""
    text = format_number(value, PERCENT_DIGITS)
    return text if sd is None else f"{text} ± {format_number(sd, PERCENT_DIGITS)}"


#: How the wide tables show an AUC-ROC / average precision that does not exist: binary decisions
#: only, or (per fold) scores whose file names no folds.
NO_SCORES = "n/a (binary)"
NO_FOLDS = "n/a (no folds)"
def table4_wide(table: pa.Table) -> tuple[list[str], list[list[str]]]:
    """System, Acc/P/R/F1 (mean ± sd over seeds where there are several), the runs behind the row,
    the threshold rule, and AUC-ROC and average precision pooled out of fold and as the mean per fold
    (three decimals; n/a without scores, or per fold without folds)."""
    header = ["System", "Acc", "P", "R", "F1", "Seeds", "Threshold rule", *THRESHOLD_FREE_HEADERS]
    body = []
    for r in table.to_pylist():
        free = [NO_SCORES if r[k] is None else format_number(r[k], FRACTION_DIGITS) for k in TABLE4_POOLED]
        free += [(NO_SCORES if r[p] is None else NO_FOLDS) if r[k] is None else format_number(r[k], FRACTION_DIGITS)
                 for k, p in zip(TABLE4_FOLD_MEANS, TABLE4_POOLED)]
        body.append([r["system"], *(percent_with_spread(r[m], r[f"{m}_sd"]) for m in METRICS4), r["seeds"],
                     r["threshold_objective"], *free])
    return header, body


def table5_wide(table: pa.Table) -> tuple[list[str], list[list[str]]]:
    """One line per (key clips, counting, system); columns Verbs/Arguments × Exact/Fuzzy/Partial × P/R/F1."""
    header = ["Key clips", "Counting", "System"] + [
        f"{field[0].upper()} {mode} {m}" for field in FIELDS for mode in MODES for m in ("P", "R", "F1")] + ["Seeds"]
    lines: dict[tuple[str, str, str], dict[tuple[str, str], dict]] = {}
    for r in table.to_pylist():
        lines.setdefault((r["keyclips"], r["counting"], r["system"]), {})[(r["field"], r["mode"])] = r
    body = []
    for (keyclips, counting, system), cells in lines.items():
        row = [keyclips, counting, system]
        for field in FIELDS:
            for mode in MODES:
                c = cells[(field, mode)]
                row += [format_number(c[m], PERCENT_DIGITS) for m in ("precision", "recall", "f1")]
        body.append(row + [c["seeds"]])
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


def tidy_csv(table: pa.Table) -> str:
    """A tidy table as CSV with full-precision numbers (repr of the float: exact round trip)."""
    import csv

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.column_names)
    for row in table.to_pylist():
        writer.writerow([repr(v) if isinstance(v, float) else v for v in row.values()])
    return out.getvalue()
