"""Wall-clock time of one cross-validated run (all folds) of each neural key-clip variant, and of tfidf-lr.

Reads the workflow's own inputs, so run it after the workflow has made them:

    .venv/bin/python bench/keyclips_cv.py --threads 2 [--variants text visual full] [--seed 0]

Prints seconds per variant (all folds), per fold, and each variant's time relative to text-only;
the budget in issue 9 is 15 minutes per variant on 2 cores. With fine-tuning (keyclips.neural.finetune;
``--layers 0`` times the variants without), the encoder is fine-tuned once for all folds, as rule
keyclips_finetune does (its time includes running the frozen bottom once), and text and full each
count that time plus their own net's. Scores are printed too, so a timing run doubles as a check
that a fresh run agrees with the workflow's files.
"""
from __future__ import annotations

import argparse
import time

import yaml

from cookproc.learn.keyclip_crossval import cross_validate
from cookproc.keyclips.finetune import FinetuneConfig, finetune_folds
from cookproc.keyclips.frozen_bottom import load_bottom
from cookproc.learn.folds import clip_folds, read_folds
from cookproc.learn.inputs import frame_sets, read_clips_parquet, text_inputs, tsm_sets
from cookproc.keyclips.neural import FinetunedSentences, run_neural, set_torch_threads
from cookproc.learn.sentence_vectors import clip_text_features
from cookproc.keyclips.tfidf import tfidf_fit_predict
from cookproc.keyclips.train import KeyClipTrainConfig
from cookproc.scoring.metrics import score_keyclips


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config.yaml")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", nargs="+", default=["text", "visual", "full", "tfidf"],
                    choices=["text", "visual", "full", "tfidf"])
    ap.add_argument("--layers", type=int, default=None, help="fine-tuned encoder layers (default: the config's)")
    args = ap.parse_args()
    with open(args.config, encoding="utf-8") as handle:
        kc = yaml.safe_load(handle)["keyclips"]
    set_torch_threads(args.threads)
    clips = read_clips_parquet("results/dataset/clips.parquet")
    folds = read_folds("results/keyclips/folds.parquet", clips)
    text_path = f"results/features/text/{kc['text']['name']}.parquet"
    vectors = clip_text_features(text_path, clips)
    window, layout = kc["neural"]["context_window"], kc["neural"]["layout_features"]
    text = text_inputs(clips, vectors, context_window=window, layout=layout)
    finetune = FinetuneConfig(**kc["neural"].get("finetune", {}))
    if args.layers is not None:
        finetune = FinetuneConfig(**{**finetune.__dict__, "layers": args.layers})
    if kc["visual_source"] == "tsm":
        visual = tsm_sets(kc["tsm_aligned"], clips, max_set=kc["max_set"])
    else:
        visual = frame_sets(kc["frame_features"], clips, max_set=kc["max_set"])
    train_keys = [f for f in KeyClipTrainConfig.__dataclass_fields__ if f in kc["neural"]]
    cfg = KeyClipTrainConfig(**{k: kc["neural"][k] for k in train_keys})
    gold = clips["is_key"].to_numpy()
    seconds, finetuned, tuning_seconds = {}, None, 0.0
    if finetune.layers and {"text", "full"} & set(args.variants):
        start = time.perf_counter()
        bottom = load_bottom(kc["text"]["path"], clips["sentence"].astype(str).tolist(), finetune.layers,
                             max_length=finetune.max_length)
        fold, inner = clip_folds(folds, clips)
        per_fold = finetune_folds(bottom, gold.astype(bool), fold, inner, finetune, args.seed)
        finetuned = FinetunedSentences(per_fold, lambda v: text_inputs(clips, v, context_window=window, layout=layout),
                               kc["neural"].get("head_weight", 0.0))
        tuning_seconds = time.perf_counter() - start
        print(f"fine-tuning {tuning_seconds:7.1f} s all folds (per fold: "
              + " ".join(f"{t.info['seconds']:.0f}" for t in per_fold.values()) + ")", flush=True)
    for variant in args.variants:
        start = time.perf_counter()
        if variant == "tfidf":
            fold, inner = clip_folds(folds, clips)
            t = kc["tfidf"]
            result = cross_validate(fold, inner, gold, tfidf_fit_predict(
                clips, window=t["window"], ngram_max=t["ngram_max"], min_df=t["min_df"], C=t["C"]),
                cfg.threshold_metric)
        else:
            result = run_neural(variant, clips, folds, text if variant != "visual" else None,
                                visual if variant != "text" else None, cfg, args.seed,
                                finetuned if variant != "visual" else None)
        shares_tuning = finetuned is not None and variant in ("text", "full")
        seconds[variant] = time.perf_counter() - start + (tuning_seconds if shares_tuning else 0.0)
        s = score_keyclips(gold, result.is_key)
        per_fold = " ".join(f"{info['seconds']:.0f}" for info in result.info.values())
        what = "fine-tuning included, net" if shares_tuning else "model"
        print(f"{variant:7s} {seconds[variant]:7.1f} s all folds ({what} per fold: {per_fold}) | "
              f"acc {100 * s.accuracy:.1f} P {100 * s.precision:.1f} R {100 * s.recall:.1f} F1 {100 * s.f1:.1f}",
              flush=True)
    if "text" in seconds:
        for variant, sec in seconds.items():
            print(f"{variant}/text time ratio: {sec / seconds['text']:.2f}")
    print(f"threads: {args.threads}; fine-tuned encoder layers: {finetune.layers}; budget 900 s per variant: "
          + ", ".join(f"{v} {'ok' if s <= 900 else 'OVER'}" for v, s in seconds.items()))


if __name__ == "__main__":
    main()
