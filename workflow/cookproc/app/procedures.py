"""Procedures from a user's own timed sentences: key clips and tuples, as JSON and Markdown.

The extractor interface is small on purpose, so that any system that runs on arbitrary sentences
plugs in: an :class:`Extractor` maps a list of sentences (one per clip, in time order) to one
:class:`ClipExtraction` per sentence (key flag, key score, verbs, arguments and the tuples they
come from). :func:`make_extractor` builds the configured one:

* ``srl-heur`` (default): SRL frames with the paper's heuristics (role filter, frames left
  without an argument dropped, WordNet verb lemma in the cooking lexicon), applied with
  :mod:`cookproc.srl.baselines`; a clip is key iff a frame survives; verbs are the lemmas.
* ``srl``: every SRL frame is a tuple (the paper's "SRL w/o heuristics"); key iff a predicate.

With a trained key-clip selector (``keyclip_model``, a folder of results/models/ written by
cookproc.keyclips.deploy; the default of the workflow's ``user`` section) the selector decides
which clips are key and gives each clip its key probability; the SRL extractor still gives the
verbs and arguments (:class:`SelectedKeyClips`).

Both take their frames from an SRL backend of :mod:`cookproc.srl.predict`: ``spacy`` (dependency
rules, no training, default) or ``tagger`` (the trained BIO tagger; needs its model file). A
built-in extractor is named ``<extractor>-<backend>`` (:data:`MODELS`, the CLI's ``--model``).

Two numbers per clip, kept apart so that neither claims more than it is:

* ``key_probability``: the trained key-clip selector's probability that the clip is a key step
  (``is_key`` is then its threshold decision). The SRL extractors alone decide by rule and have
  none: it is null for them.
* ``key_score``: the SRL extractor's own confidence in its rule's decision, not a probability of
  being key: for the tagger the highest mean tag probability of a kept frame's predicate; null for
  the rule-based spaCy backend (it has no confidence), and null when a selector decided.

The documents they fill (:func:`procedure_document`, JSON and Markdown, the schema check) are in
the torch-free :mod:`cookproc.app.documents`, re-exported here.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

# The document itself (schema, validation, JSON and Markdown) is torch-free, for the report and the
# corpus's Markdown; re-exported here, where the extractors fill it.
from cookproc.app.documents import (DOCUMENT_SCHEMA, FORMAT_VERSION, ClipExtraction, DocumentError,  # noqa: F401
                                ProcedureTuple, procedure_document, render, steps_markdown, to_json, to_markdown,
                                validate_document, write_procedure)
from cookproc.app.subtitles import read_subtitles

log = logging.getLogger(__name__)

EXTRACTORS = ("srl-heur", "srl")
SRL_BACKENDS = ("spacy", "tagger")
#: Built-in extractors by name (``<extractor>-<backend>``), as documents and ``--model`` name them.
MODELS = tuple(f"{e}-{b}" for e in EXTRACTORS for b in SRL_BACKENDS)
#: Sentences handed to the SRL backend at once: its batch, and the progress bar's step.
CHUNK_SENTENCES = 256


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
    """Anything that labels sentences, one per clip: each video's clips consecutive and in time
    order; ``videos`` (one id per sentence, default: all one video) says where videos change, for
    extractors that read a clip's neighbours. ``key_clips_by``: what decides the key clips."""

    name: str
    key_clips_by: str

    def extract(self, sentences: Sequence[str], progress: Progress | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]: ...


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
            from cookproc.data.wordnet import verb_lemma as lemma
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

    @property
    def key_clips_by(self) -> str:
        return self.name

    def extract(self, sentences: Sequence[str], progress: Progress | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]:  # noqa: ARG002 (clip by clip)
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


#: Sentences a key-clip selector scores at once (whole videos, never split): bounds its memory on a
#: corpus shard of thousands of videos.
SELECTOR_CHUNK_SENTENCES = 2048


@dataclass
class SelectedKeyClips:
    """Key clips and their probabilities from a trained selector (cookproc.keyclips.deploy), verbs,
    arguments and tuples from an extractor, SRL or the trained tuple extractor (kept for every clip,
    key or not: the JSON keeps all clips, the Markdown lists the key ones)."""

    selector: object  # cookproc.keyclips.deploy.KeyClipSelector (torch: imported on use)
    tuples: Extractor
    lowercase: bool = True

    @property
    def name(self) -> str:
        return f"{self.selector.name} + {self.tuples.name}"

    @property
    def key_clips_by(self) -> str:
        return self.selector.name

    def extract(self, sentences: Sequence[str], progress: Progress | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]:
        extractions = self.tuples.extract(sentences, progress, videos)
        videos = [0] * len(sentences) if videos is None else list(videos)
        if len(videos) != len(sentences):
            raise ValueError(f"{len(videos)} video ids for {len(sentences)} sentences")
        # The selector was trained on the benchmark's lower-case transcripts, as the SRL backends.
        texts = [s.lower() if self.lowercase else s for s in sentences]
        t0 = time.perf_counter()
        probability = score_by_video(self.selector, texts, videos)
        log.info("%s: scored %d sentences in %.1f s", self.selector.name, len(texts), time.perf_counter() - t0)
        threshold = self.selector.spec.threshold
        return [dataclasses.replace(e, is_key=bool(p >= threshold), key_probability=float(p), key_score=None)
                for e, p in zip(extractions, probability)]


@dataclass
class SupervisedTuples:
    """Verbs and arguments from a trained tuple extractor (cookproc.supervised.deploy, rule
    deploy_tuple_extractor): its SRL backend labels the sentences, its frozen encoder gives their
    vectors when its verb classifier reads them, and it fits and applies its models to them. It
    ranks candidates for every clip and has no key-clip rule: a key-clip selector decides
    (:class:`SelectedKeyClips`). A clip's tuples pair each verb with all of its arguments: the
    benchmark annotates, and the extractor predicts, a clip's verbs and arguments, not their pairing."""

    model: object  # cookproc.supervised.deploy.TupleExtractor
    labeller: FrameLabeller
    device: str = "cpu"
    lowercase: bool = True

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def key_clips_by(self) -> str:
        return self.name

    def extract(self, sentences: Sequence[str], progress: Progress | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]:
        from cookproc.srl.frames import frame_rows

        texts = [s.lower() if self.lowercase else s for s in sentences]
        videos = [0] * len(texts) if videos is None else list(videos)
        if len(videos) != len(texts):
            raise ValueError(f"{len(videos)} video ids for {len(texts)} sentences")
        t0 = time.perf_counter()
        frames: list[list[list[dict]]] = []
        for start in range(0, len(texts), CHUNK_SENTENCES):
            chunk = texts[start:start + CHUNK_SENTENCES]
            for offset, clip_frames in enumerate(self.labeller(chunk)):
                # As the training clips' frames were read back from their table (clipfeatures.read_srl).
                rows = frame_rows(self.model.srl_backend, "", start + offset, clip_frames)
                by_frame: dict[int, list[dict]] = {}
                for row in rows:
                    by_frame.setdefault(row["frame_idx"], []).append(
                        {"role": row["role"], "text": row["text"], "lemma": row["predicate_lemma"],
                         "start": row["token_start"], "end": row["token_end"]})
                frames.append([by_frame[f] for f in sorted(by_frame)])
            if progress is not None:
                progress(len(chunk), len(texts))
        vectors = None
        if self.model.encoder is not None:
            from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder

            spec = self.model.encoder
            encoder = load_sentence_encoder(spec["path"], pooling=spec["pooling"], max_length=spec["max_length"],
                                            device=self.device)
            vectors = embed_sentences(texts, encoder, batch_size=spec["batch_size"])
        verbs, args = self.model.extract(texts, videos, frames, vectors)
        log.info("%s: %d sentences in %.1f s", self.name, len(texts), time.perf_counter() - t0)
        return [ClipExtraction(bool(v or a), None, list(v), list(a), [ProcedureTuple(x, tuple(a)) for x in v])
                for v, a in zip(verbs, args)]


def load_tuple_model(path: str | Path, device: str = "cpu", lowercase: bool = True) -> SupervisedTuples:
    """A trained tuple extractor's folder, loaded with the SRL backend it was trained on."""
    from cookproc.core.errors import InputError

    if not Path(path).exists():
        raise InputError(path, "no trained tuple extractor here: build it with `snakemake -c2 "
                               f"{path}` (it trains on the benchmark), or set user.tuple_model to null "
                               "(cookproc extract: --tuples none) for the SRL extractor")
    from cookproc.supervised.deploy import TupleExtractor

    model = TupleExtractor.load(path)
    return SupervisedTuples(model, srl_labeller(model.srl_backend, tagger_model=model.tagger_model, device=device),
                            device, lowercase)


def score_by_video(selector, texts: Sequence[str], videos: Sequence) -> list[float]:
    """The selector's key probability of each text, scored in chunks of whole videos."""
    import pandas as pd

    probability: list[float] = []
    for start, stop in video_chunks(videos, SELECTOR_CHUNK_SENTENCES):
        clips = pd.DataFrame({"video_id": videos[start:stop], "sentence": texts[start:stop]})
        clips["clip_idx"] = clips.groupby("video_id", sort=False).cumcount()
        probability += selector.score(clips)[0].tolist()
    return probability


def video_chunks(videos: Sequence, size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` row ranges of about ``size`` rows that never split a video (a video longer
    than ``size`` is a chunk of its own)."""
    chunks, start = [], 0
    for i in range(1, len(videos) + 1):
        if i == len(videos) or (videos[i] != videos[i - 1] and i - start >= size):
            chunks.append((start, i))
            start = i
    return chunks


def load_selector(path: str | Path, device: str = "cpu"):
    """A trained key-clip selector's folder, loaded (refused with the reason when it does not match)."""
    from cookproc.core.errors import InputError

    if not Path(path).exists():
        raise InputError(path, "no trained key-clip selector here: build it with `snakemake -c2 "
                               f"{path}` (it trains on the benchmark), or set user.keyclip_model and user.tuple_model to "
                               "null (cookproc extract: --keyclips none) to let the SRL extractor's rule decide")
    from cookproc.keyclips.deploy import KeyClipSelector

    return KeyClipSelector.load(path, device=device)


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
    """``(extractor, srl_backend)`` of a built-in extractor's name (:data:`MODELS`). A path is refused
    (the trained key-clip selector is given as ``keyclip_model``): nothing runs in its place."""
    if model in MODELS:
        extractor, _, backend = model.rpartition("-")
        return extractor, backend
    if Path(model).exists() or "/" in model or model.endswith((".pt", ".json", ".pkl", ".joblib")):
        raise ValueError(f"--model {model}: not a built-in extractor ({', '.join(MODELS)}) nor a key-clip "
                         "selector's folder (with model.json); a trained selector is given with --keyclips DIR")
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
    keyclip_model: str | None = None  # a trained key-clip selector's folder; None: the extractor's rule
    tuple_model: str | None = None  # a trained tuple extractor's folder; None: the SRL extractor
    # How input is checked (cookproc.app.subtitles.read_subtitles, cookproc.app.language): the defaults of
    # the user section.
    rolling_captions: str = "auto"
    max_sentence_chars: int = 2000
    long_sentences: str = "cut"
    language: str | None = "en"
    other_language: str = "warn"

    @classmethod
    def from_config(cls, section: dict) -> "ProcedureSettings":
        """From the ``user`` section (or a rule's params of the same names); other keys ignored, keys
        with a default optional."""
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section
                      or cls.__dataclass_fields__[name].default is dataclasses.MISSING})


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
    if settings.tuple_model and not settings.keyclip_model:
        raise ValueError("user.tuple_model gives verbs and arguments for every clip and has no key-clip rule: it "
                         "needs user.keyclip_model (cookproc extract: --keyclips DIR); or set user.tuple_model to "
                         "null too, for the SRL extractor and its rule")
    # The selector first: when neither model is built, its message comes first.
    selector = load_selector(settings.keyclip_model, settings.device) if settings.keyclip_model else None
    if settings.tuple_model:
        tuples = load_tuple_model(settings.tuple_model, settings.device, settings.lowercase)
    else:
        tuples = make_extractor(settings.extractor, srl_backend=settings.srl_backend, lexicon=lexicon,
                                tagger_model=settings.tagger_model, device=settings.device,
                                lowercase=settings.lowercase)
    if selector is None:
        return tuples
    return SelectedKeyClips(selector, tuples, settings.lowercase)


def procedure_documents(sources: Sequence[str | Path], settings: ProcedureSettings, *, lexicon: str | Path,
                        names: Sequence[str] | None = None, videos: Sequence[dict | None] | None = None,
                        progress: Progress | None = None, extractor: Extractor | None = None) -> list[dict]:
    """One procedure document per subtitle / transcript file; the sentences of all files are
    labelled in one pass (a corpus shard labels thousands of short files). Every file is read
    before the lexicon and the extractor load, so a bad file fails at once. ``extractor``
    replaces the configured one (tests)."""
    names = [Path(s).stem for s in sources] if names is None else list(names)
    videos = [None] * len(sources) if videos is None else list(videos)
    read = [read_subtitles(source, segmentation=settings.segmentation, max_clip_s=settings.max_clip_s,
                           video_end_s=video["duration_s"] if video else None,
                           drop_sound_tags=settings.drop_sound_tags, rolling_captions=settings.rolling_captions,
                           max_sentence_chars=settings.max_sentence_chars, long_sentences=settings.long_sentences,
                           language=settings.language, other_language=settings.other_language)
            for source, video in zip(sources, videos)]
    words = read_cooking_lexicon(lexicon)
    extractor = extractor or load_extractor(settings, words)
    extractions = extractor.extract([c.sentence for reading in read for c in reading.clips], progress=progress,
                                    videos=[k for k, reading in enumerate(read) for _ in reading.clips])
    record = {"segmentation": settings.segmentation, "max_clip_s": settings.max_clip_s,
              "drop_sound_tags": settings.drop_sound_tags, "srl_backend": settings.srl_backend,
              "tagger_model": settings.tagger_model, "lowercase": settings.lowercase, "lexicon": str(lexicon),
              "lexicon_size": len(words), "keyclip_model": settings.keyclip_model,
              "tuple_model": settings.tuple_model, "rolling_captions": settings.rolling_captions,
              "max_sentence_chars": settings.max_sentence_chars, "long_sentences": settings.long_sentences,
              "language": settings.language, "other_language": settings.other_language}
    documents, done = [], 0
    for name, source, video, reading in zip(names, sources, videos, read):
        clips = reading.clips
        documents.append(procedure_document(name, clips, extractions[done:done + len(clips)], source=str(source),
                                            video=video, extractor=extractor.name, settings=record,
                                            segmentation=reading.segmentation, key_clips_by=extractor.key_clips_by,
                                            checks=reading.checks))
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


# ----------------------------------------------------------------------------- videos
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
