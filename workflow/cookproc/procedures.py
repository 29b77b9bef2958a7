"""Procedures from a user's own timed sentences: key clips and tuples, as JSON and Markdown.

The extractor interface is small on purpose, so that any system that runs on arbitrary sentences
plugs in: an :class:`Extractor` maps a list of sentences (one per clip, in time order) to one
:class:`ClipExtraction` per sentence (key flag, key score, verbs, arguments and the tuples they
come from). :func:`make_extractor` builds the configured one:

* ``srl-heur`` (default): SRL frames with the paper's heuristics (role filter, frames left
  without an argument dropped, WordNet verb lemma in the cooking lexicon), applied with
  :mod:`cookproc.srl.baselines`; a clip is key iff a frame survives; verbs are the lemmas.
* ``srl``: every SRL frame is a tuple (the paper's "SRL w/o heuristics"); key iff a predicate.

Both take their frames from an SRL backend of :mod:`cookproc.srl.predict`: ``spacy`` (dependency
rules, no training, default) or ``tagger`` (the trained BIO tagger; needs its model file). A
built-in extractor is named ``<extractor>-<backend>`` (:data:`MODELS`, the CLI's ``--model``).

Two numbers per clip, kept apart so that neither claims more than it is:

* ``key_probability``: the extractor's probability that the clip is a key step. The SRL extractors
  decide by rule (``is_key``) and have none: it is null for them. A trained key-clip selector
  plugs in by filling it (and ``is_key`` from its threshold).
* ``key_score``: the extractor's own confidence in its decision, not a probability of being key:
  for the tagger the highest mean tag probability of a kept frame's predicate; null for the
  rule-based spaCy backend (it has no confidence).

A procedure document (:func:`procedure_document`) follows ``workflow/schemas/procedure.schema.json``;
it is checked when built and again by every writer (:func:`to_json`, :func:`to_markdown`), so a
document that does not conform is never written.
"""
from __future__ import annotations

import functools
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

from cookproc.subtitles import Clip, format_time, read_clips_and_segmentation

log = logging.getLogger(__name__)

EXTRACTORS = ("srl-heur", "srl")
SRL_BACKENDS = ("spacy", "tagger")
#: Built-in extractors by name (``<extractor>-<backend>``), as documents and ``--model`` name them.
MODELS = tuple(f"{e}-{b}" for e in EXTRACTORS for b in SRL_BACKENDS)
#: Version of the JSON layout written by :func:`procedure_document` (2: key_probability,
#: segmentation, timed; untimed clips).
FORMAT_VERSION = 2
#: The JSON Schema every procedure document follows.
DOCUMENT_SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "procedure.schema.json"
#: Sentences handed to the SRL backend at once: its batch, and the progress bar's step.
CHUNK_SENTENCES = 256


@dataclass(frozen=True)
class ProcedureTuple:
    verb: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class ClipExtraction:
    is_key: bool
    key_score: float | None  # the extractor's confidence, not a probability (module doc)
    verbs: list[str]
    args: list[str]
    tuples: list[ProcedureTuple] = field(default_factory=list)
    key_probability: float | None = None  # P(key step); None for extractors without one


Progress = Callable[[int, int], None]  # called with (sentences just labelled, sentences in all)


class ProgressBar:
    """A tqdm bar over the sentences an extractor labels (a :data:`Progress`), on stderr: the
    terminal for the ``cookproc`` command, the job's log in a rule. ``enabled=None``: only on a
    terminal. Call :meth:`close` at the end."""

    def __init__(self, desc: str, *, enabled: bool | None = None, mininterval: float = 0.5):
        self.desc, self.enabled, self.mininterval, self.bar = desc, enabled, mininterval, None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.desc, unit="sentence", mininterval=self.mininterval,
                            disable=None if self.enabled is None else not self.enabled)
        self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class LoggedProgress:
    """A :data:`Progress` for a rule's log: a line with an ETA at least every 30 seconds
    (:class:`cookproc.core.logs.Progress`) rather than a terminal's bar."""

    def __init__(self, what: str):
        self.what, self.progress = what, None

    def __call__(self, done: int, total: int) -> None:
        if self.progress is None:
            from cookproc.core.logs import Progress as LogProgress

            self.progress = LogProgress(self.what, total, unit="sentences")
        self.progress.step(done)


class Extractor(Protocol):
    """Anything that labels the sentences of one video (in time order)."""

    name: str

    def extract(self, sentences: Sequence[str], progress: Progress | None = None) -> list[ClipExtraction]: ...


# ----------------------------------------------------------------------------- SRL extractors
FrameLabeller = Callable[[Sequence[str]], list]  # sentences -> per sentence, frames of Chunks


def frames_to_extraction(frames: Sequence, *, heuristics: bool, lexicon=frozenset(), lemma=None) -> ClipExtraction:
    """One clip's SRL frames -> key flag and tuples, through the paper's heuristics when asked.

    Uses the filters of :mod:`cookproc.srl.baselines` frame by frame (rather than its flat
    ``with_heuristics``) so that each surviving frame stays one tuple.
    """
    from cookproc.srl import baselines

    if heuristics:
        if lemma is None:
            from cookproc.wordnet import verb_lemma as lemma
        kept = []
        for frame in frames:
            filtered = baselines.filter_roles(frame)
            if filtered is not None:
                filtered = baselines.filter_lexicon(filtered, lexicon, lemma)
            if filtered is not None:
                kept.append(filtered)
    else:
        kept = [list(frame) for frame in frames]
    verbs, args = baselines.verbs_and_args(kept)
    tuples = []
    for frame in kept:
        frame_verbs, frame_args = baselines.verbs_and_args([frame])
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

    def extract(self, sentences: Sequence[str], progress: Progress | None = None) -> list[ClipExtraction]:
        # The backends and the lexicon were built for the benchmark's lower-case transcripts.
        texts = [s.lower() if self.lowercase else s for s in sentences]
        t0 = time.perf_counter()
        out: list[ClipExtraction] = []
        # In chunks, so that long inputs report progress; a sentence's frames do not depend on the
        # other sentences of its batch (tests/test_corpus.py: 1 shard and 3 shards agree).
        for start in range(0, len(texts), CHUNK_SENTENCES):
            chunk = texts[start:start + CHUNK_SENTENCES]
            labelled = self.labeller(chunk)
            if len(labelled) != len(chunk):
                raise RuntimeError(f"{self.name}: the SRL backend returned {len(labelled)} results for "
                                   f"{len(chunk)} sentences")
            out += [frames_to_extraction(f, heuristics=self.heuristics, lexicon=self.lexicon) for f in labelled]
            if progress is not None:
                progress(len(chunk), len(texts))
        log.info("%s: labelled %d sentences in %.1f s", self.name, len(texts), time.perf_counter() - t0)
        return out


def srl_labeller(backend: str, *, tagger_model: str | Path | None = None, device: str = "cpu") -> FrameLabeller:
    """Sentences -> frames with one of the backends of :mod:`cookproc.srl.predict`."""
    if backend == "spacy":
        def label_with_spacy(texts):
            # Imported on first use (torch, spaCy): a bad input file fails before these load.
            from cookproc.srl import predict

            return predict.label_with_spacy(texts)

        return label_with_spacy
    if backend == "tagger":
        if not tagger_model:
            raise ValueError("user.srl_backend is 'tagger' but user.tagger_model is not set: give the trained "
                             "tagger's model file, or use the 'spacy' backend")
        from cookproc.srl import predict

        tagger = predict.load_tagger(tagger_model)
        return lambda texts: predict.label_with_tagger(texts, tagger, device=device)
    raise ValueError(f"unknown SRL backend {backend!r}; expected one of {SRL_BACKENDS}")


def make_extractor(extractor: str, *, srl_backend: str = "spacy", lexicon: frozenset = frozenset(),
                   tagger_model: str | Path | None = None, device: str = "cpu", lowercase: bool = True,
                   labeller: FrameLabeller | None = None) -> Extractor:
    """The configured extractor (``labeller`` overrides the backend, for tests)."""
    if extractor not in EXTRACTORS:
        raise ValueError(f"unknown extractor {extractor!r}; expected one of {EXTRACTORS}")
    if srl_backend not in SRL_BACKENDS:
        raise ValueError(f"unknown SRL backend {srl_backend!r}; expected one of {SRL_BACKENDS}")
    if extractor == "srl-heur" and not lexicon:
        raise ValueError("the srl-heur extractor needs a non-empty cooking lexicon")
    labeller = labeller or srl_labeller(srl_backend, tagger_model=tagger_model, device=device)
    return SRLExtractor(f"{extractor}-{srl_backend}", labeller, heuristics=extractor == "srl-heur",
                        lexicon=frozenset(lexicon), lowercase=lowercase)


def parse_model(model: str) -> tuple[str, str]:
    """``(extractor, srl_backend)`` of a built-in extractor's name (:data:`MODELS`). Trained key-clip
    selectors and extractors (results/models/...) are not deployed yet: a path is refused, with
    what is accepted today, rather than run by something else in its place."""
    if model in MODELS:
        extractor, _, backend = model.rpartition("-")
        return extractor, backend
    if Path(model).exists() or "/" in model or model.endswith((".pt", ".json", ".pkl", ".joblib")):
        raise ValueError(f"--model {model}: loading a trained model is not supported yet (no trained key-clip "
                         f"selector or extractor is deployed); use a built-in extractor: {', '.join(MODELS)}")
    raise ValueError(f"--model {model!r}: unknown model; expected one of {', '.join(MODELS)}")


# ----------------------------------------------------------------------------- reading and extracting
@dataclass(frozen=True)
class ProcedureSettings:
    """How a file becomes a procedure: the keys of the config's ``user`` section
    (workflow/schemas/config/user.schema.yaml), shared by rule user_procedures, the corpus rules
    and the ``cookproc`` command, so that all three give the same document for the same file."""

    segmentation: str
    max_clip_s: float
    drop_sound_tags: bool
    extractor: str
    srl_backend: str
    tagger_model: str | None
    device: str
    lowercase: bool

    @classmethod
    def from_config(cls, section: dict) -> "ProcedureSettings":
        """From the ``user`` section (or a rule's params of the same names); other keys ignored."""
        return cls(**{name: section[name] for name in cls.__dataclass_fields__})


def read_cooking_lexicon(path: str | Path) -> frozenset[str]:
    """The cooking lexicon of the srl-heur extractor (upstream's reading, blank lines dropped)."""
    from cookproc.core.errors import InputError
    from cookproc.srl.baselines import read_lexicon_lines

    path = Path(path)
    if not path.is_file():
        raise InputError(path, "cooking lexicon not found (one word a line; the upstream mirror's "
                               "youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst by default)")
    return read_lexicon_lines(path) - {""}


def load_extractor(settings: ProcedureSettings, lexicon: frozenset[str]) -> Extractor:
    return make_extractor(settings.extractor, srl_backend=settings.srl_backend, lexicon=lexicon,
                          tagger_model=settings.tagger_model, device=settings.device, lowercase=settings.lowercase)


def procedure_documents(sources: Sequence[str | Path], settings: ProcedureSettings, *, lexicon: str | Path,
                        names: Sequence[str] | None = None, videos: Sequence[dict | None] | None = None,
                        progress: Progress | None = None, extractor: Extractor | None = None) -> list[dict]:
    """One procedure document per subtitle / transcript file; the sentences of all files are
    labelled in one pass (a corpus shard labels thousands of short files). Every file is read
    before the lexicon and the extractor load, so a bad file fails at once. ``extractor``
    replaces the configured one (tests)."""
    names = [Path(s).stem for s in sources] if names is None else list(names)
    videos = [None] * len(sources) if videos is None else list(videos)
    read = []
    for source, video in zip(sources, videos):
        clips, used = read_clips_and_segmentation(
            source, segmentation=settings.segmentation, max_clip_s=settings.max_clip_s,
            video_end_s=video["duration_s"] if video else None, drop_sound_tags=settings.drop_sound_tags)
        read.append((clips, used))
    words = read_cooking_lexicon(lexicon)
    extractor = extractor or load_extractor(settings, words)
    extractions = extractor.extract([c.sentence for clips, _ in read for c in clips], progress=progress)
    record = {"segmentation": settings.segmentation, "max_clip_s": settings.max_clip_s,
              "drop_sound_tags": settings.drop_sound_tags, "srl_backend": settings.srl_backend,
              "tagger_model": settings.tagger_model, "lowercase": settings.lowercase, "lexicon": str(lexicon),
              "lexicon_size": len(words)}
    documents, done = [], 0
    for name, source, video, (clips, used) in zip(names, sources, videos, read):
        documents.append(procedure_document(name, clips, extractions[done:done + len(clips)], source=str(source),
                                            video=video, extractor=extractor.name, settings=record,
                                            segmentation=used))
        done += len(clips)
    return documents


def extract_procedure(source: str | Path, settings: ProcedureSettings, *, lexicon: str | Path,
                      name: str | None = None, video: str | Path | None = None,
                      progress: Progress | None = None) -> dict:
    """The procedure document of one subtitle / transcript file (and its optional video): what
    rule user_procedures and ``cookproc extract`` both run."""
    video_meta = video_info(video) if video else None
    if video_meta:
        log.info("video %s: %.1f s, %dx%d", video_meta["path"], video_meta["duration_s"], video_meta["width"],
                 video_meta["height"])
    [document] = procedure_documents([source], settings, lexicon=lexicon, names=[name or Path(source).stem],
                                     videos=[video_meta], progress=progress)
    log.info("%s: %d clips (%s segmentation), %d key clips by %s", source, document["n_clips"],
             document["segmentation"], document["n_key_clips"], document["extractor"])
    return document


# ----------------------------------------------------------------------------- outputs
def procedure_document(name: str, clips: Sequence[Clip], extractions: Sequence[ClipExtraction], *,
                       source: str, video: dict | None, extractor: str, settings: dict,
                       segmentation: str) -> dict:
    """The JSON document of one procedure: every clip, key or not, in time (or file) order;
    checked against the procedure schema (:func:`validate_document`). ``segmentation`` is the one
    that cut the clips (``sentence`` or ``cue``)."""
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
        })
    document = {
        "format_version": FORMAT_VERSION, "name": name, "source": source, "video": video,
        "extractor": extractor, "settings": settings, "segmentation": segmentation,
        "timed": bool(rows) and rows[0]["start_s"] is not None,
        "n_clips": len(rows), "n_key_clips": sum(r["is_key"] for r in rows), "clips": rows,
    }
    validate_document(document)
    return document


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


def _md(text: str) -> str:
    """Text safe inside Markdown emphasis and tables."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("|", "\\|")


def to_markdown(document: dict) -> str:
    """A readable step list: one numbered step per key clip, in order, with its time (its line in
    an untimed transcript), tuples and sentence; once the document passed :func:`validate_document`."""
    validate_document(document)
    return steps_markdown(document["name"], document["source"], document["extractor"], document["clips"],
                          n_clips=document["n_clips"], video=document["video"])


def steps_markdown(name: str, source: str, extractor: str, clips: Sequence[dict], *, n_clips: int,
                   video: dict | None = None) -> str:
    """The Markdown of :func:`to_markdown` from a document's parts (the corpus renders its rows)."""
    key_clips = [clip for clip in clips if clip["is_key"]]
    lines = [f"# Procedure: {name}", ""]
    lines.append(f"From `{source}`" + (f" and `{video['path']}`" if video else "")
                 + f", extracted with `{extractor}`: {len(key_clips)} key clips of {n_clips}.")
    lines.append("")
    for step, clip in enumerate(key_clips, 1):
        actions = "; ".join(t["verb"] + (f" ({', '.join(t['args'])})" if t["args"] else "") for t in clip["tuples"])
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
        lines.append(f"{step}. **{when}** {_md(actions) or '(no tuple)'}{score}  ")
        lines.append(f"   *{_md(clip['sentence'])}*")
    if not key_clips:
        lines.append("No key clips were found: no sentence describes a cooking step the extractor recognises.")
    lines.append("")
    return "\n".join(lines)


def write_procedure(document: dict, path: str | Path, fmt: str) -> None:
    """Write ``document`` as ``fmt`` (``json`` or ``md``) atomically, once it passed validation."""
    from cookproc.core.schemas import atomic_write_text

    text = render(document, fmt)
    atomic_write_text(path, text)


def render(document: dict, fmt: str) -> str:
    if fmt == "json":
        return to_json(document)
    if fmt == "md":
        return to_markdown(document)
    raise ValueError(f"unknown format {fmt!r}; expected json or md")


def video_info(path: str | Path) -> dict:
    """Duration and size of a video (PyAV), for the clip times and the JSON header."""
    import av

    from cookproc.core.errors import InputError

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
