"""Key steps as a person would write them: the step model (cookproc.captions) beside an extractor.

The step model decides which clips are steps and writes, for each, the verbs and nouns a person
would write and a short imperative text (:mod:`cookproc.captions.step_text`); the extractor
(:mod:`cookproc.app.extractors`: SRL or the trained tuple extractor) keeps every clip's own verbs,
arguments and tuples, the benchmark's task. ``key_probability`` is the step model's highest score of
any candidate verb of the clip (how likely a caption's verb is said there), not a selector's.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Sequence

from cookproc.app.documents import ClipExtraction
from cookproc.app.extractors import Extractor, video_chunks
from cookproc.app.progress import ProgressCallback

log = logging.getLogger(__name__)


@dataclass
class StepsFromCaptions:
    """Key steps, with the verbs, nouns and text a person would write, from a step model
    (cookproc.captions, trained on YouCook2's human captions); the clip's own verbs, arguments and
    tuples from an extractor, SRL or the trained tuple extractor, kept for every clip (the
    benchmark's task). The model reads each video's clips together (a step's verbs are decided on
    the whole video's evidence), so a video's clips must be consecutive."""

    steps: object  # cookproc.captions.deploy.StepModelFolder
    tuples: Extractor
    device: str = "cpu"

    @property
    def name(self) -> str:
        return f"{self.steps.name} + {self.tuples.name}"

    @property
    def key_clips_by(self) -> str:
        return self.steps.name

    def extract(self, sentences: Sequence[str], progress: ProgressCallback | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]:
        from cookproc.app.documents import Step
        from cookproc.captions.features import VideoText
        from cookproc.data.step_words import transcript_words
        from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder

        extractions = self.tuples.extract(sentences, progress, videos)
        videos = [0] * len(sentences) if videos is None else list(videos)
        if len(videos) != len(sentences):
            raise ValueError(f"{len(videos)} video ids for {len(sentences)} sentences")
        t0 = time.perf_counter()
        texts = [s.lower() for s in sentences]  # as the model's training transcripts
        spec = self.steps.encoder
        encoder = load_sentence_encoder(spec["path"], pooling=spec["pooling"], max_length=spec["max_length"],
                                        device=self.device)
        vectors = embed_sentences(texts, encoder, batch_size=spec["batch_size"])
        words = transcript_words(texts)
        ranges = video_chunks(videos, 1)
        model = self.steps.model
        found = model.steps([VideoText(str(videos[a]), texts[a:b], words[a:b], vectors[a:b]) for a, b in ranges])
        out = list(extractions)
        for (start, stop), steps in zip(ranges, found):
            for j in range(stop - start):
                step = None
                if j in steps.verbs:  # its nouns are its text's, said in its run of sentences
                    step = Step(tuple(steps.verbs[j]), tuple(steps.nouns[j]), steps.texts[j])
                out[start + j] = dataclasses.replace(extractions[start + j], is_key=step is not None,
                                                     key_probability=float(steps.key_probability[j]), key_score=None,
                                                     step=step)
        log.info("%s: %d sentences of %d videos in %.1f s", self.steps.name, len(texts), len(ranges),
                 time.perf_counter() - t0)
        return out
