"""Benchmark and device check of the visual models: ResNet-50 frame features and TSM on one video,
on the CPU and on a CUDA device, with random weights saved and loaded through the real loaders.

Reports, measured in this one run: agreement of CUDA with CPU (max |diff| of the 2048-d features,
top-1 verb/noun agreement of TSM), whether two CUDA runs give identical bytes, and throughput
(frames/s; decoding alone, and decoding + network) with the ratio CUDA/CPU.

    .venv/bin/python bench/video_device.py --video data/videos/X.mp4 [--device cuda] [--cpu-clips 4]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

from cookproc.video.epic import EpicClasses  # noqa: E402
from cookproc.video.frames import open_video, verify_decodable  # noqa: E402
from cookproc.video.imaging import resolve_device  # noqa: E402
from cookproc.video.resnet import EMBEDDING_DIM, clip_frame_samples, extract_frame_features, load_resnet50  # noqa: E402
from cookproc.video.tsm import TSM, epic_checkpoint, load_epic_tsm, predict_video  # noqa: E402


def embeddings(table) -> np.ndarray:
    return np.asarray(table.column("embedding").combine_chunks().flatten()).reshape(-1, EMBEDDING_DIM)


def timed(fn):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--video", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--clip-s", type=float, default=3.0, help="clip length (s) of the synthetic clips")
    parser.add_argument("--cpu-clips", type=int, default=4, help="clips also run on the CPU (reference)")
    parser.add_argument("--cpu-segments", type=int, default=2, help="TSM segments also run on the CPU")
    parser.add_argument("--out", default=None, help="write the summary JSON here")
    args = parser.parse_args()

    torch.set_num_threads(os.cpu_count() or 1)
    device = resolve_device(args.device)
    summary: dict = {"device": str(device), "torch": torch.__version__, "cpu_threads": torch.get_num_threads()}
    if device.type == "cuda":
        summary["gpu"] = torch.cuda.get_device_name(device)
        summary["cudnn_tf32"] = torch.backends.cudnn.allow_tf32

    tmp = Path(tempfile.mkdtemp())
    torch.manual_seed(0)
    torch.save(torchvision.models.resnet50(weights=None).state_dict(), tmp / "resnet50.pth")
    torch.manual_seed(0)
    torch.save(epic_checkpoint(TSM(125, 352, 8)), tmp / "tsm.pth.tar")

    video = open_video(args.video)
    verify_decodable(video)
    summary["video"] = {"frames": video.n_frames, "fps": video.fps, "seconds": round(video.duration_s, 2)}
    n_clips = int(video.duration_s // args.clip_s)
    clips = [(i, i * args.clip_s, (i + 1) * args.clip_s) for i in range(n_clips)]
    common = dict(frames_per_clip=10, resize=256, crop=224)

    # ResNet-50: decoding alone, then the whole extraction on the device (twice) and on the CPU.
    indices = [f for _, f in clip_frame_samples(video, clips, 10)]
    _, decode_s = timed(lambda: [video.read(indices[i:i + 64]) for i in range(0, len(indices), 64)])
    model = load_resnet50(tmp / "resnet50.pth").to(device)
    extract_frame_features(video, "v", clips[:1], model, batch_size=64, device=device, **common)  # warm-up
    dev_table, dev_s = timed(lambda: extract_frame_features(video, "v", clips, model, batch_size=64, device=device,
                                                            **common))
    again = extract_frame_features(video, "v", clips, model, batch_size=64, device=device, **common)
    cpu_model = load_resnet50(tmp / "resnet50.pth")
    cpu_clips = clips[:args.cpu_clips]
    cpu_table, cpu_s = timed(lambda: extract_frame_features(video, "v", cpu_clips, cpu_model, batch_size=64,
                                                            device=torch.device("cpu"), **common))
    dev_emb, cpu_emb = embeddings(dev_table)[:len(cpu_clips) * 10], embeddings(cpu_table)
    cos = (dev_emb * cpu_emb).sum(1) / (np.linalg.norm(dev_emb, axis=1) * np.linalg.norm(cpu_emb, axis=1))
    summary["resnet"] = {
        "frames": len(indices), "decode_fps": round(len(indices) / decode_s, 1),
        "device_fps": round(len(indices) / dev_s, 1), "cpu_fps": round(len(cpu_clips) * 10 / cpu_s, 1),
        "speedup_device_over_cpu": round((len(indices) / dev_s) / (len(cpu_clips) * 10 / cpu_s), 2),
        "max_abs_diff_vs_cpu": float(np.abs(dev_emb - cpu_emb).max()),
        "max_abs_feature": float(np.abs(cpu_emb).max()),
        "min_cosine_vs_cpu": float(cos.min()),
        "device_runs_identical": bool(again.equals(dev_table)),
    }

    # TSM: every 5-second segment on the device (twice), the first few on the CPU.
    verbs = EpicClasses("verb", tuple(f"v{i}" for i in range(125)), {f"v{i}": (f"v{i}",) for i in range(125)})
    nouns = EpicClasses("noun", tuple(f"n{i}" for i in range(352)), {f"n{i}": (f"n{i}",) for i in range(352)})
    tsm, _ = load_epic_tsm(tmp / "tsm.pth.tar", expected_segments=8)
    kwargs = dict(segment_s=5.0, top_k=5, resize=256, crop=224, batch_size=8)
    dev_tsm, tsm_s = timed(lambda: predict_video(video, "v", tsm.to(device), verbs, nouns, device=device, **kwargs))
    tsm_again = predict_video(video, "v", tsm, verbs, nouns, device=device, **kwargs)
    short = open_video(args.video)
    cpu_model_tsm, _ = load_epic_tsm(tmp / "tsm.pth.tar")
    cut = args.cpu_segments * 5.0
    short.duration_s = cut  # only the first segments on the CPU (the reference is slow there)
    short.n_frames = min(short.n_frames, int(round(cut * short.fps)))
    cpu_tsm, cpu_tsm_s = timed(lambda: predict_video(short, "v", cpu_model_tsm, verbs, nouns,
                                                      device=torch.device("cpu"), **kwargs))
    dev_rows = [r for r in dev_tsm.to_pylist() if r["segment_idx"] <= args.cpu_segments and r["rank"] == 1]
    cpu_rows = [r for r in cpu_tsm.to_pylist() if r["rank"] == 1]
    n_segments = max(dev_tsm.column("segment_idx").to_pylist())
    summary["tsm"] = {
        "segments": n_segments, "device_segments_per_s": round(n_segments / tsm_s, 2),
        "cpu_segments_per_s": round(len(cpu_rows) / cpu_tsm_s, 2),
        "speedup_device_over_cpu": round((n_segments / tsm_s) / (len(cpu_rows) / cpu_tsm_s), 2),
        "top1_verb_agree": sum(a["verb_class"] == b["verb_class"] for a, b in zip(dev_rows, cpu_rows)),
        "top1_noun_agree": sum(a["noun_class"] == b["noun_class"] for a, b in zip(dev_rows, cpu_rows)),
        "compared": len(cpu_rows),
        "max_score_diff": max(abs(a["verb_score"] - b["verb_score"]) for a, b in zip(dev_rows, cpu_rows)),
        "device_runs_identical": bool(tsm_again.equals(dev_tsm)),
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
