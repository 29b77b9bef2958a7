"""Speed of the Kiddon segmenter on the real training text: hard-EM training plus segmentation of the
benchmark, in this process (what the two workflow rules do, without Snakemake around them).

    .venv/bin/python bench/kiddon_speed.py                  # one run, 15 iterations
    .venv/bin/python bench/kiddon_speed.py --determinism    # twice, and compare the outputs

Target (issue 5): training plus segmentation under 5 minutes on 2 cores. The code is
single-threaded, so CPU seconds are the machine-independent figure; wall seconds grow with the
load of the machine, which is printed with them. With --determinism the second run is made in a
subprocess under another PYTHONHASHSEED and its model JSON and tuples must be byte-identical.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BUDGET_S = 300.0


def run(upstream: Path, iterations: int) -> dict:
    """Train and segment once; timings, sizes and digests of the outputs."""
    from cookproc.data.dataset import read_benchmark_csv, read_repairs
    from cookproc.kiddon.training_text import read_lexicon_words, read_transcripts
    from cookproc.kiddon.outputs import clip_tuples, key_clips, segment_clips
    from cookproc.kiddon.segmenter import Segmenter, Settings, training_sentences, train
    from cookproc.data.wordnet import has_verb_synset, wordnet

    youcook2 = upstream / "youcook2"
    wall, cpu = time.perf_counter(), time.process_time()
    wordnet()  # loaded once per process whatever runs first; counted in the total
    documents = read_transcripts(youcook2 / "transcript")
    lexicon = read_lexicon_words(youcook2 / "1.2.cooking_vocab.strict_filtered.unsorted.lst")
    model, history = train(training_sentences(documents), lexicon, has_verb_synset, iterations=iterations,
                           settings=Settings())
    train_wall, train_cpu = time.perf_counter() - wall, time.process_time() - cpu

    clips = read_benchmark_csv(youcook2 / "reviewed_0812.csv", repairs=read_repairs(REPO / "workflow/schemas/upstream-repairs.tsv"))
    columns = clips.select(["video_id", "clip_idx", "sentence"]).to_pydict()
    rows = segment_clips(zip(columns["video_id"], columns["clip_idx"], columns["sentence"]), model,
                         Segmenter(Settings.from_dict(model.settings)))
    keys = list(zip(columns["video_id"], columns["clip_idx"]))
    tuples = {layout: clip_tuples(rows, keys, layout) for layout in ("all", "first-frame")}
    total_wall, total_cpu = time.perf_counter() - wall, time.process_time() - cpu
    digest = hashlib.sha256()
    digest.update(model.to_json().encode())
    digest.update(json.dumps([[list(k), tuples["all"][k], tuples["first-frame"][k]] for k in sorted(keys)]).encode())
    return {
        "train_wall_s": train_wall, "train_cpu_s": train_cpu,
        "segment_wall_s": total_wall - train_wall, "segment_cpu_s": total_cpu - train_cpu,
        "total_wall_s": total_wall, "total_cpu_s": total_cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "sentences": history[-1].n_sentences, "clips": len(keys), "key_clips": sum(key_clips(rows, keys).values()),
        "verbs": len(model.verb_counts), "digest": digest.hexdigest(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    parser.add_argument("--upstream", type=Path, default=REPO / config["upstream"]["dir"])
    parser.add_argument("--iterations", type=int, default=config["kiddon"]["iterations"])
    parser.add_argument("--determinism", action="store_true", help="run twice (other hash seed) and compare")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one run, JSON out
    args = parser.parse_args()
    if args.json:
        print(json.dumps(run(args.upstream, args.iterations)))
        return 0

    first = run(args.upstream, args.iterations)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print(f"training text: {first['sentences']} transcript sentences; {first['clips']} benchmark clips, "
          f"{first['key_clips']} key; model of {first['verbs']} verbs after {args.iterations} iterations")
    print(f"{'':12s}{'wall s':>9s}{'cpu s':>9s}")
    for part in ("train", "segment", "total"):
        print(f"{part:12s}{first[part + '_wall_s']:9.1f}{first[part + '_cpu_s']:9.1f}")
    print(f"peak RSS {first['peak_rss_mb']:.0f} MB")
    print(f"total / budget ({BUDGET_S:.0f} s): wall {first['total_wall_s'] / BUDGET_S:.2f}, "
          f"cpu {first['total_cpu_s'] / BUDGET_S:.2f}")
    ok = first["total_wall_s"] < BUDGET_S
    if args.determinism:
        seed = "4242" if os.environ.get("PYTHONHASHSEED") != "4242" else "2424"
        out = subprocess.run([sys.executable, __file__, "--json", "--upstream", str(args.upstream),
                              "--iterations", str(args.iterations)], capture_output=True, text=True, check=True,
                             env=dict(os.environ, PYTHONHASHSEED=seed))
        second = json.loads(out.stdout.strip().splitlines()[-1])
        same = second["digest"] == first["digest"]
        print(f"determinism: second run (PYTHONHASHSEED={seed}) outputs "
              f"{'identical' if same else 'DIFFERENT'} (sha256 {first['digest'][:16]}...)")
        ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
