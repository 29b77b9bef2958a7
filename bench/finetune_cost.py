"""What one seed of a fine-tuning rule costs by the number of trained layers, measured on a slice.

    .venv/bin/python bench/finetune_cost.py --layers 6 2            # keyclips_finetune (MiniLM-L6)
    .venv/bin/python bench/finetune_cost.py --layers 12 6 --encoder all-mpnet-base-v2  # supervised_finetune
    .venv/bin/python bench/finetune_cost.py --layers 6 3 2 --threads 1  # one core (taskset -c N)

For each layer count, in this one process and in turn, times the three parts of the rule's work
(cookproc.keyclips.finetune) on a random slice of the benchmark sentences: the frozen bottom
(run once per seed), ``--batches`` training batches, and the scoring pass over ``--embed``
sentences. It then projects one seed of the rule from the workflow's real fold sizes
(results/keyclips/folds.parquet: each fold trains on its training clips, scores its validation
clips, then embeds every clip) and prints each count's projection relative to the first's (the
frozen bottom's time includes loading the encoder, a few seconds, and is scaled with it). The
labels are random (cost does not depend on them), so no score is printed: a layer count's score
is measured with the workflow (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from cookproc.keyclips import finetune as ft
from cookproc.keyclips import frozen_bottom as fb
from cookproc.learn.folds import clip_folds, read_folds, split_indices
from cookproc.learn.inputs import read_clips_parquet
from cookproc.keyclips.neural import set_torch_threads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, nargs="+", required=True, help="trained top layers; the first is the base")
    ap.add_argument("--encoder", default=None, help="local Hugging Face folder or installed name (default MiniLM-L6)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", type=int, default=40, help="training batches timed per layer count")
    ap.add_argument("--embed", type=int, default=4000, help="sentences scored per layer count")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    set_torch_threads(args.threads)
    clips = read_clips_parquet("results/dataset/clips.parquet")
    fold, inner = clip_folds(read_folds("results/keyclips/folds.parquet", clips), clips)
    base_cfg = ft.FinetuneConfig(layers=1)  # batch sizes and lengths only: the layers vary below
    n_train_steps, n_scored = 0, 0
    for f in sorted(np.unique(fold).tolist()):
        train, val, _ = split_indices(fold, inner, f)
        n_train_steps += ft.training_batches(len(train), base_cfg)
        n_scored += len(val) + len(clips)  # validation loss, then every clip's finetuned vector
    sentences = clips["sentence"].tolist()
    rng = np.random.default_rng(args.seed)
    need = args.batches * base_cfg.batch_size + base_cfg.batch_size + args.embed
    if need > len(sentences):
        ap.error(f"--batches and --embed need {need} sentences; the benchmark has {len(sentences)}")
    pick = rng.choice(len(sentences), size=need, replace=False)
    sample = [sentences[i] for i in pick]
    labels = (rng.random(len(sample)) < 0.27).astype(np.float32)
    train = np.arange(args.batches * base_cfg.batch_size)
    val = np.arange(len(train), len(train) + base_cfg.batch_size)
    print(f"one seed of the rule: {n_train_steps} training batches, {n_scored} sentences scored, "
          f"{len(clips)} through the frozen bottom; slice: {len(sample)} sentences, {args.threads} threads")
    projected = {}
    for layers in args.layers:
        start = time.perf_counter()
        bottom = fb.load_bottom(args.encoder, sample, layers, max_length=base_cfg.max_length)
        bottom_s = time.perf_counter() - start
        cfg = ft.FinetuneConfig(layers=layers)
        start = time.perf_counter()
        net, _ = ft.train_top(bottom, labels, train, val, cfg, args.seed)
        train_s = time.perf_counter() - start
        start = time.perf_counter()
        ft.finetuned_outputs(net, bottom, args.embed)  # the first --embed sentences of the slice
        embed_s = time.perf_counter() - start
        projected[layers] = (bottom_s * len(clips) / len(sample) + train_s / args.batches * n_train_steps
                             + embed_s / args.embed * n_scored)
        print(f"{layers:>2} layers: frozen bottom {bottom_s:6.1f} s, {args.batches} batches {train_s:6.1f} s, "
              f"{args.embed} scored {embed_s:6.1f} s -> one seed {projected[layers]:7.0f} s, "
              f"{projected[layers] / projected[args.layers[0]]:.2f} x {args.layers[0]} layers", flush=True)


if __name__ == "__main__":
    main()
