"""DuckDB against pyarrow.dataset on the three queries of docs/querying.md (issue 39).

    .venv/bin/python bench/query_engines.py [--clips 15000] [--corpus-clips 74801 748010] [--repeat 5]

Writes generated results the size of the benchmark's (``--clips`` gold clips, two key-clip
systems) and corpus datasets of ``--corpus-clips`` rows in 8 shards (74,801: the YouCook2
transcripts), then times each query of docs/querying.md (DuckDB runs the page's SQL as it is;
pyarrow.dataset the equivalent Arrow code, for example 3 the page's own), best of ``--repeat``,
each engine in one warm process. Also: each engine's import time in a fresh process (best of 5,
less the bare interpreter's) and the installed size of duckdb. Prints ratios (DuckDB / pyarrow).
"""
from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO / "bench"))


def write_results(work: Path, n_clips: int, corpus_clips: int) -> None:
    import pyarrow as pa

    from corpus_memory import write_synthetic_dataset
    from cookproc.core.parquet_io import write_parquet
    from cookproc.core.schemas import CLIP_KEY, CLIPS, GOLD_ARG_ROLES, KEYCLIPS

    rng = random.Random(0)
    clips, systems = [], {"neural-text": [], "srl-heur-spacy": []}
    for n in range(n_clips):
        video_id, clip_idx = f"vid{n // 40:05d}", n % 40
        gold = rng.random() < 0.27
        clips.append({"video_id": video_id, "recipe": f"recipe{n // 400:03d}", "clip_idx": clip_idx,
                      "start_s": 4.0 * clip_idx, "end_s": None, "sentence": f"sentence {n}", "is_key": gold,
                      "gold_verbs": [], "gold_args": [], **{f"gold_{r}": [] for r in GOLD_ARG_ROLES}, "key_steps": "",
                      "source_line": n + 2})
        for system, flips in (("neural-text", 0.2), ("srl-heur-spacy", 0.4)):
            systems[system].append({"system": system, "video_id": video_id, "clip_idx": clip_idx,
                                    "is_key": gold != (rng.random() < flips), "score": None, "fold": None})
    write_parquet(pa.Table.from_pylist(clips, schema=CLIPS), work / "results/dataset/clips.parquet", CLIPS,
                  sort_keys=CLIP_KEY)
    for system, rows in systems.items():
        write_parquet(pa.Table.from_pylist(rows, schema=KEYCLIPS), work / f"results/keyclips/{system}.parquet",
                      KEYCLIPS, sort_keys=CLIP_KEY)
    dataset = work / "results/corpus/youcook2/procedures"
    write_synthetic_dataset(dataset, 8, corpus_clips // 8)  # the shards' files, then the dataset with its _metadata


def pyarrow_queries():
    """The three queries with pyarrow alone (the third as docs/querying.md writes it)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    key = ["video_id", "clip_idx"]

    def disagreements():
        a = ds.dataset("results/keyclips/neural-text.parquet").to_table(columns=[*key, "is_key"])
        b = ds.dataset("results/keyclips/srl-heur-spacy.parquet").to_table(columns=[*key, "is_key"])
        c = ds.dataset("results/dataset/clips.parquet").to_table(columns=[*key, "recipe", "sentence", "is_key"])
        both = a.rename_columns([*key, "neural_text"]).join(b.rename_columns([*key, "srl_heur_spacy"]), keys=key)
        both = both.filter(pc.not_equal(both["neural_text"], both["srl_heur_spacy"]))
        return both.join(c.rename_columns([*key, "recipe", "sentence", "gold"]), keys=key).sort_by(
            [(k, "ascending") for k in key])

    def per_recipe_f1():
        k = ds.dataset("results/keyclips/neural-text.parquet").to_table(columns=[*key, "is_key"])
        c = ds.dataset("results/dataset/clips.parquet").to_table(columns=[*key, "recipe", "is_key"])
        t = k.rename_columns([*key, "pred"]).join(c.rename_columns([*key, "recipe", "gold"]), keys=key)
        t = t.append_column("tp", pc.cast(pc.and_(t["pred"], t["gold"]), "int64"))
        t = t.append_column("fp", pc.cast(pc.and_(t["pred"], pc.invert(t["gold"])), "int64"))
        t = t.append_column("fn", pc.cast(pc.and_(pc.invert(t["pred"]), t["gold"]), "int64"))
        g = t.group_by("recipe").aggregate([("tp", "sum"), ("fp", "sum"), ("fn", "sum"), ("tp", "count")])
        rows = [(r["recipe"], r["tp_count"], 0.0 if r["tp_sum"] == 0 else
                 200.0 * r["tp_sum"] / (2 * r["tp_sum"] + r["fp_sum"] + r["fn_sum"])) for r in g.to_pylist()]
        return sorted(rows, key=lambda r: (-r[2], r[0]))

    def top_verbs():
        namespace = {}
        exec(re.findall(r"^```python\n(.*?)^```$", (REPO / "docs/querying.md").read_text(), re.DOTALL | re.MULTILINE)[0]
             .replace("print(top_verbs)", ""), namespace)
        return namespace["top_verbs"]

    return [disagreements, per_recipe_f1, top_verbs]


def duckdb_queries():
    import duckdb

    blocks = re.findall(r"^```sql\n(.*?)^```$", (REPO / "docs/querying.md").read_text(), re.DOTALL | re.MULTILINE)
    con = duckdb.connect()
    return [lambda block=block: con.sql(block).fetchall() for block in blocks]


def best_of(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def import_seconds(statement: str) -> float:
    def run(code):
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            best = min(best, time.perf_counter() - start)
        return best
    return run(statement) - run("pass")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=15_000)
    parser.add_argument("--corpus-clips", type=int, nargs="+", default=[74_801, 748_010])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import duckdb

    package = Path(duckdb.__file__).parent.parent
    installed = sum(p.stat().st_size for p in package.glob("*duckdb*") if p.is_file())
    installed += sum(f.stat().st_size for d in package.glob("*duckdb*") if d.is_dir() for f in d.rglob("*") if f.is_file())
    print(f"# {os.uname().nodename}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; duckdb {duckdb.__version__} "
          f"installed: {installed / 2**20:.0f} MB", flush=True)
    duck_import, arrow_import = import_seconds("import duckdb"), import_seconds("import pyarrow.dataset")
    print(f"import (fresh process, less the bare interpreter): duckdb {duck_import:.2f} s, pyarrow.dataset "
          f"{arrow_import:.2f} s", flush=True)
    names = ["1 disagreements", "2 per-recipe F1", "3 top verbs (corpus)"]
    for corpus_clips in args.corpus_clips:
        with tempfile.TemporaryDirectory(prefix="query-bench-") as tmp:
            write_results(Path(tmp), args.clips, corpus_clips)
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                arrow, duck = pyarrow_queries(), duckdb_queries()
                for name, a, d in zip(names, arrow, duck):
                    assert len(a()) == len(d()), name  # the same answer's size
                    ta, td = best_of(a, args.repeat), best_of(d, args.repeat)
                    print(f"{args.clips:,} clips, corpus {corpus_clips:,} clips: query {name}: duckdb {1000 * td:.1f} ms, "
                          f"pyarrow {1000 * ta:.1f} ms, duckdb/pyarrow {td / ta:.2f}", flush=True)
            finally:
                os.chdir(cwd)


if __name__ == "__main__":
    main()
