"""Peak memory of the corpus's steps after the shards, against one shard job's (issue 39).

    .venv/bin/python bench/corpus_memory.py [--files 160] [--shards 4] [--scale 8 32 96] [--clips-per-shard 9350]

Two measurements in one run, each printing ratios:
  1. The corpus end to end through Snakemake (-c2) on ``--files`` generated transcripts (43 lines
     each, YouCook2's mean clips per video) in ``--shards`` shards, with the SRL extractor's rule for
     key clips (``procedures.keyclip_model`` and ``procedures.tuple_model`` null: no trained model needed): the
     dataset (rule corpus_dataset), the per-video Markdown, the report page, and the single-file
     export. Each job's max RSS from Snakemake's benchmark files; prints downstream / shard.
     A shard with the trained models is larger (2-6 GB, docs/benchmarks.md), so this ratio is the
     pessimistic one.
  2. Scaling: datasets of N shards (``--scale``) of ``--clips-per-shard`` generated clips each
     (74,801 / 8: a shard of the YouCook2 corpus at the default 8 shards), written as the shard
     jobs write them (no extraction); each step after the shards runs in a fresh process and its
     exact peak RSS is the kernel's (wait4). The steps that read the dataset shard by shard stay flat
     as N grows; the single-file export, which holds every row, is shown for contrast.
This is not a timed test: the numbers vary with the machine; the ratios are what matter.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "workflow"))
from fixtures import make_workdir, run_snakemake, write_tiny_upstream  # noqa: E402

CLIPS_PER_VIDEO = 43  # 74,801 clips / 1,736 videos of the YouCook2 transcripts
VERBS = ["add", "chop", "stir", "pour", "heat", "slice", "mix", "bake", "boil", "fry", "season", "whisk", "cut",
         "place", "cook", "drain", "serve", "melt", "spread", "roll"]
THINGS = ["the onions", "the garlic", "some salt", "the oil", "the flour", "the butter", "the eggs", "the sauce",
          "the chicken", "the rice", "the tomatoes", "the pepper", "the cheese", "the dough", "the water",
          "the carrots", "the beef", "the noodles", "the sugar", "the milk"]
PLACES = ["in a pan", "into the bowl", "on the tray", "in the pot", "over the top", "in the oven", ""]
CHATTER = ["hi guys welcome back to my channel", "thanks for watching", "it smells really good",
           "let me know in the comments", "so that is it for today", "this is my favourite part"]


def transcript(rng: random.Random) -> str:
    """A generated untimed transcript: one sentence a line, cooking steps among chatter."""
    lines = []
    for _ in range(CLIPS_PER_VIDEO):
        if rng.random() < 0.3:
            lines.append(rng.choice(CHATTER) + " .")
        else:
            lines.append(" ".join(x for x in (rng.choice(VERBS), rng.choice(THINGS), rng.choice(PLACES)) if x) + " .")
    return "\n".join(lines) + "\n"


def max_rss_mb(tsv: Path) -> float:
    with tsv.open() as handle:
        return float(next(csv.DictReader(handle, delimiter="\t"))["max_rss"])


def end_to_end(root: Path, n_files: int, shards: int) -> dict:
    upstream = write_tiny_upstream(root / "upstream")
    work = make_workdir(root / "work", upstream, {"corpus": {"name": "bench", "dir": "corpus", "shards": shards},
                                                  "procedures": {"keyclip_model": None, "tuple_model": None}})
    rng = random.Random(0)
    (work / "corpus").mkdir()
    for i in range(n_files):
        (work / "corpus" / f"video{i:05d}.txt").write_text(transcript(rng), encoding="utf-8")
    run_snakemake(work, "resources/nltk_data", timeout=3600)  # not part of the corpus
    start = time.perf_counter()
    run_snakemake(work, "corpus_all", "results/corpus/bench/markdown", "results/report/corpus/bench.html",
                  "results/corpus/bench/procedures.parquet", timeout=3600)
    wall = time.perf_counter() - start
    bench = work / "benchmarks"
    return {"wall_s": wall,
            "shards": [max_rss_mb(p) for p in sorted((bench / "corpus/corpus_shard/bench").glob("*.tsv"))],
            "corpus_dataset": max_rss_mb(bench / "corpus/corpus_dataset/bench.tsv"),
            "corpus_markdown": max_rss_mb(bench / "corpus/corpus_markdown/bench.tsv"),
            "report_corpus": max_rss_mb(bench / "report/report_corpus/bench.tsv"),
            "corpus_export": max_rss_mb(bench / "corpus/corpus_export/bench.tsv")}


# ----------------------------------------------------------------------------- scaling
def write_synthetic_dataset(dataset: Path, n_shards: int, clips_per_shard: int) -> int:
    """A dataset of ``n_shards`` shards, about ``clips_per_shard`` clips each (videos are placed by
    their id's hash, as the workflow does): the shard files as the shard jobs write them, beside it
    in ``shards/``, and the dataset built from them as rule corpus_dataset builds it. Returns its
    row count."""
    from cookproc.app.corpus import CORPUS_CLIPS, build_dataset, documents_table, shard_of
    from cookproc.core.parquet_io import write_parquet
    from cookproc.core.schemas import CLIP_KEY

    rng = random.Random(n_shards)
    n_videos = n_shards * clips_per_shard // CLIPS_PER_VIDEO
    by_shard: dict[int, list[str]] = {k: [] for k in range(n_shards)}
    for i in range(n_videos):
        video_id = f"synthetic{i:07d}"
        by_shard[shard_of(video_id, n_shards)].append(video_id)
    rows = 0
    for shard, videos in by_shard.items():
        documents = []
        for video_id in videos:
            clips = []
            for c, sentence in enumerate(transcript(rng).splitlines()):
                words = sentence.split()
                key = words[0] in VERBS
                clips.append({"clip_idx": c, "start_s": None, "end_s": None, "source_lines": [c + 1],
                              "sentence": sentence, "is_key": key, "key_probability": None, "key_score": None,
                              "verbs": [words[0]] if key else [], "args": [" ".join(words[1:3])] if key else [],
                              "tuples": [{"verb": words[0], "args": [" ".join(words[1:3])]}] if key else []})
            documents.append({"name": video_id, "extractor": "srl-heur-spacy", "segmentation": "cue", "clips": clips})
        table = documents_table(documents, [f"{v}.txt" for v in videos])
        write_parquet(table, dataset.parent / "shards" / f"shard={shard:05d}.parquet", CORPUS_CLIPS, sort_keys=CLIP_KEY)
        rows += table.num_rows
    build_dataset(sorted((dataset.parent / "shards").glob("*.parquet")), dataset, dataset.parent / "damaged")
    return rows


# Each step after the shards, as its script runs it (argv: dataset folder, shard count, scratch folder).
STEPS = {
    "imports only": "import pyarrow.parquet, cookproc.app.corpus, cookproc.app.report_pages",
    "corpus_dataset": "import glob, os\nfrom cookproc.app.corpus import build_dataset\n"
                      "build_dataset(sorted(glob.glob(os.path.dirname(d) + '/shards/*.parquet')), d, scratch + '/damaged')",
    "corpus_markdown": "from cookproc.app.corpus import write_markdown\n"
                       "write_markdown(d, scratch + '/markdown')",
    "report_corpus": "from cookproc.app.report_pages import summarise_corpus\n"
                     "from cookproc.evaluation.report import page\n"
                     "page('corpus', summarise_corpus(d).html(top=20))",
    "corpus_export": "from cookproc.app.corpus import CORPUS_CLIPS, read_dataset\n"
                     "from cookproc.core.parquet_io import write_parquet\n"
                     "from cookproc.core.schemas import CLIP_KEY\n"
                     "write_parquet(read_dataset(d), scratch + '/export.parquet', CORPUS_CLIPS, sort_keys=CLIP_KEY)",
}


def peak_rss_mb(code: str, *args: str) -> float:
    """Run ``code`` in a fresh Python process and return its peak RSS (the kernel's, via wait4)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"), OMP_NUM_THREADS="1")
    prelude = "import sys\nd, n, scratch = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
    proc = subprocess.Popen([sys.executable, "-c", prelude + code, *args], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{code!r} failed with exit code {proc.returncode}")
    return usage.ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=160, help="generated transcripts of the end-to-end run (0: skip)")
    parser.add_argument("--shards", type=int, default=4, help="shards of the end-to-end run")
    parser.add_argument("--scale", type=int, nargs="*", default=[8, 32, 96], help="shard counts of the scaling runs")
    parser.add_argument("--clips-per-shard", type=int, default=74_801 // 8)
    args = parser.parse_args()
    print(f"# {os.uname().nodename}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}", flush=True)
    if args.files:
        with tempfile.TemporaryDirectory(prefix="corpus-memory-") as tmp:
            run = end_to_end(Path(tmp), args.files, args.shards)
        shard = max(run["shards"])
        print(f"end to end: {args.files} transcripts ({args.files * CLIPS_PER_VIDEO} clips), {args.shards} shards, -c2, "
              f"{run['wall_s']:.0f} s wall; max RSS per shard job (MB): "
              + ", ".join(f"{m:.0f}" for m in run["shards"]), flush=True)
        for step in ("corpus_dataset", "corpus_markdown", "report_corpus", "corpus_export"):
            print(f"  {step}: {run[step]:.0f} MB = {run[step] / shard:.2f}x the largest shard job", flush=True)
        downstream = max(run[s] for s in ("corpus_dataset", "corpus_markdown", "report_corpus"))
        print(f"  downstream of the shards (dataset, Markdown, report) peak / shard peak = {downstream / shard:.2f}",
              flush=True)
    results = {}
    for n_shards in args.scale:
        with tempfile.TemporaryDirectory(prefix="corpus-scale-") as tmp:
            dataset = Path(tmp) / "results" / "procedures"
            start = time.perf_counter()
            rows = write_synthetic_dataset(dataset, n_shards, args.clips_per_shard)
            written = time.perf_counter() - start
            size = sum(p.stat().st_size for p in dataset.rglob("*.parquet")) / 2**20
            peaks = {step: peak_rss_mb(code, str(dataset), str(n_shards), tmp) for step, code in STEPS.items()}
            summary_kb = (dataset / "_metadata").stat().st_size / 1024
        results[n_shards] = peaks
        print(f"scaling: {n_shards} shards, {rows:,} clips ({size:.0f} MB of Parquet, written in {written:.0f} s; "
              f"_metadata {summary_kb:.0f} KB); "
              "peak RSS (MB): " + ", ".join(f"{s} {m:.0f}" for s, m in peaks.items()), flush=True)
    if len(results) > 1:
        small, large = min(results), max(results)
        print(f"scaling {small} -> {large} shards ({large / small:.0f}x the rows): "
              + ", ".join(f"{s} {results[large][s] / results[small][s]:.2f}x" for s in STEPS), flush=True)
    print(json.dumps({"scale": results}))


if __name__ == "__main__":
    main()
