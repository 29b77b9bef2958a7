"""Per-clip inference of the default user path (issue 45): the step model beside the trained tuple
extractor, against the path it replaced (the benchmark-trained key-clip selector beside the same
tuple extractor), on the same transcripts in one run.

    .venv/bin/python bench/default_path_speed.py [--videos 60] [--threads 2] [--repeat 2]

Reads the built models (results/models/steps-captions-benchmark, keyclips-neural-text,
tuples-supervised-text: the main job builds them) and the first ``--videos`` transcripts of the
upstream mirror's people's test set. Each path extracts every clip of all videos in one call, as a
corpus shard does, ``--repeat`` times alternately (the models are loaded once, before timing);
prints each path's best time, seconds per 1,000 clips, and the ratio new / old.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", type=int, default=60)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--mirror", type=Path, default=REPO / "../shared/data/cooking-procedural-extraction")
    args = parser.parse_args()

    from cookproc.app.extractors import SelectedKeyClips
    from cookproc.app.models import load_selector, load_step_model, load_tuple_model
    from cookproc.app.steps import StepsFromCaptions
    from cookproc.core.threads import limit_threads
    from cookproc.data.captions import people_split

    limit_threads(args.threads)
    folder = args.mirror / "youcook2/transcript"
    videos = [p for p in sorted(folder.glob("*.txt")) if people_split(p.stem, in_benchmark=False) == "test"]
    sentences, ids = [], []
    for path in videos[:args.videos]:
        lines = path.read_text(encoding="utf-8").splitlines()
        sentences += lines
        ids += [path.stem] * len(lines)
    models = REPO / "results/models"
    tuples = load_tuple_model(models / "tuples-supervised-text")
    paths = {"old: selector + tuple extractor": SelectedKeyClips(load_selector(models / "keyclips-neural-text"), tuples),
             "new: step model + tuple extractor": StepsFromCaptions(load_step_model(models / "steps-captions-benchmark"),
                                                                     tuples)}
    best = {name: float("inf") for name in paths}
    for _ in range(args.repeat):
        for name, extractor in paths.items():
            start = time.perf_counter()
            extractor.extract(sentences, videos=ids)
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"{len(set(ids))} videos, {len(sentences)} clips, {args.threads} threads, best of {args.repeat}")
    print("| path | seconds | s per 1,000 clips |\n|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.1f} | {1000 * seconds / len(sentences):.2f} |")
    old, new = best.values()
    print(f"ratio new / old: {new / old:.2f}")


if __name__ == "__main__":
    main()
