"""Procedure documents: one subtitle or transcript file's clips, key flags and tuples, as JSON
(validated against ``workflow/schemas/procedure.schema.json``) and as a Markdown step list.

Torch-free: the extractors that fill a document live in :mod:`cookproc.app.extractors`; the report and
the corpus's Markdown only read and render documents. A document is checked when built and again
by every writer (:func:`to_json`, :func:`to_markdown`), so one that does not conform is never
written.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from cookproc.app.caption_text import remove_invisible
from cookproc.app.clips import Clip
from cookproc.app.cues import format_time

#: Version of the JSON layout written by :func:`procedure_document` (2: key_probability,
#: segmentation, timed; untimed clips; 3: key_clips_by, settings.keyclip_model; 4: input, the
#: checks of the file and what they changed; 5: input.cue_order, the rolling captions' cues changed,
#: the language's english_words, settings.longest_clip_s and strict; 6: each clip's step, the verbs,
#: nouns and text a person would write, from a step model, and settings.step_model).
FORMAT_VERSION = 6
#: The JSON Schema every procedure document follows.
DOCUMENT_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "procedure.schema.json"


@dataclass(frozen=True)
class ProcedureTuple:
    verb: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """A key step as a person would write it (a step model's, :mod:`cookproc.captions.model`): its
    verbs and nouns (lemmas) and a short imperative text made of them and the clip's own words."""

    verbs: tuple[str, ...]
    nouns: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class ClipExtraction:
    is_key: bool
    key_score: float | None  # the extractor's confidence, not a probability (module doc)
    verbs: list[str]
    args: list[str]
    tuples: list[ProcedureTuple] = field(default_factory=list)
    key_probability: float | None = None  # P(key step); None for extractors without one
    step: Step | None = None  # the step model's normalised step; None without one, or for a clip not a step


def procedure_document(name: str, clips: Sequence[Clip], extractions: Sequence[ClipExtraction], *,
                       source: str, video: dict | None, extractor: str, settings: dict,
                       segmentation: str, key_clips_by: str | None = None, checks: dict | None = None) -> dict:
    """The JSON document of one procedure: every clip, key or not, in time (or file) order;
    checked against the procedure schema (:func:`validate_document`). ``segmentation`` is the one
    that cut the clips (``sentence`` or ``cue``); ``key_clips_by``: what decided the key clips
    (default: the extractor); ``checks``: what reading the file found and changed
    (:class:`cookproc.app.subtitles.SubtitleReading`), the document's ``input``."""
    if len(clips) != len(extractions):
        raise ValueError(f"{len(clips)} clips but {len(extractions)} extractions")
    rows = []
    for i, (clip, ext) in enumerate(zip(clips, extractions)):
        rows.append({
            "clip_idx": i, "start_s": clip.start_s, "end_s": clip.end_s,
            "start": format_time(clip.start_s), "end": format_time(clip.end_s),
            "sentence": clip.sentence, "source_lines": list(clip.lines),
            "is_key": ext.is_key, "key_probability": ext.key_probability, "key_score": ext.key_score,
            "verbs": list(ext.verbs), "args": list(ext.args),
            "tuples": [{"verb": t.verb, "args": list(t.args)} for t in ext.tuples],
            "step": None if ext.step is None else {"verbs": list(ext.step.verbs), "nouns": list(ext.step.nouns),
                                                   "text": ext.step.text},
        })
    document = {
        "format_version": FORMAT_VERSION, "name": name, "source": source, "video": video,
        "extractor": extractor, "key_clips_by": key_clips_by or extractor, "settings": settings,
        "segmentation": segmentation,
        "input": checks if checks is not None else NO_CHECKS,
        "timed": bool(rows) and rows[0]["start_s"] is not None,
        "n_clips": len(rows), "n_key_clips": sum(r["is_key"] for r in rows), "clips": rows,
    }
    validate_document(document)
    return document


#: The ``input`` of a document made from clips that were not read from a file here (tests, tools).
NO_CHECKS = {"rolling_captions": None, "cue_order": None, "long_sentences": None, "language": None, "warnings": []}


class DocumentError(ValueError):
    """A procedure document that does not follow workflow/schemas/procedure.schema.json."""


@functools.cache
def _document_validator():
    import jsonschema

    schema = json.loads(DOCUMENT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate_document(document: dict) -> None:
    """Raise :class:`DocumentError` (naming the document and the offending place) unless
    ``document`` follows the procedure schema and its counts and order agree with its clips."""
    name = document.get("name") if isinstance(document, dict) else None
    from jsonschema.exceptions import best_match

    errors = list(_document_validator().iter_errors(document))
    if errors:
        error = best_match(errors)
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise DocumentError(f"procedure document {name!r} does not follow {DOCUMENT_SCHEMA.name} at {where}: "
                            f"{error.message}" + (f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""))
    # What JSON Schema cannot say: the counts and the order of the clips.
    clips = document["clips"]
    problems = []
    if document["n_clips"] != len(clips):
        problems.append(f"n_clips is {document['n_clips']} but there are {len(clips)} clips")
    if document["n_key_clips"] != sum(c["is_key"] for c in clips):
        problems.append(f"n_key_clips is {document['n_key_clips']} but {sum(c['is_key'] for c in clips)} clips are key")
    for i, clip in enumerate(clips):
        if clip["clip_idx"] != i:
            problems.append(f"clips/{i} has clip_idx {clip['clip_idx']}")
        if (clip["start_s"] is None) == document["timed"]:
            problems.append(f"clips/{i}: start_s {clip['start_s']} in a document with timed={document['timed']}")
        elif clip["start_s"] is not None and i and clips[i - 1]["start_s"] > clip["start_s"]:
            problems.append(f"clips/{i} starts before clips/{i - 1}")
    if problems:
        raise DocumentError(f"procedure document {name!r}: " + "; ".join(problems[:3]))


def to_json(document: dict) -> str:
    """The document as JSON text, once it passed :func:`validate_document`."""
    validate_document(document)
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


# Characters that Markdown (CommonMark and GitHub's) or HTML could read as syntax: emphasis, code,
# links and images, raw HTML and entities, headings, tables, strikethrough. Backslash-escaped, each
# renders as itself (CommonMark: any ASCII punctuation may be escaped).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&#|~])")
# Line breaks (and other control characters) would let user text start a block of its own (an HTML
# block, a heading): they become spaces.
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def md_escape(text) -> str:
    """User-derived text safe anywhere inline in Markdown and in the HTML rendered from it: on one
    line, every character with a Markdown or HTML meaning backslash-escaped, and no invisible or
    bidi control character (a file named with a right-to-left override would display reversed)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", remove_invisible(str(text))))


def to_markdown(document: dict) -> str:
    """A readable step list: one numbered step per key clip, in order, with its time (its line in
    an untimed transcript), tuples and sentence; once the document passed :func:`validate_document`."""
    validate_document(document)
    return steps_markdown(document["name"], document["source"], document["extractor"], document["clips"],
                          n_clips=document["n_clips"], video=document["video"],
                          warnings=document["input"]["warnings"])


def steps_markdown(name: str, source: str, extractor: str, clips: Sequence[dict], *, n_clips: int,
                   video: dict | None = None, warnings: Sequence[str] = ()) -> str:
    """The Markdown of :func:`to_markdown` from a document's parts (the corpus renders its rows).
    Every string from the user's files (names, paths, sentences, verbs and arguments) and from the
    models is escaped (:func:`md_escape`)."""
    key_clips = [clip for clip in clips if clip["is_key"]]
    lines = [f"# Procedure: {md_escape(name)}", ""]
    lines.append(f"From {md_escape(source)}" + (f" and {md_escape(video['path'])}" if video else "")
                 + f", extracted with {md_escape(extractor)}: {len(key_clips)} key clips of {n_clips}.")
    lines.append("")
    for warning in warnings:
        lines += [f"> Note: {md_escape(warning)}", ""]
    for step, clip in enumerate(key_clips, 1):
        actions = "; ".join(md_escape(t["verb"]) + (f" ({', '.join(md_escape(a) for a in t['args'])})" if t["args"]
                                                     else "") for t in clip["tuples"])
        if clip["key_probability"] is not None:
            score = f" (key probability {clip['key_probability']:.2f})"
        elif clip["key_score"] is not None:
            score = f" (key score {clip['key_score']:.2f})"
        else:
            score = ""
        if clip["start_s"] is None:  # an untimed transcript: its line stands for the time
            when = f"line {clip['source_lines'][0]}"
        else:
            end = "end" if clip["end_s"] is None else clip["end"]  # a transcript's last line, no video
            when = f"{clip['start']}–{end}"
        said = f"{actions or '(no tuple)'}{score}"
        if clip.get("step"):  # a step model's text first, what the clip says below it
            lines.append(f"{step}. **{when}** {md_escape(clip['step']['text'])}  ")
            lines.append(f"   {said}  ")
        else:
            lines.append(f"{step}. **{when}** {said}  ")
        lines.append(f"   *{md_escape(clip['sentence'])}*")
    if not key_clips:
        lines.append("No key clips were found: no sentence describes a cooking step the extractor recognises.")
    lines.append("")
    return "\n".join(lines)


def write_procedure(document: dict, path: str | Path, fmt: str) -> None:
    """Write ``document`` as ``fmt`` (``json`` or ``md``) atomically, once it passed validation."""
    from cookproc.core.parquet_io import atomic_write_text

    text = render(document, fmt)
    atomic_write_text(path, text)


def render(document: dict, fmt: str) -> str:
    if fmt == "json":
        return to_json(document)
    if fmt == "md":
        return to_markdown(document)
    raise ValueError(f"unknown format {fmt!r}; expected json or md")
