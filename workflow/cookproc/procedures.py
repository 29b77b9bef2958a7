"""Procedures from a user's own timed sentences: key clips and tuples, as JSON and Markdown.

The extractor interface is small on purpose, so that any system that runs on arbitrary sentences
plugs in: an :class:`Extractor` maps a list of sentences (one per clip, in time order) to one
:class:`ClipExtraction` per sentence (key flag, key score, verbs, arguments and the tuples they
come from). :func:`make_extractor` builds the configured one:

* ``srl-heur`` (default): SRL frames with the paper's heuristics (role filter, frames left
  without an argument dropped, WordNet verb lemma in the cooking lexicon), applied with
  :mod:`cookproc.srl.systems`; a clip is key iff a frame survives; verbs are the lemmas.
* ``srl``: every SRL frame is a tuple (the paper's "SRL w/o heuristics"); key iff a predicate.

Both take their frames from an SRL backend of :mod:`cookproc.srl.predict`: ``spacy`` (dependency
rules, no training, default) or ``tagger`` (the trained BIO tagger; needs its model file). The key
score is the highest mean tag probability of a kept frame's predicate for the tagger, and null for
the rule-based spaCy backend (it has no confidence).
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

from cookproc.subtitles import Clip, format_time

log = logging.getLogger(__name__)

EXTRACTORS = ("srl-heur", "srl")
SRL_BACKENDS = ("spacy", "tagger")
#: Version of the JSON layout written by :func:`procedure_document`.
FORMAT_VERSION = 1


@dataclass(frozen=True)
class ProcedureTuple:
    verb: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ClipExtraction:
    is_key: bool
    key_score: float | None
    verbs: list[str]
    args: list[str]
    tuples: list[ProcedureTuple] = field(default_factory=list)


class Extractor(Protocol):
    """Anything that labels the sentences of one video (in time order)."""

    name: str

    def extract(self, sentences: Sequence[str]) -> list[ClipExtraction]: ...


# ----------------------------------------------------------------------------- SRL extractors
FrameLabeller = Callable[[Sequence[str]], list]  # sentences -> per sentence, frames of Chunks


def frames_to_extraction(frames: Sequence, *, heuristics: bool, lexicon=frozenset(), lemma=None) -> ClipExtraction:
    """One clip's SRL frames -> key flag and tuples, through the paper's heuristics when asked.

    Uses the filters of :mod:`cookproc.srl.systems` frame by frame (rather than its flat
    ``with_heuristics``) so that each surviving frame stays one tuple.
    """
    from cookproc.srl import systems

    if heuristics:
        if lemma is None:
            from cookproc.wordnet import verb_lemma as lemma
        kept = []
        for frame in frames:
            filtered = systems.filter_roles(frame)
            if filtered is not None:
                filtered = systems.filter_lexicon(filtered, lexicon, lemma)
            if filtered is not None:
                kept.append(filtered)
    else:
        kept = [list(frame) for frame in frames]
    verbs, args = systems.verbs_and_args(kept)
    tuples = []
    for frame in kept:
        frame_verbs, frame_args = systems.verbs_and_args([frame])
        tuples += [ProcedureTuple(v, tuple(frame_args)) for v in frame_verbs]
    scores = [c.score for frame in kept for c in frame if c.role == "V" and c.score is not None]
    return ClipExtraction(bool(kept), max(scores) if scores else None, verbs, args, tuples)


@dataclass
class SRLExtractor:
    """SRL frames from a backend, with or without the paper's heuristics."""

    name: str
    labeller: FrameLabeller
    heuristics: bool
    lexicon: frozenset = frozenset()
    lowercase: bool = True

    def extract(self, sentences: Sequence[str]) -> list[ClipExtraction]:
        # The backends and the lexicon were built for the benchmark's lower-case transcripts.
        texts = [s.lower() if self.lowercase else s for s in sentences]
        t0 = time.perf_counter()
        frames = self.labeller(texts)
        log.info("%s: labelled %d sentences in %.1f s", self.name, len(texts), time.perf_counter() - t0)
        if len(frames) != len(texts):
            raise RuntimeError(f"{self.name}: the SRL backend returned {len(frames)} results for {len(texts)} sentences")
        return [frames_to_extraction(f, heuristics=self.heuristics, lexicon=self.lexicon) for f in frames]


def srl_labeller(backend: str, *, tagger_model: str | Path | None = None, device: str = "cpu") -> FrameLabeller:
    """Sentences -> frames with one of the backends of :mod:`cookproc.srl.predict`."""
    from cookproc.srl import predict

    if backend == "spacy":
        return predict.label_with_spacy
    if backend == "tagger":
        if not tagger_model:
            raise ValueError("user.srl_backend is 'tagger' but user.tagger_model is not set: give the trained "
                             "tagger's model file, or use the 'spacy' backend")
        tagger = predict.load_tagger(tagger_model)
        return lambda texts: predict.label_with_tagger(texts, tagger, device=device)
    raise ValueError(f"unknown SRL backend {backend!r}; expected one of {SRL_BACKENDS}")


def make_extractor(extractor: str, *, srl_backend: str = "spacy", lexicon: frozenset = frozenset(),
                   tagger_model: str | Path | None = None, device: str = "cpu", lowercase: bool = True,
                   labeller: FrameLabeller | None = None) -> Extractor:
    """The configured extractor (``labeller`` overrides the backend, for tests)."""
    if extractor not in EXTRACTORS:
        raise ValueError(f"unknown extractor {extractor!r}; expected one of {EXTRACTORS}")
    if extractor == "srl-heur" and not lexicon:
        raise ValueError("the srl-heur extractor needs a non-empty cooking lexicon")
    labeller = labeller or srl_labeller(srl_backend, tagger_model=tagger_model, device=device)
    return SRLExtractor(f"{extractor}-{srl_backend}", labeller, heuristics=extractor == "srl-heur",
                        lexicon=frozenset(lexicon), lowercase=lowercase)


# ----------------------------------------------------------------------------- outputs
def procedure_document(name: str, clips: Sequence[Clip], extractions: Sequence[ClipExtraction], *,
                       source: str, video: dict | None, extractor: str, settings: dict) -> dict:
    """The JSON document of one user's procedure: every clip, key or not, in time order."""
    if len(clips) != len(extractions):
        raise ValueError(f"{len(clips)} clips but {len(extractions)} extractions")
    rows = []
    for i, (clip, ext) in enumerate(zip(clips, extractions)):
        rows.append({
            "clip_idx": i, "start_s": clip.start_s, "end_s": clip.end_s,
            "start": format_time(clip.start_s), "end": format_time(clip.end_s),
            "sentence": clip.sentence, "source_lines": list(clip.lines),
            "is_key": ext.is_key, "key_score": ext.key_score,
            "verbs": list(ext.verbs), "args": list(ext.args),
            "tuples": [{"verb": t.verb, "args": list(t.args)} for t in ext.tuples],
        })
    return {
        "format_version": FORMAT_VERSION, "name": name, "source": source, "video": video,
        "extractor": extractor, "settings": settings,
        "n_clips": len(rows), "n_key_clips": sum(r["is_key"] for r in rows), "clips": rows,
    }


def to_json(document: dict) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def _md(text: str) -> str:
    """Text safe inside Markdown emphasis and tables."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("|", "\\|")


def to_markdown(document: dict) -> str:
    """A readable step list: one numbered step per key clip, with its time, tuples and sentence."""
    lines = [f"# Procedure: {document['name']}", ""]
    video = document.get("video")
    lines.append(f"From `{document['source']}`" + (f" and `{video['path']}`" if video else "")
                 + f", extracted with `{document['extractor']}`: {document['n_key_clips']} key clips of "
                   f"{document['n_clips']}.")
    lines.append("")
    step = 0
    for clip in document["clips"]:
        if not clip["is_key"]:
            continue
        step += 1
        actions = "; ".join(t["verb"] + (f" ({', '.join(t['args'])})" if t["args"] else "") for t in clip["tuples"])
        score = "" if clip["key_score"] is None else f" (key score {clip['key_score']:.2f})"
        end = "end" if clip["end_s"] is None else clip["end"]  # a transcript's last line, no video
        lines.append(f"{step}. **{clip['start']}–{end}** {_md(actions) or '(no tuple)'}{score}  ")
        lines.append(f"   *{_md(clip['sentence'])}*")
    if step == 0:
        lines.append("No key clips were found: no sentence describes a cooking step the extractor recognises.")
    lines.append("")
    return "\n".join(lines)


def video_info(path: str | Path) -> dict:
    """Duration and size of a video (PyAV), for the clip times and the JSON header."""
    import av

    from cookproc.errors import InputError

    path = Path(path)
    try:
        with av.open(str(path)) as container:
            stream = next((s for s in container.streams if s.type == "video"), None)
            if stream is None:
                raise InputError(path, "no video stream in the file")
            if container.duration is not None:
                duration = container.duration / av.time_base
            elif stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            else:
                raise InputError(path, "the video's duration is unknown")
            return {"path": str(path), "duration_s": round(float(duration), 3), "width": stream.width,
                    "height": stream.height}
    except av.error.FFmpegError as exc:
        raise InputError(path, f"cannot read the video: {exc}") from exc
