"""Device check: every torch rule's code path at its real size on one device, timed and projected.

    .venv/bin/python bench/gpu_check.py --device cuda          # a GPU node (at most ~6 min on an H200)
    .venv/bin/python bench/gpu_check.py --device cpu --tiny    # CI: the same paths, small sizes (< 1 min)

For each torch rule it builds the rule's model with the real architecture through the library's own
loaders (the real weights when installed: the packaged MiniLM-L6, data/encoders/all-mpnet-base-v2;
otherwise the same architecture, sizes from the constants below, with random weights and a WordPiece
vocabulary made here), runs the rule's library functions on synthetic inputs of the benchmark's
sentence lengths (no data needs to travel), and prints:

* per rule: the time of the measured slice and the projection of the rule's full job, from the
  number of steps / items the real rule processes (config.yaml and the benchmark's sizes below);
* the main job on one node of 16 cores and one GPU: the torch rules one after the other on the GPU,
  plus the other jobs' 2-core times (docs/benchmarks.md, "The main job from a fresh clone") spread
  over 16 cores, never less than the longest of them; stated as an estimate;
* agreement on a slice: the same weights and inputs on the CPU and on ``--device`` (max |diff| of
  embeddings and probabilities, equal tags). With ``--device cpu`` the CPU runs twice: every
  difference must be exactly 0 (results are bit-identical on the CPU at a fixed thread count).

Timers synchronise the device before reading the clock (cuda only). ``--tiny`` shrinks the data and the
models' depth, not the code path. ``--json FILE`` writes the same numbers as JSON.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

# The benchmark's sizes (docs/benchmarks.md and the issue that asked for this check).
N_CLIPS = 15_511            # benchmark clips = sentences (results/dataset/clips.parquet)
MEAN_WORDS = 14             # words per benchmark sentence, about
EWT_TRAIN_PREDICATES = 31_130  # srl train split predicates (results/srl/training_data/ewt.parquet)
EWT_DEV_PREDICATES = 5_100     # dev predicates, about (evaluated once per epoch of the last ones)
BENCHMARK_PREDICATES = 55_874  # predicates srl_parse_tagger labels in the 15,511 sentences
FRAMES_PER_VIDEO = 10 * 43     # video.resnet.frames_per_clip x clips of an average video
TSM_SEGMENTS_PER_VIDEO = 60    # 5 s segments of an average 5-minute video
# The main job's other jobs at 2 cores (docs/benchmarks.md, "The main job from a fresh clone"):
# the jobs' wall times sum to 9,599 s, of which the torch-device rules took supervised_finetune
# 4,774 + train_srl 2,752 + keyclips_finetune 757 + srl_parse_tagger 169 + text_features 56.
OTHER_JOBS_2CORE_S = 9_599 - (4_774 + 2_752 + 757 + 169 + 56)
LONGEST_OTHER_JOB_S = 257  # keyclips_neural_full, one thread
NODE_CORES = 16

ARCHITECTURES = {  # the configs of the shipped encoders (config.json), for random-weight stand-ins
    "all-MiniLM-L6-v2": dict(kind="bert", hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                             intermediate_size=1536, max_position_embeddings=512, vocab_size=30522),
    "all-mpnet-base-v2": dict(kind="mpnet", hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                              intermediate_size=3072, max_position_embeddings=514, vocab_size=30527),
}
WORDS = ("add the chopped onion to pan and stir it well now we are going to heat some oil then put salt pepper "
         "garlic into bowl mix flour with water cook for minutes until golden brown remove from heat serve hot "
         "cut chicken pieces slice tomato pour sauce over rice boil pasta drain set aside sprinkle cheese on top").split()

log = logging.getLogger("gpu_check")


class Clock:
    """Wall time of a block, the device synchronised before the clock is read (cuda only)."""

    def __init__(self, device: str):
        import torch

        self.sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    @contextlib.contextmanager
    def __call__(self, out: dict, key: str):
        self.sync()
        start = time.perf_counter()
        yield
        self.sync()
        out[key] = time.perf_counter() - start


def sentences(n: int, seed: int, mean_words: int = MEAN_WORDS) -> list[str]:
    """Synthetic transcript sentences with the benchmark's length spread (geometric around the mean)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.geometric(1.0 / mean_words, size=n), 2, 60)
    return [" ".join(rng.choice(WORDS, size=int(k))) for k in lengths]


RANDOM_WEIGHTS = False  # --random-weights: the random stand-ins even where the real weights are installed


def encoder_folder(name: str, root: Path, *, tiny: bool) -> tuple[Path, str]:
    """A Hugging Face folder of ``name``: the installed weights, else the real architecture with random
    weights (fewer layers with ``tiny``) and a WordPiece vocabulary of this file's words."""
    from transformers import BertConfig, BertModel, BertTokenizerFast, MPNetConfig, MPNetModel, MPNetTokenizerFast

    if (root / name).is_dir():  # built once per run
        return root / name, "random weights, real architecture" + (" (tiny: 2 layers, 1/4 width)" if tiny else "")
    if not tiny and not RANDOM_WEIGHTS:
        with contextlib.suppress(Exception):
            if name == "all-MiniLM-L6-v2":
                from cookproc.keyclips.sentence_encoder import local_model_dir
                return local_model_dir(None), "real weights"
            from cookproc.data.encoders import resolve
            return resolve(name), "real weights"
    arch = dict(ARCHITECTURES[name])
    kind = arch.pop("kind")
    if tiny:
        arch.update(num_hidden_layers=2, hidden_size=arch["hidden_size"] // 4, intermediate_size=arch["intermediate_size"] // 4,
                    num_attention_heads=arch["num_attention_heads"] // 4)
    path = root / name
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] if kind == "bert" else ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    vocab = {w: i for i, w in enumerate(specials + sorted(set(WORDS)) + [".", ","])}
    import torch

    torch.manual_seed(0)
    if kind == "bert":
        BertTokenizerFast(vocab=vocab).save_pretrained(path)
        BertModel(BertConfig(**arch)).eval().save_pretrained(path)
    else:
        MPNetTokenizerFast(vocab=vocab).save_pretrained(path)
        MPNetModel(MPNetConfig(**arch)).eval().save_pretrained(path)
    return path, "random weights, real architecture" + (" (tiny: 2 layers, 1/4 width)" if tiny else "")


def folds_sizes(config: dict) -> list[tuple[int, int]]:
    """(training, inner-validation) clips of each fold of keyclips.folds (k folds, inner_val_fraction)."""
    folds = config["keyclips"]["folds"]
    k, inner = int(folds["k"]), float(folds["inner_val_fraction"])
    outside = N_CLIPS * (k - 1) / k
    return [(int(outside * (1 - inner)), int(outside * inner))] * k


# ---------------------------------------------------------------------------------------------------
def check_finetune(rule: str, encoder: str, cfg_dict: dict, device: str, args, config: dict, root: Path) -> dict:
    """keyclips_finetune / supervised_finetune: the frozen bottom, training steps, the scoring pass."""
    import torch

    from cookproc.keyclips import finetune as ft
    from cookproc.keyclips import frozen_bottom as fb

    path, weights = encoder_folder(encoder, root, tiny=args.tiny)
    on_cuda = device.startswith("cuda")
    cfg = ft.FinetuneConfig(**cfg_dict, mixed_precision=config["torch"]["mixed_precision"] if on_cuda else "none",
                            compile=config["torch"]["compile"])
    layers = min(cfg.layers, 2) if args.tiny else cfg.layers
    cfg = ft.FinetuneConfig(**{**cfg.__dict__, "layers": layers, "epochs": 1})
    steps = 3 if args.tiny else args.steps
    n = (steps + 1) * cfg.batch_size + (64 if args.tiny else 1024)
    text = sentences(n, seed=1)
    labels = np.arange(n) % 4 == 0
    clock, t = Clock(device), {}
    with clock(t, "bottom"):
        bottom = fb.load_bottom(path, text, cfg.layers, max_length=cfg.max_length, device=device)
    train = np.arange(steps * cfg.batch_size)
    val = np.arange(len(train), len(train) + cfg.batch_size)
    warm = ft.FinetuneConfig(**{**cfg.__dict__})
    ft.train_top(bottom, labels, train[:cfg.batch_size], val, warm, 0)  # warm-up: kernels, allocator, autotuning
    with clock(t, "train"):
        net, _ = ft.train_top(bottom, labels, train, val, cfg, 0)
    if device.startswith("cuda") and rule == "keyclips_finetune":
        # bf16 against float32 on the same steps (docs/benchmarks.md, "bf16"): twice, so that the
        # second run meets only batch shapes the first one saw (per-shape kernel selection).
        bf16 = ft.FinetuneConfig(**{**cfg.__dict__, "mixed_precision": "bf16"})
        with clock(t, "bf16_first"):
            ft.train_top(bottom, labels, train, val, bf16, 0)
        with clock(t, "bf16_again"):
            ft.train_top(bottom, labels, train, val, bf16, 0)
    scored = np.arange(len(train) + cfg.batch_size, n)
    with clock(t, "score"):
        ft._run(net, bottom, scored, "embed", mixed_precision=cfg.mixed_precision)
    step_s = t["train"] / steps
    # The real rule: per fold, its training batches and the scoring of validation + every clip.
    full_cfg = ft.FinetuneConfig(**cfg_dict)
    sizes = folds_sizes(config)
    rule_steps = sum(ft.training_batches(n_train, full_cfg) for n_train, _ in sizes)
    rule_scored = sum(n_val + N_CLIPS for _, n_val in sizes)  # validation loss, then every clip's vector
    projected = (t["bottom"] * N_CLIPS / n + rule_steps * step_s + rule_scored * t["score"] / len(scored))
    # Agreement: the trained top's vectors on the CPU against the device's, same weights and inputs.
    agreement = None
    if not args.no_agreement:
        idx = scored[:64]
        states, mask = bottom.batch(idx)
        with torch.no_grad():
            here = net.eval().embed(states, mask).float().cpu()
            cpu_net = copy_to_cpu(net)
            there = cpu_net.embed(states.cpu(), mask.cpu())
        agreement = {"what": "finetuned sentence vectors, 64 sentences", "max_abs_diff": float((here - there).abs().max())}
    bf16_note = (f"; bf16 autocast {1000 * t['bf16_first'] / steps:.1f} ms a step, "
                 f"{1000 * t['bf16_again'] / steps:.1f} ms run again" if "bf16_first" in t else "")
    return {"rule": rule, "model": f"{encoder} ({weights}), top {cfg.layers} layers, batch {cfg.batch_size}",
            "measured": f"{steps} steps {t['train']:.2f} s ({1000 * step_s:.1f} ms a step{bf16_note}); bottom {n} "
                        f"sentences {t['bottom']:.2f} s; scoring {len(scored)} {t['score']:.2f} s",
            "seconds": t["train"] + t["bottom"] + t["score"],
            "projection": f"{len(sizes)} folds x {rule_steps // len(sizes)} steps + {rule_scored} sentences scored",
            "projected_s": projected, "agreement": agreement}


def copy_to_cpu(module):
    import copy

    return copy.deepcopy(module).cpu().eval()


def check_text_features(device: str, args, config: dict, root: Path) -> dict:
    from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder

    text_cfg = config["keyclips"]["text"]
    path, weights = encoder_folder("all-MiniLM-L6-v2", root, tiny=args.tiny)
    n = 128 if args.tiny else 4096
    text = sentences(n, seed=2)
    clock, t = Clock(device), {}
    encoder = load_sentence_encoder(path, pooling=text_cfg["pooling"], max_length=text_cfg["max_length"], device=device)
    embed_sentences(text[:64], encoder, batch_size=text_cfg["batch_size"])  # warm-up
    with clock(t, "embed"):
        vectors = embed_sentences(text, encoder, batch_size=text_cfg["batch_size"])
    agreement = None
    if not args.no_agreement:
        cpu = load_sentence_encoder(path, pooling=text_cfg["pooling"], max_length=text_cfg["max_length"], device="cpu")
        reference = embed_sentences(text[:128], cpu, batch_size=text_cfg["batch_size"])
        agreement = {"what": "sentence embeddings, 128 sentences",
                     "max_abs_diff": float(np.abs(vectors[:128] - reference).max())}
    return {"rule": "text_features", "model": f"all-MiniLM-L6-v2 ({weights})",
            "measured": f"{n} sentences {t['embed']:.2f} s", "seconds": t["embed"],
            "projection": f"{N_CLIPS} sentences", "projected_s": t["embed"] * N_CLIPS / n, "agreement": agreement}


def check_selector(device: str, args, config: dict, root: Path) -> dict:
    """deploy_keyclip_selector (train, save, load, score) and the selector of procedures_extract / corpus_shard."""
    import dataclasses

    import pandas as pd

    from cookproc.keyclips import deploy
    from cookproc.keyclips.finetune import FinetuneConfig
    from cookproc.keyclips.train import KeyClipTrainConfig

    kc = config["keyclips"]
    neural = kc["neural"]
    path, weights = encoder_folder("all-MiniLM-L6-v2", root, tiny=args.tiny)
    n = 200 if args.tiny else 2000
    text = sentences(n, seed=3)
    clips = pd.DataFrame({"video_id": [f"v{i // 20:04d}" for i in range(n)], "clip_idx": [i % 20 for i in range(n)],
                          "recipe": [f"r{i // 40}" for i in range(n)], "sentence": text,
                          "is_key": [("add" in s) or ("cut" in s) for s in text]})
    inner = clips["recipe"].isin([f"r{i}" for i in range(0, n // 40, 6)]).to_numpy()
    finetune = FinetuneConfig(**{**neural["finetune"], "epochs": 1, **({"layers": 1} if args.tiny else {})})
    train_cfg = {k: neural[k] for k in ("dim", "hidden", "dropout", "learning_rate", "weight_decay", "batch_size", "max_epochs",
                                        "patience", "threshold_metric", "lexical", "lexical_min_count")}  # rules/keyclips.smk
    net = dataclasses.replace(KeyClipTrainConfig(**train_cfg), max_epochs=3 if args.tiny else 10)
    clock, t = Clock(device), {}
    with clock(t, "train"):
        selector = deploy.train_selector(clips, inner, encoder_path=str(path), finetune=finetune, net=net,
                                         context_window=neural["context_window"],
                                         layout_features=neural["layout_features"], head_weight=neural["head_weight"],
                                         seed=0, device=device)
    out = root / "selector"
    with clock(t, "save"):
        deploy.save_selector(selector, out, deploy.metadata(selector, config={}, code="gpu_check"))
    with clock(t, "load"):
        loaded = deploy.KeyClipSelector.load(out, device=device)
    loaded.score(clips.iloc[:40])  # warm-up
    with clock(t, "score"):
        probability, _ = loaded.score(clips)
    agreement = None
    if not args.no_agreement:
        reference, _ = deploy.KeyClipSelector.load(out, device="cpu").score(clips)
        agreement = {"what": f"selector probabilities, {n} clips", "max_abs_diff": float(np.abs(probability - reference).max()),
                     "equal_decisions": f"{int(((probability >= loaded.spec.threshold) == (reference >= loaded.spec.threshold)).sum())}/{n}"}
    per_clip = t["score"] / n
    return {"rule": "deploy_keyclip_selector", "model": f"all-MiniLM-L6-v2 ({weights}), top {finetune.layers} layers",
            "measured": f"train {t['train']:.2f} s on {n} clips, save {t['save']:.2f} s, load {t['load']:.2f} s, "
                        f"score {n} clips {t['score']:.2f} s ({1000 * per_clip:.2f} ms a clip)",
            "seconds": sum(t.values()), "projection": f"training on {N_CLIPS} clips",
            "projected_s": t["train"] * N_CLIPS / n + t["save"] + t["load"], "agreement": agreement,
            "per_clip_s": per_clip, "main_job": False}  # built on demand (procedures.keyclip_model), not by `all`


def srl_rows(n_sentences: int, seed: int, split: str) -> list[dict]:
    """Synthetic EWT-like SRL training-data rows: one predicate a row, BIO tags around it."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_sentences):
        k = int(np.clip(rng.geometric(1 / 18), 4, 60))
        words = [str(w) for w in rng.choice(WORDS, size=k)]
        for p in sorted(set(rng.choice(k, size=min(2, k), replace=False).tolist())):
            tags = ["O"] * k
            tags[p] = "B-V"
            if p > 0:
                tags[0] = "B-ARG0"
                for i in range(1, p):
                    tags[i] = "I-ARG0"
            if p + 1 < k:
                tags[p + 1] = "B-ARG1"
                for i in range(p + 2, min(k, p + 4)):
                    tags[i] = "I-ARG1"
            rows.append({"split": split, "doc": f"{split}/doc{s // 20}", "sent_idx": s, "words": words,
                         "ptb_pos": ["NN"] * k, "predicate_idx": p, "predicate_lemma": words[p], "frame": f"{words[p]}.01",
                         "tags": tags})
    return rows


def check_srl(device: str, args, config: dict, root: Path) -> list[dict]:
    """train_srl (prepare, one epoch of one head, dev evaluation) and srl_parse_tagger (label sentences),
    through cookproc.srl's public functions as the rules call them."""
    from cookproc.srl.predict import label_with_tagger
    from cookproc.srl.training import TaggerTrainConfig, evaluate, prepare, train_ensemble
    from cookproc.srl.word_encoder import WordEncoder

    srl = config["srl"]
    path, weights = encoder_folder("all-MiniLM-L6-v2", root, tiny=args.tiny)
    n_train, n_dev = (60, 20) if args.tiny else (1500, 300)
    rows = srl_rows(n_train, 4, "train") + srl_rows(n_dev, 5, "dev") + srl_rows(n_dev // 2, 6, "test")
    cfg = TaggerTrainConfig(**{**srl["tagger"], "encoder": str(path), "epochs": 1, "average_checkpoints": False},
                            device=device, threads=args.threads, predicate_tags=tuple(srl["predicate_tags"]))
    clock, t = Clock(device), {}
    encoder = WordEncoder(str(path), device=device)
    prepare(rows[:5], encoder)  # warm-up: loads spaCy (a fixed cost, not scaled with the training data)
    with clock(t, "prepare"):
        prep = prepare(rows, encoder)
    with clock(t, "train"):
        tagger, _ = train_ensemble(prep, cfg, encoder.n_layers, encoder.dim, 1)
    with clock(t, "dev"):
        evaluate(tagger, prep, "dev", device=device)
    n_train_pred = sum(r["split"] == "train" for r in rows)
    n_dev_pred = sum(r["split"] == "dev" for r in rows)
    epochs, heads = int(srl["tagger"]["epochs"]), int(srl["tagger"]["ensemble"])
    # One epoch of one head here includes its dev pass inside training; the projection scales the
    # epoch by predicates, times epochs and heads, plus the final dev/test evaluation and preparing EWT.
    train_projected = (t["train"] * EWT_TRAIN_PREDICATES / n_train_pred * epochs * heads
                       + 2 * t["dev"] * EWT_DEV_PREDICATES / n_dev_pred
                       + t["prepare"] * (EWT_TRAIN_PREDICATES + 2 * EWT_DEV_PREDICATES) / len(rows))
    texts = sentences(200 if args.tiny else 3000, seed=7)
    label_with_tagger(texts[:20], tagger, encoder=encoder, device=device)  # warm-up
    with clock(t, "label"):
        parses = label_with_tagger(texts, tagger, encoder=encoder, device=device)
    n_pred = sum(len(f) for f in parses)
    agreement = None
    if not args.no_agreement:  # the same 100 sentences in one call each (batches decide the padding)
        here = label_with_tagger(texts[:100], tagger, encoder=encoder, device=device)
        cpu_frames = label_with_tagger(texts[:100], tagger, device="cpu")
        same = sum(a == b for a, b in zip(here, cpu_frames))
        agreement = {"what": "tagger parses, 100 sentences", "equal_sentences": f"{same}/100"}
    return [
        {"rule": "train_srl", "model": f"2-head BiLSTM tagger (hidden {srl['tagger']['hidden']}, projection {srl['tagger']['projection']}) on "
                                       f"all-MiniLM-L6-v2 ({weights})",
         "measured": f"prepare {len(rows)} predicates {t['prepare']:.2f} s; 1 epoch x 1 head on {n_train_pred} "
                     f"predicates {t['train']:.2f} s; dev {n_dev_pred} {t['dev']:.2f} s",
         "seconds": t["prepare"] + t["train"] + t["dev"],
         "projection": f"{epochs} epochs x {heads} heads x {EWT_TRAIN_PREDICATES} predicates + EWT preparation",
         "projected_s": train_projected, "agreement": None},
        {"rule": "srl_parse_tagger", "model": "the tagger above",
         "measured": f"{len(texts)} sentences ({n_pred} predicates) {t['label']:.2f} s",
         "seconds": t["label"], "projection": f"{N_CLIPS} sentences",
         "projected_s": t["label"] * N_CLIPS / len(texts), "agreement": agreement,
         "per_clip_s": t["label"] / len(texts)},
    ]


def check_video(device: str, args, config: dict, root: Path) -> list[dict]:
    """video_frame_features (ResNet-50) and video_tsm (TSM): the networks on preprocessed frames, loaded
    through the rules' loaders (decoding is CPU work and not timed here)."""
    import torch
    import torchvision

    from cookproc.video.resnet import load_resnet50
    from cookproc.video.tsm import TSM, epic_checkpoint, load_epic_tsm

    video = config["video"]
    torch.manual_seed(0)
    resnet_path, tsm_path = root / "resnet50.pth", root / "tsm.pth.tar"
    torch.save(torchvision.models.resnet50(weights=None).state_dict(), resnet_path)
    torch.save(epic_checkpoint(TSM(125, 352, 8)), tsm_path)
    crop = 64 if args.tiny else video["resnet"]["crop"]
    batch = 4 if args.tiny else video["resnet"]["batch_size"]
    frames = torch.randn(batch, 3, crop, crop)
    clock, t = Clock(device), {}
    resnet = load_resnet50(resnet_path).to(device)
    with torch.no_grad():
        resnet(frames.to(device))  # warm-up
        with clock(t, "resnet"):
            features = resnet(frames.to(device))
    tsm, info = load_epic_tsm(tsm_path)
    tsm = tsm.to(device).eval()
    segments = 1 if args.tiny else video["tsm"]["batch_size"]
    clips = torch.randn(segments, info.segment_count, 3, crop, crop)
    with torch.no_grad():
        tsm(clips.to(device))
        with clock(t, "tsm"):
            verbs, _ = tsm(clips.to(device))
    agreement = None
    if not args.no_agreement:
        with torch.no_grad():
            reference = load_resnet50(resnet_path)(frames[:2])
            tsm_cpu, _ = load_epic_tsm(tsm_path)
            verbs_cpu, _ = tsm_cpu.eval()(clips[:1])
        agreement = {"what": "ResNet-50 features of 2 frames; TSM top-1 verb of 1 segment",
                     "max_abs_diff": float((features[:2].cpu() - reference).abs().max()),
                     "equal_top1": bool(int(verbs[:1].argmax(1).cpu()) == int(verbs_cpu.argmax(1)))}
    return [
        {"rule": "video_frame_features", "model": "ResNet-50 (random weights, the rule's loader)",
         "measured": f"{batch} frames {crop}px {t['resnet']:.3f} s", "seconds": t["resnet"],
         "projection": f"{FRAMES_PER_VIDEO} frames a video (per job; not in the main job: local videos)",
         "projected_s": t["resnet"] * FRAMES_PER_VIDEO / batch, "agreement": agreement, "main_job": False},
        {"rule": "video_tsm", "model": f"TSM ResNet-50, {info.segment_count} frames a segment (random weights)",
         "measured": f"{segments} segments {t['tsm']:.3f} s", "seconds": t["tsm"],
         "projection": f"{TSM_SEGMENTS_PER_VIDEO} segments a video (per job; not in the main job)",
         "projected_s": t["tsm"] * TSM_SEGMENTS_PER_VIDEO / segments, "agreement": None, "main_job": False},
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", help="cpu, cuda or cuda:N")
    ap.add_argument("--tiny", action="store_true", help="small data and shallow models (CI)")
    ap.add_argument("--threads", type=int, default=min(NODE_CORES, os.cpu_count() or 1))
    ap.add_argument("--steps", type=int, default=60, help="fine-tuning steps timed per fine-tuning rule")
    ap.add_argument("--config", default=str(REPO / "config.yaml"))
    ap.add_argument("--no-agreement", action="store_true", help="skip the CPU-vs-device slices")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--random-weights", action="store_true", help="random stand-ins even where real weights exist")
    args = ap.parse_args(argv)
    global RANDOM_WEIGHTS
    RANDOM_WEIGHTS = args.random_weights
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    transformers.utils.logging.disable_progress_bar()
    from cookproc.core.config_schema import validate_config
    from cookproc.core.torch_runtime import configure_torch

    config = yaml.safe_load(Path(args.config).read_text())
    validate_config(config)
    torch = configure_torch(args.threads, args.device, deterministic=config["torch"]["deterministic"], seed=0)
    header = (f"device {args.device}" + (f" ({torch.cuda.get_device_name(args.device)})" if args.device.startswith("cuda") else "")
              + f", torch {torch.__version__}, {args.threads} CPU threads" + (", --tiny" if args.tiny else ""))
    print(header, flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gpu_check-") as tmp:
        root = Path(tmp)
        kc, sup = config["keyclips"], config["supervised"]["keyclips"]["encoder"]
        steps = [
            ("text_features", lambda: [check_text_features(args.device, args, config, root)]),
            ("keyclips_finetune", lambda: [check_finetune("keyclips_finetune", "all-MiniLM-L6-v2",
                                                          kc["neural"]["finetune"], args.device, args, config, root)]),
            ("supervised_finetune", lambda: [check_finetune("supervised_finetune", "all-mpnet-base-v2", sup["finetune"],
                                                            args.device, args, config, root)]),
            ("deploy_keyclip_selector", lambda: [check_selector(args.device, args, config, root)]),
            ("train_srl, srl_parse_tagger", lambda: check_srl(args.device, args, config, root)),
            ("video_frame_features, video_tsm", lambda: check_video(args.device, args, config, root)),
        ]
        failed = []
        for name, step in steps:
            try:
                done = step()
            except Exception as exc:  # one rule's failure (a missing spaCy model, ...) leaves the others measured
                failed.append(name)
                print(f"{name:<24} FAILED: {type(exc).__name__}: {exc}", flush=True)
                continue
            for r in done:
                results.append(r)
                print(f"{r['rule']:<24} {r['seconds']:8.2f} s measured -> {r['projected_s']:9.1f} s projected "
                      f"({r['projection']}); {r['measured']}; {r['model']}", flush=True)
    print("\nagreement, CPU vs " + args.device + " (same weights and inputs):")
    for r in results:
        if r.get("agreement"):
            a = r["agreement"]
            print(f"  {r['rule']:<24} {a['what']}: " + ", ".join(f"{k} {v}" for k, v in a.items() if k != "what"))
    torch_s = sum(r["projected_s"] for r in results if r.get("main_job", True))
    others = max(OTHER_JOBS_2CORE_S * 2 / NODE_CORES, LONGEST_OTHER_JOB_S)
    print("\nnot in the main job (`snakemake` with config.yaml): "
          + ", ".join(r["rule"] for r in results if not r.get("main_job", True)))
    print(f"main job on one node ({NODE_CORES} cores, 1 {args.device}): torch rules one after another "
          f"{torch_s:.0f} s + other jobs {others:.0f} s (their {OTHER_JOBS_2CORE_S} s at 2 cores x 2/{NODE_CORES}, "
          f"at least the longest, {LONGEST_OTHER_JOB_S} s) = {(torch_s + others) / 60:.1f} min (estimate; the "
          f"torch rules' projections scale measured slices, the others docs/benchmarks.md's 2-core times)")
    per_clip = sum(r.get("per_clip_s", 0.0) for r in results if r["rule"] in ("deploy_keyclip_selector", "srl_parse_tagger"))
    print(f"corpus: selector + tagger {1000 * per_clip:.2f} ms a clip on {args.device}; HowTo100M-sized corpus "
          f"(51.7 M clips) = {51.7e6 * per_clip / 3600:.1f} device-hours")
    if args.json:
        Path(args.json).write_text(json.dumps({"header": header, "rules": results, "main_job_s": torch_s + others,
                                               "corpus_s_per_clip": per_clip, "failed": failed},
                                              indent=1, default=str) + "\n")
    if failed:
        print(f"FAILED: {', '.join(failed)} (the projections above leave them out)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
