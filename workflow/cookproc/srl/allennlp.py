"""Importer for AllenNLP SRL predictor output, so parses made elsewhere plug into the workflow.

Input: JSON Lines, one predictor output per benchmark sentence,
``{"verbs": [{"verb": ..., "tags": [...]}, ...], "words": [...]}`` (what ``allennlp predict``
writes for ``{"sentence": ...}`` inputs). A line may name its clip with ``video_id`` and
``clip_idx``; otherwise lines are taken in the benchmark's row order (reviewed_0812.csv), and
their number must equal the number of clips. Tags become chunks exactly as upstream's
``bio_to_frames`` did (stray ``I-`` tags included), so the heuristics see upstream's parses.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from cookproc.core.errors import InputError
from cookproc.srl.bio import allennlp_chunks
from cookproc.srl.parses import Chunk


def parse_of_output(output: dict, *, path, line: int) -> list[list[Chunk]]:
    if not isinstance(output, dict) or "verbs" not in output or "words" not in output:
        raise InputError(path, 'expected an object with "verbs" and "words"', line=line)
    words = output["words"]
    parses = []
    for k, verb in enumerate(output["verbs"]):
        tags = verb.get("tags") if isinstance(verb, dict) else None
        if not isinstance(tags, list) or len(tags) != len(words):
            raise InputError(path, f'verb {k}: expected "tags" with one tag per word ({len(words)})', line=line)
        chunks = [Chunk(role, " ".join(words[s:e]), s, e) for role, s, e in allennlp_chunks(tags, words)]
        if not any(c.role == "V" for c in chunks):
            # Upstream kept such frames; they can never pass the heuristics and have no verb to output.
            continue
        parses.append(chunks)
    return parses


def read_allennlp(path: str | Path, clips: Sequence[tuple[str, int]]) -> dict[tuple[str, int], list[list[Chunk]]]:
    """``{(video_id, clip_idx): parses}`` from a predictor-output JSONL file."""
    path = Path(path)
    known = set(clips)
    out: dict[tuple[str, int], list[list[Chunk]]] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    positional = None
    for n, line in records:
        try:
            output = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON: {exc}", line=n) from exc
        named = isinstance(output, dict) and "video_id" in output and "clip_idx" in output
        if positional is None:
            positional = not named
            if positional and len(records) != len(clips):
                raise InputError(path, f"{len(records)} lines without video_id/clip_idx, but the benchmark has "
                                       f"{len(clips)} clips: give one line per clip in row order, or name each clip")
        if named == positional:
            raise InputError(path, "either every line names its clip (video_id, clip_idx) or none does", line=n)
        key = (str(output["video_id"]), int(output["clip_idx"])) if named else clips[len(out)]
        if key not in known:
            raise InputError(path, f"clip {key} is not a benchmark clip", line=n)
        if key in out:
            raise InputError(path, f"clip {key} given twice", line=n)
        out[key] = parse_of_output(output, path=path, line=n)
    return out
