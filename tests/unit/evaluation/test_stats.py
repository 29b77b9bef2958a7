"""Table 2 statistics, upstream's counting quirks included."""
from collections import Counter

import pyarrow as pa
import pytest

from cookproc.core.schemas import CLIPS
from cookproc.evaluation.stats import field_statistics, most_frequent, table2


def clips_table(rows):
    full = []
    for i, (sentence, verbs, objects) in enumerate(rows):
        full.append({"video_id": "v", "recipe": "r", "clip_idx": i, "start_s": float(i), "end_s": float(i + 1),
                     "sentence": sentence, "is_key": True, "gold_verbs": verbs, "gold_args": objects,
                     "gold_objects": objects, "gold_locations": [], "gold_times": [], "gold_temperatures": [],
                     "gold_others": [], "key_steps": "", "source_line": i + 2})
    return pa.Table.from_pylist(full, schema=CLIPS)


def test_exact_fuzzy_and_not_found():
    table = clips_table([
        ("now add the salt .", ["add"], ["salt"]),                 # both exact
        ("add the salt .", ["add"], ["the salt, pepper"]),         # 'add' at position 0: not exact (upstream)
        ("bake for ten minutes .", ["bake"], ["10 minutes"]),      # number spelled out: exact
        ("then we chopped onion .", ["chop"], ["onions"]),         # fuzzy n-gram: chop/chopped, onions/onion
        ("so that is it .", ["stir"], ["soup"]),                   # not found
    ])
    verbs = field_statistics(table, "verbs").row()
    assert verbs["items"] == 5
    assert verbs["exact_pct"] == pytest.approx(100 * 2 / 5)   # clips 1 and 3
    assert verbs["fuzzy_pct"] == pytest.approx(100 * 2 / 5)   # 'add' of clip 2 (n-gram 'add'), 'chop'
    assert verbs["not_found_pct"] == pytest.approx(100 * 1 / 5)
    args = field_statistics(table, "arguments").row()
    # arguments are re-split on ',' for the statistics: 'the salt, pepper' counts as two items
    assert args["items"] == 6
    assert args["exact_pct"] == pytest.approx(100 * 3 / 6)    # salt, the salt, ten minutes
    assert args["avg_words"] == pytest.approx((1 + 2 + 1 + 2 + 1 + 1) / 6)


def test_most_frequent_breaks_ties_alphabetically():
    assert most_frequent(Counter({"b": 2, "a": 2, "c": 3}), 2) == [("c", 3), ("a", 2)]


def test_real_table2(mirror):
    from cookproc.data.dataset import read_benchmark_csv, read_repairs
    from fixtures import REPO

    clips = read_benchmark_csv(mirror / "youcook2/reviewed_0812.csv", repairs=read_repairs(REPO / "workflow/schemas/upstream-repairs.tsv"))
    table, _ = table2(clips)
    rows = {r["field"]: r for r in table.to_pylist()}
    assert (rows["verbs"]["items"], rows["arguments"]["items"]) == (4004, 6070)
    assert f"{rows['verbs']['exact_pct']:.1f}" == "62.3" and f"{rows['arguments']['exact_pct']:.1f}" == "63.1"
