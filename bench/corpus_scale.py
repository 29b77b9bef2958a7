"""Corpus-scale extraction: throughput per extractor and end-to-end corpus runs (issue 20).

    .venv/bin/python bench/corpus_scale.py --keyclips results/models/keyclips-neural-text \
        [--tuples results/models/tuples-supervised-text]
    .venv/bin/python bench/corpus_scale.py --keyclips ... --sample 300 --shards 1 2

Measures, on the upstream transcripts of config.yaml's mirror (all 1,736 by default):
  1. Throughput on one core: clips per second of each SRL extractor (``srl-heur-spacy``,
     ``srl-spacy``), of the trained tuple extractor (with ``--tuples``) and of the trained key-clip
     selector, each on the same sample of transcripts (``--sample`` files, the first by name), in
     a fresh process with torch and BLAS held to one thread. The extractors and the selector are
     timed apart: a document's cost is the selector's plus one extractor's. The trained tuple
     extractor fits its chosen models in every call: its fixed cost per call (one video) is
     printed apart from its rate beyond it.
  2. The corpus target end to end (``corpus_all``: the dataset ``results/corpus/youcook2/procedures/``)
     through Snakemake in a fresh working directory, once per ``--shards`` value, with 2 cores: wall
     time, and each shard's peak memory (Snakemake's benchmark files: max_rss of the job); the
     memory of the steps after the shards: bench/corpus_memory.py. The tuples
     come from ``--tuples`` when given, else from ``srl-heur-spacy``.
The models must exist (``snakemake -c2 results/models/keyclips-neural-text
results/models/tuples-supervised-text``); the working directories' config names them by their
absolute paths, so nothing is trained here. Prints one table; the numbers vary with the machine's
load, which is printed with them.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
sys.path.insert(0, str(REPO / "bench"))
from workflow_bench import make_workdir  # noqa: E402

# One extractor on a sample, in a process of its own with one thread (argv: settings JSON, files JSON).
THROUGHPUT = r"""
import json, os, sys, time
import torch
torch.set_num_threads(1)
from cookproc.app.models import read_cooking_lexicon
from cookproc.app.procedures import ProcedureSettings, load_extractor
from cookproc.app.subtitles import read_clips_and_segmentation
settings, files, lexicon, what = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
settings = ProcedureSettings.from_config(settings)
clips = [read_clips_and_segmentation(f, segmentation=settings.segmentation)[0] for f in files]
sentences = [c.sentence for cs in clips for c in cs]
videos = [k for k, cs in enumerate(clips) for _ in cs]
extractor = load_extractor(settings, read_cooking_lexicon(lexicon))
fixed = {}
if what == "selector":  # the selector alone: its tuples are timed as their own extractor
    from cookproc.app.extractors import score_by_video
    texts = [s.lower() for s in sentences]
    start = time.perf_counter()
    score_by_video(extractor.selector, texts, videos)
elif what == "tuples":  # the trained tuple extractor alone (it needs a selector for key clips)
    # Its fits run in every call: one video twice (the first also loads WordNet and the tagger), then
    # the sample; the second call is the fixed cost a call pays whatever its size.
    first = videos.count(0)
    extractor.tuples.extract(sentences[:first], videos=videos[:first])
    start = time.perf_counter()
    extractor.tuples.extract(sentences[:first], videos=videos[:first])
    fixed = {"fixed_seconds": time.perf_counter() - start, "fixed_clips": first}
    start = time.perf_counter()
    extractor.tuples.extract(sentences, videos=videos)
else:
    start = time.perf_counter()
    extractor.extract(sentences, videos=videos)
seconds = time.perf_counter() - start
print(json.dumps({"clips": len(sentences), "videos": len(files), "seconds": seconds, **fixed}))
"""


def throughput(settings: dict, files: list[Path], lexicon: Path, what: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=str(REPO / "workflow"))
    proc = subprocess.run([sys.executable, "-c", THROUGHPUT, json.dumps(settings), json.dumps([str(f) for f in files]),
                           str(lexicon), what], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def corpus_run(workdir: Path, shards: int, keyclips: Path, tuples: Path | None, upstream: Path) -> dict:
    # The models by their absolute paths: files no rule produces, so nothing is trained here.
    make_workdir(workdir, upstream, {"corpus.shards": shards, "procedures.keyclip_model": str(keyclips.resolve()),
                                     "procedures.tuple_model": str(tuples.resolve()) if tuples else None})
    target = "corpus_all"
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    # Checksums and WordNet first: the timed run is the shards and the dataset's summary.
    subprocess.run([str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "-c2", "results/dataset/upstream-checksums.tsv",
                    "resources/nltk_data"], cwd=workdir, env=env, check=True, capture_output=True)
    plan = subprocess.run([str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "-c2", "-n", target], cwd=workdir, env=env,
                          check=True, capture_output=True, text=True).stdout
    rules = set(re.findall(r"^(?:local)?rule (\S+):$", plan, re.MULTILINE))
    corpus_rules = {"corpus_shard", "corpus_dataset", "corpus_all"}
    if rules != corpus_rules:
        raise RuntimeError(f"the corpus run would also run {sorted(rules - corpus_rules)}")
    start = time.perf_counter()
    proc = subprocess.run([str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "-c2", target], cwd=workdir, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"corpus run with {shards} shards failed:\n{(proc.stdout + proc.stderr)[-4000:]}")
    peaks = []
    for tsv in sorted((workdir / "benchmarks" / "corpus" / "corpus_shard" / "youcook2").glob("*.tsv")):
        with tsv.open() as handle:
            row = next(csv.DictReader(handle, delimiter="\t"))
        peaks.append((tsv.stem, float(row["s"]), float(row["max_rss"])))
    import pyarrow.dataset as ds

    table = ds.dataset(workdir / "results/corpus/youcook2/procedures", partitioning="hive").to_table(
        columns=["video_id", "is_key"])
    return {"shards": shards, "wall_s": wall, "per_shard": peaks, "clips": table.num_rows,
            "videos": len(set(table.column("video_id").to_pylist())),
            "key": sum(table.column("is_key").to_pylist())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keyclips", type=Path, required=True, help="the trained key-clip selector's folder")
    parser.add_argument("--tuples", type=Path, help="the trained tuple extractor's folder (default: srl-heur-spacy)")
    parser.add_argument("--sample", type=int, default=200, help="transcripts in the throughput sample (0: skip)")
    parser.add_argument("--shards", type=int, nargs="*", default=[1, 2], help="end-to-end runs (none: skip)")
    args = parser.parse_args()
    if not (args.keyclips / "model.json").is_file():
        sys.exit(f"{args.keyclips}: no trained key-clip selector (snakemake -c2 results/models/keyclips-neural-text)")
    if args.tuples and not (args.tuples / "model.json").is_file():
        sys.exit(f"{args.tuples}: no trained tuple extractor (snakemake -c2 results/models/tuples-supervised-text)")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    upstream = (REPO / config["upstream"]["dir"]).resolve()
    files = sorted((upstream / "youcook2" / "transcript").glob("*.txt"))
    lexicon = upstream / "youcook2" / "1.2.cooking_vocab.strict_filtered.unsorted.lst"
    sample = files[:args.sample]
    print(f"# {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; corpus {len(files)} "
          f"transcripts; throughput sample {len(sample)}")
    base = dict(config["procedures"], keyclip_model=None, tuple_model=None)
    selected = dict(base, keyclip_model=str(args.keyclips))
    runs = [("srl-heur-spacy", dict(base, extractor="srl-heur"), "extract"),
            ("srl-spacy", dict(base, extractor="srl"), "extract"),
            *([(args.tuples.name, dict(selected, tuple_model=str(args.tuples)), "tuples")] if args.tuples else []),
            (args.keyclips.name, selected, "selector")]
    rows = []
    for name, settings, what in [] if args.sample == 0 else runs:
        result = throughput(settings, sample, lexicon, what)
        rows.append((name, result))
        print(f"throughput {name}: {result['clips']} clips of {result['videos']} videos in {result['seconds']:.1f} s on "
              f"1 core = {result['clips'] / result['seconds']:.1f} clips/s/core", flush=True)
        if "fixed_seconds" in result:
            marginal = (result["seconds"] - result["fixed_seconds"]) / (result["clips"] - result["fixed_clips"])
            print(f"  {name}: fixed cost of a call {result['fixed_seconds']:.1f} s (one video, {result['fixed_clips']} "
                  f"clips); beyond it {1 / marginal:.1f} clips/s/core", flush=True)
    for shards in args.shards:
        with tempfile.TemporaryDirectory(prefix="corpus-bench-") as tmp:
            run = corpus_run(Path(tmp) / "work", shards, args.keyclips, args.tuples, upstream)
        peak = max(p[2] for p in run["per_shard"])
        print(f"corpus, {shards} shard(s), -c2: {run['videos']} videos, {run['clips']} clips ({run['key']} key) in "
              f"{run['wall_s']:.0f} s wall; per shard (s, max RSS MB): "
              + ", ".join(f"{n} {s:.0f} s {m:.0f} MB" for n, s, m in run["per_shard"])
              + f"; peak {peak:.0f} MB; load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
