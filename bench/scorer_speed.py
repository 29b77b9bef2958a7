"""Benchmark: the 12 Table 5 cells of one system, our scorer vs a straightforward reference.

The reference is what upstream's evaluator does, written plainly: fuzzywuzzy 0.18 (pure-Python
difflib backend) for every pair of every clip, munkres 1.1.4 for the assignment, no caching. Both
run in this process on the same data; the script checks that all 36 numbers are identical and
prints the speed ratio (target: ours at least 5x faster).

    .venv/bin/python bench/scorer_speed.py [--upstream DIR] [--system upstream-srl-heur]
"""
from __future__ import annotations

import argparse
import functools
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def reference_cells(gold, pred, predicted_key):
    """Upstream's loop, verbatim in spirit: per counted clip, sets, fuzzywuzzy and munkres."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fuzzywuzzy import fuzz
    from munkres import Munkres, make_cost_matrix

    munkres = Munkres()
    cells = {}
    for block, key in (("oracle", None), ("predicted", predicted_key)):
        for field in ("verbs", "arguments"):
            for mode in ("exact", "fuzzy", "partial"):
                total, precs, recalls = 0, 0.0, 0.0
                for i, (g, p) in enumerate(zip(gold[field], pred[field])):
                    if not (g or (key is not None and key[i])):
                        continue
                    total += 1
                    g, p = set(g), set(p)
                    if mode == "exact":
                        tp = len(g & p)
                    else:
                        tp = 0.0
                        if g and p:
                            score = fuzz.partial_ratio if mode == "partial" else fuzz.ratio
                            profit = [[score(x, y) for y in p] for x in g]
                            for r, c in munkres.compute(make_cost_matrix(profit)):
                                tp += profit[r][c]
                            tp /= 100
                    precs += tp / len(p) if p else 0.0
                    recalls += tp / len(g) if g else 0.0
                precision, recall = precs / total, recalls / total
                f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
                cells[(block, field, mode)] = (precision, recall, f1)
    return cells


def our_cells(gold, pred, predicted_key, workers=1):
    from cookproc.scoring.metrics import score_table5_cells
    from cookproc.scoring.similarity import SimilarityCache

    cache = SimilarityCache(workers)
    cells = {}
    for block, key in (("oracle", None), ("predicted", predicted_key)):
        for row in score_table5_cells(gold, pred, key, cache=cache):
            cells[(block, row["field"], row["mode"])] = (row["precision"], row["recall"], row["f1"])
    return cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=Path, default=REPO / "../shared/data/cooking-procedural-extraction")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each implementation (best is kept)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes for our scorer (a pool pays off only for far more pairs than one system has)")
    args = parser.parse_args()

    from cookproc.data.dataset import read_benchmark_csv, read_repairs
    from cookproc.evaluation.systems import import_upstream_keyclips, import_upstream_srl
    from cookproc.evaluation.tables import gold_sets, keyclip_flags, prediction_sets

    yc = args.upstream / "youcook2"
    clips = read_benchmark_csv(yc / "reviewed_0812.csv", repairs=read_repairs(REPO / "workflow/schemas/upstream-repairs.tsv"))
    neural = import_upstream_keyclips(yc / "reviewed_0812.attach_key_sent_selection.tsv", clips)
    _, tuples = import_upstream_srl(yc / "srl_pred.json", clips)
    gold = gold_sets(clips)
    pred = prediction_sets(clips, tuples, what="upstream-srl-heur")
    key = keyclip_flags(clips, neural, what="upstream-neural")

    timings = {}
    results = {}
    for name, fn in (("reference (fuzzywuzzy + munkres)", reference_cells), ("ours (cookproc.scoring.metrics)", functools.partial(our_cells, workers=args.workers))):
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            results[name] = fn(gold, pred, key)
            best = min(best, time.perf_counter() - start)
        timings[name] = best
    ref, ours = results.values()
    identical = all(ref[k] == ours[k] for k in ref) and ref.keys() == ours.keys()
    max_diff = max(abs(a - b) for k in ref for a, b in zip(ref[k], ours[k]))
    print(f"system upstream-srl-heur, {len(ref)} cells (oracle + predicted key clips) x P/R/F1; "
          f"ours with {args.workers} worker process(es), the reference single-process as upstream's")
    for name, seconds in timings.items():
        print(f"  {name:<34} {seconds:8.2f} s")
    ratio = timings["reference (fuzzywuzzy + munkres)"] / timings["ours (cookproc.scoring.metrics)"]
    print(f"  identical numbers: {identical} (max abs difference {max_diff:.3g})")
    print(f"  speed ratio reference/ours: {ratio:.1f}x (target >= 5x)")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
