"""Procedures from a user's own timed sentences: key clips and tuples, as JSON and Markdown.

How a file becomes a procedure document, as rule procedures_extract, the corpus rules and the
``cookproc`` command run it: the settings (:class:`ProcedureSettings`, the config's ``procedures``
section); the file read into clips (:mod:`cookproc.app.subtitles`); the configured extractor
(:mod:`cookproc.app.extractors`), with the trained models it needs (:mod:`cookproc.app.models`);
the video probed when given (:mod:`cookproc.app.video_probe`); and the document filled
(:mod:`cookproc.app.documents`).
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from cookproc.app.documents import procedure_document
from cookproc.app.extractors import Extractor, SelectedKeyClips, make_extractor
from cookproc.app.models import load_selector, load_step_model, load_tuple_model, read_cooking_lexicon
from cookproc.app.progress import ProgressCallback
from cookproc.app.steps import StepsFromCaptions
from cookproc.app.subtitles import read_subtitles
from cookproc.app.video_probe import video_info
from cookproc.core.errors import ConfigError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProcedureSettings:
    """How a file becomes a procedure: the keys of the config's ``procedures`` section
    (workflow/schemas/config/procedures.schema.yaml), shared by rule procedures_extract, the corpus rules
    and the ``cookproc`` command, so that all three give the same document for the same file."""

    segmentation: str
    max_clip_s: float
    drop_sound_tags: bool
    extractor: str
    srl_backend: str
    tagger_model: str | None
    device: str
    lowercase: bool
    keyclip_model: str | None = None  # a trained key-clip selector's folder; None: the step model or the extractor's rule
    step_model: str | None = None  # a step model's folder: key steps with the verbs, nouns and text a person would write
    tuple_model: str | None = None  # a trained tuple extractor's folder; None: the SRL extractor
    # How input is checked (cookproc.app.subtitles.read_subtitles, cookproc.app.language): the defaults of
    # the procedures section.
    rolling_captions: str = "auto"
    max_sentence_chars: int = 2000
    long_sentences: str = "cut"
    language: str | None = "en"
    other_language: str = "warn"
    longest_clip_s: float = 600.0
    strict: bool = False

    @classmethod
    def from_config(cls, section: dict) -> "ProcedureSettings":
        """From the ``procedures`` section (or a rule's params of the same names); other keys ignored, keys
        with a default optional."""
        return cls(**{name: section[name] for name in cls.__dataclass_fields__ if name in section
                      or cls.__dataclass_fields__[name].default is dataclasses.MISSING})



def load_extractor(settings: ProcedureSettings, lexicon: frozenset[str]) -> Extractor:
    if settings.step_model and settings.keyclip_model:
        raise ConfigError("procedures.step_model and procedures.keyclip_model both decide the key clips: set one of them to "
                          "null (cookproc extract: --steps none or --keyclips none)", ["procedures", "keyclip_model"])
    if settings.tuple_model and not (settings.keyclip_model or settings.step_model):
        raise ConfigError("procedures.tuple_model gives verbs and arguments for every clip and has no key-clip rule: it "
                          "needs procedures.step_model or procedures.keyclip_model (cookproc extract: --steps DIR or "
                          "--keyclips DIR); or set procedures.tuple_model to null too, for the SRL extractor and its rule",
                          ["procedures", "tuple_model"])
    # The key-clip deciders first: when no model is built, their message comes first.
    steps = load_step_model(settings.step_model) if settings.step_model else None
    selector = load_selector(settings.keyclip_model, settings.device) if settings.keyclip_model else None
    if settings.tuple_model:
        tuples = load_tuple_model(settings.tuple_model, settings.device, settings.lowercase)
    else:
        tuples = make_extractor(settings.extractor, srl_backend=settings.srl_backend, lexicon=lexicon,
                                tagger_model=settings.tagger_model, device=settings.device,
                                lowercase=settings.lowercase)
    if steps is not None:
        return StepsFromCaptions(steps, tuples, settings.device)
    if selector is None:
        return tuples
    return SelectedKeyClips(selector, tuples, settings.lowercase)


def procedure_documents(sources: Sequence[str | Path], settings: ProcedureSettings, *, lexicon: str | Path,
                        names: Sequence[str] | None = None, videos: Sequence[dict | None] | None = None,
                        progress: ProgressCallback | None = None, extractor: Extractor | None = None) -> list[dict]:
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
                           language=settings.language, other_language=settings.other_language,
                           longest_clip_s=settings.longest_clip_s, strict=settings.strict)
            for source, video in zip(sources, videos)]
    words = read_cooking_lexicon(lexicon)
    extractor = extractor or load_extractor(settings, words)
    extractions = extractor.extract([c.sentence for reading in read for c in reading.clips], progress=progress,
                                    videos=[k for k, reading in enumerate(read) for _ in reading.clips])
    record = {"segmentation": settings.segmentation, "max_clip_s": settings.max_clip_s,
              "drop_sound_tags": settings.drop_sound_tags, "srl_backend": settings.srl_backend,
              "tagger_model": settings.tagger_model, "lowercase": settings.lowercase, "lexicon": str(lexicon),
              "lexicon_size": len(words), "keyclip_model": settings.keyclip_model, "step_model": settings.step_model,
              "tuple_model": settings.tuple_model, "rolling_captions": settings.rolling_captions,
              "max_sentence_chars": settings.max_sentence_chars, "long_sentences": settings.long_sentences,
              "language": settings.language, "other_language": settings.other_language,
              "longest_clip_s": settings.longest_clip_s, "strict": settings.strict}
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
                      progress: ProgressCallback | None = None) -> dict:
    """The procedure document of one subtitle / transcript file (and its optional video): what
    rule procedures_extract and ``cookproc extract`` both run."""
    video_meta = video_info(video) if video else None
    if video_meta:
        log.info("video %s: %.1f s, %dx%d", video_meta["path"], video_meta["duration_s"], video_meta["width"],
                 video_meta["height"])
    [document] = procedure_documents([source], settings, lexicon=lexicon, names=[name or Path(source).stem],
                                     videos=[video_meta], progress=progress)
    log.info("%s: %d clips (%s segmentation), %d key clips by %s", source, document["n_clips"],
             document["segmentation"], document["n_key_clips"], document["extractor"])
    return document

