"""The deployed tuple extractor: what storing its once-fitted choices saves per call (issue 20).

    .venv/bin/python bench/tuple_extractor_fits.py [--tuples results/models/tuples-supervised-text] \
        [--files examples/pancakes.srt ...] [--transcripts 3]

Scores the same new clips twice in one process, after the SRL tagger and the sentence encoder have
labelled them once: as a run does (``TupleExtractor.extract``: only each field's chosen boosting
model and the verb classifier for the new clips are fitted), and fitting everything again with
nested selection (the cross-validation fold the artifact stands for). Prints both times, their
ratio, and whether the tuples are identical (they must be). The files are the pancake example and
the first ``--transcripts`` upstream transcripts by name.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tuples", type=Path, default=REPO / "results/models/tuples-supervised-text")
    parser.add_argument("--files", type=Path, nargs="*", default=[REPO / "examples/pancakes.srt"])
    parser.add_argument("--transcripts", type=int, default=3, help="upstream transcripts added to --files")
    args = parser.parse_args()
    from cookproc.app.models import load_tuple_model
    from cookproc.app.subtitles import read_clips_and_segmentation

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    upstream = (REPO / config["upstream"]["dir"]).resolve()
    files = list(args.files) + sorted((upstream / "youcook2" / "transcript").glob("*.txt"))[:args.transcripts]
    clips = [read_clips_and_segmentation(f, segmentation="auto")[0] for f in files]
    sentences = [c.sentence for cs in clips for c in cs]
    videos = [k for k, cs in enumerate(clips) for _ in cs]

    extractor = load_tuple_model(args.tuples)
    model, stored_extract, seen = extractor.model, extractor.model.extract, {}

    def timed_extract(*call, **kwargs):  # the stored path, with the inputs the labeller and encoder gave it
        seen["call"], seen["kwargs"] = call, kwargs
        start = time.perf_counter()
        out = stored_extract(*call, **kwargs)
        seen["seconds"] = time.perf_counter() - start
        return out

    model.extract = timed_extract
    stored = extractor.extract(sentences, videos=videos)
    start = time.perf_counter()
    everything, _ = model._score(*seen["call"], **seen["kwargs"])
    full_seconds = time.perf_counter() - start
    first = len(model.training)
    identical = ([c.verbs for c in stored] == everything["verbs"][first:]
                 and [c.args for c in stored] == everything["arguments"][first:])
    print(f"{args.tuples.name}: {len(sentences)} clips of {len(files)} files; stored choices {seen['seconds']:.1f} s, "
          f"every fit again {full_seconds:.1f} s: {full_seconds / seen['seconds']:.2f}x; identical tuples: {identical}")
    if not identical:
        sys.exit("the stored path and fitting everything again disagree")


if __name__ == "__main__":
    main()
