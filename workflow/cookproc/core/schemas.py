"""Parquet table schemas shared by every stage (the data contracts), what their columns mean, and
the checks that hold a table to its schema.

Every intermediate of the workflow is a Parquet file with an explicit schema: a reader never
guesses a type, and a writer validates before it writes (:mod:`cookproc.core.parquet_io` writes
and reads the files, verified).
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import pyarrow as pa

from cookproc.core.errors import ExpectedError

STRING_LIST = pa.list_(pa.string())

#: Roles of the gold argument columns, in the order upstream concatenates them.
GOLD_ARG_ROLES = ("objects", "locations", "times", "temperatures", "others")

#: One row per transcript sentence (= clip) of the benchmark.
CLIPS = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("recipe", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("start_s", pa.float64(), nullable=False),
        # Next clip's start; for the last clip the video's end when known (else null).
        pa.field("end_s", pa.float64(), nullable=True),
        pa.field("sentence", pa.string(), nullable=False),
        pa.field("is_key", pa.bool_(), nullable=False),
        pa.field("gold_verbs", STRING_LIST, nullable=False),
        pa.field("gold_args", STRING_LIST, nullable=False),
        *[pa.field(f"gold_{role}", STRING_LIST, nullable=False) for role in GOLD_ARG_ROLES],
        pa.field("key_steps", pa.string(), nullable=False),
        # 1-based line of the source CSV record, so any later error can point back at it.
        pa.field("source_line", pa.int32(), nullable=False),
    ]
)

#: Key-clip predictions of one system: one row per clip, for every system alike.
KEYCLIPS = pa.schema(
    [
        pa.field("system", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("is_key", pa.bool_(), nullable=False),
        # Model probability/score when the system has one (null for rule-based systems).
        pa.field("score", pa.float64(), nullable=True),
        # Cross-validation fold that scored this clip (null when not cross-validated).
        pa.field("fold", pa.int32(), nullable=True),
    ]
)

#: Tuple predictions of one system: the verbs and arguments it extracts from each clip. Lists keep
#: the system's order and duplicates; the scorer treats them as sets, as upstream does.
TUPLES = pa.schema(
    [
        pa.field("system", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("verbs", STRING_LIST, nullable=False),
        pa.field("args", STRING_LIST, nullable=False),
    ]
)

#: Action-recognition predictions per 5-second video segment (TSM or an imported source).
#: ``rank`` 1 is the top-1 verb and top-1 noun, 2 the second of each, and so on.
TSM_SEGMENTS = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("segment_idx", pa.int32(), nullable=False),  # 1-based, in time order
        pa.field("start_s", pa.float64(), nullable=False),
        pa.field("end_s", pa.float64(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("verb_class", pa.int32(), nullable=False),
        pa.field("verb_key", pa.string(), nullable=False),
        pa.field("verb_score", pa.float64(), nullable=True),  # softmax prob; null when imported
        pa.field("noun_class", pa.int32(), nullable=False),
        pa.field("noun_key", pa.string(), nullable=False),
        pa.field("noun_score", pa.float64(), nullable=True),
    ]
)

#: TSM segments assigned to the clips they overlap (a segment may belong to several clips).
ALIGNED_SEGMENTS = pa.schema(
    [TSM_SEGMENTS.field("video_id"), pa.field("clip_idx", pa.int32(), nullable=False)]
    + [f for f in TSM_SEGMENTS if f.name != "video_id"]
)

#: Key-clip scores (Table 4), tidy. A system run with several seeds: the mean over them, with the
#: sample standard deviations (null with one run).
TABLE4 = pa.schema(
    [
        pa.field("system", pa.string(), nullable=False),
        pa.field("n_clips", pa.int64(), nullable=False),
        pa.field("accuracy", pa.float64(), nullable=False),
        pa.field("precision", pa.float64(), nullable=False),
        pa.field("recall", pa.float64(), nullable=False),
        pa.field("f1", pa.float64(), nullable=False),
        pa.field("accuracy_sd", pa.float64(), nullable=True),
        pa.field("precision_sd", pa.float64(), nullable=True),
        pa.field("recall_sd", pa.float64(), nullable=True),
        pa.field("f1_sd", pa.float64(), nullable=True),
        # The run(s) behind the row: "mean over seeds 0, 1, 2", "one seed (0)", "deterministic fit", ...
        pa.field("seeds", pa.string(), nullable=False),
        # The rule that turned scores into key decisions ("none (binary decisions)" without scores).
        pa.field("threshold_objective", pa.string(), nullable=False),
        # Threshold-free: AUC-ROC and average precision of the out-of-fold scores (null without scores).
        pa.field("auc_roc", pa.float64(), nullable=True),
        pa.field("average_precision", pa.float64(), nullable=True),
    ]
)

#: Tuple scores (Table 5), tidy: one row per system x key-clip source x counting x field x mode.
TABLE5 = pa.schema(
    [
        pa.field("system", pa.string(), nullable=False),
        pa.field("keyclips", pa.string(), nullable=False),
        pa.field("counting", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("mode", pa.string(), nullable=False),
        pa.field("n_clips", pa.int64(), nullable=False),
        pa.field("precision", pa.float64(), nullable=False),
        pa.field("recall", pa.float64(), nullable=False),
        pa.field("f1", pa.float64(), nullable=False),
        # The run(s) behind the row: the tuple system's, and the predicted key clips' ("one seed (0)", ...).
        pa.field("seeds", pa.string(), nullable=False),
    ]
)

#: Per-clip scores behind Table 5 (counted clips only; fractions): what bootstrap intervals,
#: per-recipe plots and error analysis resample or slice.
CLIP_SCORES = pa.schema(
    [
        pa.field("system", pa.string(), nullable=False),
        pa.field("keyclips", pa.string(), nullable=False),
        pa.field("counting", pa.string(), nullable=False),
        pa.field("field", pa.string(), nullable=False),
        pa.field("mode", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("clip_idx", pa.int32(), nullable=False),
        pa.field("precision", pa.float64(), nullable=False),
        pa.field("recall", pa.float64(), nullable=False),
    ]
)

CLIP_KEY = ("video_id", "clip_idx")


class SchemaError(ExpectedError):
    """A table does not match the schema it claims."""


def to_table(rows: Sequence[Mapping] | Iterable[Mapping], schema: pa.Schema, *, what: str) -> pa.Table:
    """Build a table from row dicts, refusing missing or extra columns and wrong types."""
    rows = list(rows)
    names = set(schema.names)
    for i, row in enumerate(rows):
        keys = set(row)
        if keys != names:
            missing, extra = sorted(names - keys), sorted(keys - names)
            raise SchemaError(f"{what}: row {i} has missing columns {missing} / unexpected columns {extra}")
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise SchemaError(f"{what}: {exc}") from exc


def conform(table: pa.Table, schema: pa.Schema, *, what: str) -> pa.Table:
    """Check that ``table`` has exactly the columns of ``schema`` and cast it to it."""
    if set(table.column_names) != set(schema.names):
        missing = sorted(set(schema.names) - set(table.column_names))
        extra = sorted(set(table.column_names) - set(schema.names))
        raise SchemaError(f"{what}: missing columns {missing} / unexpected columns {extra}")
    table = table.select(schema.names)
    try:
        table = table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise SchemaError(f"{what}: {exc}") from exc
    for field in schema:
        if not field.nullable and table.column(field.name).null_count:
            raise SchemaError(f"{what}: column {field.name!r} has {table.column(field.name).null_count} nulls")
    return table


#: The data contracts above by name, and what each of their columns means (``cookproc inspect``
#: shows these; a new contract adds its entry here).
CONTRACTS = {"CLIPS": CLIPS, "KEYCLIPS": KEYCLIPS, "TUPLES": TUPLES, "TSM_SEGMENTS": TSM_SEGMENTS,
             "ALIGNED_SEGMENTS": ALIGNED_SEGMENTS, "TABLE4": TABLE4, "TABLE5": TABLE5, "CLIP_SCORES": CLIP_SCORES}
_CLIP = {"video_id": "YouTube id of the benchmark video",
         "clip_idx": "0-based index of the clip (transcript sentence) within its video"}
_SCORES = {"precision": "precision in percent", "recall": "recall in percent", "f1": "F1 in percent",
           "n_clips": "clips scored"}
_TABLE5_BLOCK = {"system": "tuple system scored",
                 "keyclips": "key-clip source: 'oracle' (gold key clips) or a key-clip system",
                 "counting": "which clips count: oracle, predicted, or predicted-masked",
                 "field": "what is scored: verbs or arguments",
                 "mode": "matching: exact, fuzzy or partial"}
COLUMN_DESCRIPTIONS: dict[str, dict[str, str]] = {
    "CLIPS": {**_CLIP,
              "recipe": "recipe (dish) of the video",
              "start_s": "clip start in the video, seconds",
              "end_s": "next clip's start; for the last clip the video's end when known, else null",
              "sentence": "the transcript sentence",
              "is_key": "gold: the clip is a key step",
              "gold_verbs": "gold verbs of the key step",
              "gold_args": "gold arguments, every role concatenated in upstream's order",
              **{f"gold_{role}": f"gold arguments of role {role}" for role in GOLD_ARG_ROLES},
              "key_steps": "upstream's free-text key-step cell",
              "source_line": "1-based line of the source CSV record"},
    "KEYCLIPS": {"system": "key-clip system", **_CLIP,
                 "is_key": "the system's decision: the clip is a key step",
                 "score": "the model's probability or score (null for rule-based systems)",
                 "fold": "cross-validation fold that scored the clip (null when not cross-validated)"},
    "TUPLES": {"system": "tuple system", **_CLIP,
               "verbs": "verbs the system extracts from the clip (its order, duplicates kept)",
               "args": "arguments the system extracts from the clip (its order, duplicates kept)"},
    "TSM_SEGMENTS": {"video_id": _CLIP["video_id"],
                     "segment_idx": "1-based index of the 5-second segment, in time order",
                     "start_s": "segment start, seconds", "end_s": "segment end, seconds",
                     "rank": "1 = top-1 verb and top-1 noun, 2 = second of each, ...",
                     "verb_class": "EPIC-Kitchens verb class id", "verb_key": "EPIC-Kitchens verb",
                     "verb_score": "softmax probability of the verb (null when imported)",
                     "noun_class": "EPIC-Kitchens noun class id", "noun_key": "EPIC-Kitchens noun",
                     "noun_score": "softmax probability of the noun (null when imported)"},
    "TABLE4": {"system": "key-clip system", **_SCORES, "accuracy": "accuracy in percent"},
    "TABLE5": {**_TABLE5_BLOCK, **_SCORES},
    "CLIP_SCORES": {**_TABLE5_BLOCK, **_CLIP, "precision": "the clip's precision, a fraction",
                    "recall": "the clip's recall, a fraction"},
}
COLUMN_DESCRIPTIONS["ALIGNED_SEGMENTS"] = {**COLUMN_DESCRIPTIONS["TSM_SEGMENTS"],
                                           "clip_idx": "clip the segment overlaps (a segment may overlap several)"}


def contract_of(schema: pa.Schema) -> str | None:
    """The name of the data contract whose columns ``schema`` has (None: a stage's own schema)."""
    names = sorted(schema.names)
    for name, contract in CONTRACTS.items():
        if sorted(contract.names) == names:
            return name
    return None


def column_description(contract: str | None, column: str) -> str | None:
    """What a column means: from its contract, else from any contract with a column of that name."""
    if contract is not None and column in COLUMN_DESCRIPTIONS.get(contract, {}):
        return COLUMN_DESCRIPTIONS[contract][column]
    for described in COLUMN_DESCRIPTIONS.values():
        if column in described:
            return described[column]
    return None
