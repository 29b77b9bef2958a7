"""Time labelling every benchmark sentence with the trained SRL tagger (target: <= 10 min on 2 cores).

Usage: .venv/bin/python bench/srl_label_speed.py [results/srl/model/tagger.pt] [threads]
Prints seconds per stage (spaCy, encoder, head) and the total, measured in this one run.
"""
import logging
import sys
import time

import torch

from cookproc.core.parquet_io import read_parquet
from cookproc.core.schemas import CLIPS
from cookproc.srl.predict import label_with_tagger, load_tagger


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "results/srl/model/tagger.pt"
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(threads)
    sentences = read_parquet("results/dataset/clips.parquet", CLIPS).column("sentence").to_pylist()
    t0, c0 = time.perf_counter(), time.process_time()
    parses = label_with_tagger(sentences, load_tagger(model))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{len(sentences)} sentences, {sum(map(len, parses))} predicate frames: wall {wall:.1f}s, process CPU {cpu:.1f}s, "
          f"{threads} threads; target 600s -> ratio {wall / 600:.2f}")


if __name__ == "__main__":
    main()
