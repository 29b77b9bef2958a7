"""What training and running the SRL tagger cost, old code against new: train_srl and srl_parse_tagger.

    .venv/bin/python bench/srl_cost.py --base 54add3b            # that commit against this tree
    .venv/bin/python bench/srl_cost.py --base 54add3b --every 5  # a larger slice of EWT
    .venv/bin/python bench/srl_cost.py --base 54add3b --no-labelling  # train_srl's work only
    .venv/bin/python bench/srl_cost.py --base 54add3b --epochs 3      # both with 3 epochs per head
    .venv/bin/python bench/srl_cost.py --base 54add3b --threads 1     # one core each (taskset -c N)
    .venv/bin/python bench/srl_cost.py --base 54add3b --every 20 --epochs 1 --sentences 3000 --repeat 2  # quick

Exports ``--base`` (``git archive``) and the current tree, then runs, for each in turn and in a
process of its own that imports that checkout's ``cookproc`` (PYTHONPATH), with ``--threads`` (2):
  - train_srl's steps on a slice of EWT (every ``--every``-th document of each split, from
    results/srl/training_data/ewt.parquet): preparation (spaCy, encoder features), training with the
    checkout's own `srl:` settings (config.yaml: epochs, heads, ...; ``--epochs`` sets the epochs
    of both, for a quicker per-epoch comparison), scoring on the slice's test documents;
  - srl_parse_tagger's work: every benchmark sentence (results/dataset/clips.parquet; the first
    ``--sentences`` of them) labelled with the tagger that checkout just trained, its stages (spaCy,
    encoder, tagger) timed apart.
Prints seconds per step, current / base ratios and the test span F1 of both, all from this one run,
and whether the two checkouts trained identical weights (a digest of every tensor) and labelled the
sentences identically (tags and probabilities, sentence by sentence).
The slice keeps the ratio of training to preparation of the full training data only roughly; the full-size
measurements are in docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import re
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rerun_overhead import REPO, export_base, export_current

TRAINING_DATA = REPO / "results" / "srl" / "training_data" / "ewt.parquet"
CLIPS = REPO / "results" / "dataset" / "clips.parquet"


class StageTimes(logging.Handler):
    """Collects label_with_tagger's own log lines ("spaCy: ... in 1.2s", "encoder: ...", "tagger: ...")."""

    def __init__(self):
        super().__init__()
        self.seconds = {}

    def emit(self, record):
        found = re.match(r"(spaCy|encoder|tagger): .* in ([0-9.]+)s$", record.getMessage())
        if found:
            self.seconds[f"  labelling: {found[1]}"] = float(found[2])


def worker(checkout: Path, every: int, epochs: int | None, labelling: bool, threads: int, out: Path,
           n_sentences: int | None = None) -> None:
    """Runs inside the checkout's interpreter path: train on the slice, score, label the benchmark."""
    import torch
    import yaml

    from cookproc.core.parquet_io import read_parquet
    from cookproc.core.schemas import CLIPS as CLIPS_SCHEMA
    from cookproc.srl.training_data import SRL_TRAINING_DATA
    from cookproc.srl.predict import label_with_tagger
    from cookproc.srl.training import TaggerTrainConfig, evaluate, prepare, train_ensemble
    from cookproc.srl.word_encoder import WordEncoder

    torch.set_num_threads(threads)
    srl = yaml.safe_load((checkout / "config.yaml").read_text())["srl"]
    settings = srl.get("tagger", srl)  # a checkout before issue 38 keeps them in section srl itself
    names = {f.name for f in dataclasses.fields(TaggerTrainConfig)} - {"predicate_tags", "device", "threads"}
    cfg = TaggerTrainConfig(**{k: v for k, v in settings.items() if k in names}, device=srl.get("device", "cpu"),
                            threads=threads, predicate_tags=tuple(srl["predicate_tags"]))
    if epochs:
        cfg = dataclasses.replace(cfg, epochs=epochs)
    rows = read_parquet(TRAINING_DATA, SRL_TRAINING_DATA).to_pylist()
    docs = {split: sorted({r["doc"] for r in rows if r["split"] == split}) for split in ("train", "dev", "test")}
    kept = {doc for split in docs for doc in docs[split][::every]}
    rows = [r for r in rows if r["doc"] in kept]
    seconds = {}
    t0 = time.perf_counter()
    encoder = WordEncoder(cfg.encoder)
    prep = prepare(rows, encoder)
    seconds["preparation"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tagger, members = train_ensemble(prep, cfg, encoder.n_layers, encoder.dim, settings["ensemble"])
    seconds["training"] = time.perf_counter() - t0
    entries = [e for m in members for e in m["epochs"]]
    seconds["  training: epochs (gradient steps)"] = sum(e.get("train_seconds", 0.0) for e in entries)
    seconds["  training: dev scoring"] = sum(e["seconds"] - e.get("train_seconds", 0.0) for e in entries)
    weights = hashlib.sha256()
    for head in tagger.heads:
        for name, tensor in sorted(head.state_dict().items()):
            weights.update(name.encode() + tensor.detach().cpu().numpy().tobytes())
    f1 = evaluate(tagger, prep, "test")["overall"]["f1"]
    sentences, labelled = [], []
    if labelling:
        sentences = read_parquet(CLIPS, CLIPS_SCHEMA).column("sentence").to_pylist()[:n_sentences]
        stages = StageTimes()
        logging.getLogger("cookproc.srl.predict").addHandler(stages)
        logging.getLogger("cookproc.srl.predict").setLevel(logging.INFO)
        t0 = time.perf_counter()
        parses = label_with_tagger(sentences, tagger, encoder=encoder)
        seconds["labelling the benchmark"] = time.perf_counter() - t0
        seconds.update(stages.seconds)
        labelled = [repr(f) for f in parses]  # tags, words and probabilities of every chunk
    out.write_text(json.dumps({"seconds": seconds, "test_f1": f1, "epochs": cfg.epochs,
                               "heads": settings["ensemble"], "training_rows": len(rows),
                               "sentences": len(sentences), "weights": weights.hexdigest(),
                               "labelled": labelled}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the commit to compare the current tree with")
    parser.add_argument("--every", type=int, default=10, help="keep every n-th EWT document of each split")
    parser.add_argument("--epochs", type=int, help="epochs per head for both (default: each checkout's config)")
    parser.add_argument("--no-labelling", dest="labelling", action="store_false",
                        help="skip srl_parse_tagger's work (labelling the benchmark sentences)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of both runs")
    parser.add_argument("--sentences", type=int, help="label only the first n benchmark sentences")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each, in the order base, current, current, base, ...; the fastest counts")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.every, args.epochs, args.labelling, args.threads, args.out, args.sentences)
        return 0
    if not args.base:
        parser.error("--base is required")
    for needed in (TRAINING_DATA, CLIPS) if args.labelling else (TRAINING_DATA,):
        if not needed.is_file():
            sys.exit(f"{needed} is missing: build it first (.venv/bin/snakemake -c2 {needed.relative_to(REPO)})")
    runs = {"base": [], "current": []}
    with tempfile.TemporaryDirectory(prefix="srl-cost-") as tmp:
        tmp = Path(tmp)
        checkouts = {"base": export_base(args.base, tmp / "base"), "current": export_current(tmp / "current")}
        for r in range(args.repeat):  # alternating (ABBA...), so that a drift in the machine's load hits both
            for name, src in (list(checkouts.items()) if r % 2 == 0 else list(checkouts.items())[::-1]):
                out = tmp / f"{name}.json"
                env = dict(os.environ, PYTHONPATH=str(src / "workflow"))
                subprocess.run([sys.executable, __file__, "--worker", str(src), "--every", str(args.every),
                                "--threads", str(args.threads), "--out", str(out)]
                               + ([] if args.labelling else ["--no-labelling"])
                               + (["--epochs", str(args.epochs)] if args.epochs else [])
                               + (["--sentences", str(args.sentences)] if args.sentences else []),
                               cwd=REPO, env=env, check=True)
                runs[name].append(json.loads(out.read_text()))
    results = {}
    for name, done in runs.items():  # each step's fastest run
        results[name] = dict(done[0], seconds={step: min(r["seconds"][step] for r in done) for step in done[0]["seconds"]})
        if len({(r["weights"], tuple(r["labelled"])) for r in done}) > 1:
            print(f"warning: the {name} runs did not repeat their own results")
    base_rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=REPO, capture_output=True,
                              text=True).stdout.strip()
    base, current = results["base"], results["current"]
    labelled = f"{base['sentences']} benchmark sentences labelled" if args.labelling else "no labelling"
    print(f"\nEWT slice: every {args.every}th document ({base['training_rows']} training-data rows); {labelled}")
    print(f"| step (fastest of {args.repeat}) | base {base_rev} (s) | current tree (s) | current / base |")
    print("|---|---:|---:|---:|")
    for step in base["seconds"]:
        b, c = base["seconds"][step], current["seconds"][step]
        print(f"| {step} | {b:.1f} | {c:.1f} | {c / b:.2f} |")
    b = base["seconds"]["preparation"] + base["seconds"]["training"]
    c = current["seconds"]["preparation"] + current["seconds"]["training"]
    print(f"| train_srl's work (preparation + training) | {b:.1f} | {c:.1f} | {c / b:.2f} |")
    print(f"\ntest span F1 on the slice: base {base['test_f1']:.4f} ({base['heads']} heads x {base['epochs']} "
          f"epochs), current {current['test_f1']:.4f} ({current['heads']} heads x {current['epochs']} epochs)")
    same = sum(a == b for a, b in zip(base["labelled"], current["labelled"]))
    print(f"trained weights identical: {'yes' if base['weights'] == current['weights'] else 'NO'}; "
          f"sentences labelled identically (tags and probabilities): {same} of {len(base['labelled'])}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.threads} torch thread(s) each; load average after: {load}; {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
