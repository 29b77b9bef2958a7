"""Extractors: what labels a user's sentences, one per clip, with key flags, verbs and arguments.

The extractor interface is small on purpose, so that any system that runs on arbitrary sentences
plugs in: an :class:`Extractor` maps a list of sentences (one per clip, in time order) to one
:class:`ClipExtraction` per sentence (key flag, key score, verbs, arguments and the tuples they
come from). :func:`make_extractor` builds the configured one:

* ``srl-heur`` (default): SRL parses with the paper's heuristics (role filter, frames left
  without an argument dropped, WordNet verb lemma in the cooking lexicon), applied with
  :mod:`cookproc.srl.baselines`; a clip is key iff a frame survives; verbs are the lemmas.
* ``srl``: every SRL frame is a tuple (the paper's "SRL w/o heuristics"); key iff a predicate.

With a trained key-clip selector (``keyclip_model``, a folder of results/models/ written by
cookproc.keyclips.deploy; the default of the workflow's ``procedures`` section) the selector decides
which clips are key and gives each clip its key probability; the SRL extractor still gives the
verbs and arguments (:class:`SelectedKeyClips`).

Both take their parses from an SRL backend of :mod:`cookproc.srl.predict`: ``spacy`` (dependency
rules, no training, default) or ``tagger`` (the trained BIO tagger; needs its model file). A
built-in extractor is named ``<extractor>-<backend>`` (:data:`MODELS`, the CLI's ``--model``).

Two numbers per clip, kept apart so that neither claims more than it is:

* ``key_probability``: the trained key-clip selector's probability that the clip is a key step
  (``is_key`` is then its threshold decision). The SRL extractors alone decide by rule and have
  none: it is null for them.
* ``key_score``: the SRL extractor's own confidence in its rule's decision, not a probability of
  being key: for the tagger the highest mean tag probability of a kept frame's predicate; null for
  the rule-based spaCy backend (it has no confidence), and null when a selector decided.
The documents they fill are in the torch-free :mod:`cookproc.app.documents`; the trained models are
loaded by :mod:`cookproc.app.models`.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, Sequence

from cookproc.app.documents import ClipExtraction, ProcedureTuple
from cookproc.app.progress import ProgressCallback
from cookproc.core.errors import ConfigError

log = logging.getLogger(__name__)

EXTRACTORS = ("srl-heur", "srl")
SRL_BACKENDS = ("spacy", "tagger")
#: Built-in extractors by name (``<extractor>-<backend>``), as documents and ``--model`` name them.
MODELS = tuple(f"{e}-{b}" for e in EXTRACTORS for b in SRL_BACKENDS)
#: Sentences handed to the SRL backend at once: its batch, and the progress bar's step.
CHUNK_SENTENCES = 256


class Extractor(Protocol):
    """Anything that labels sentences, one per clip: each video's clips consecutive and in time
    order; ``videos`` (one id per sentence, default: all one video) says where videos change, for
    extractors that read a clip's neighbours. ``key_clips_by``: what decides the key clips."""

    name: str
    key_clips_by: str

    def extract(self, sentences: Sequence[str], progress: ProgressCallback | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]: ...


# ----------------------------------------------------------------------------- SRL extractors
FrameLabeller = Callable[[Sequence[str]], list]  # sentences -> per sentence, parses of Chunks


def parse_to_extraction(parses: Sequence, *, heuristics: bool, lexicon=frozenset(), lemma=None) -> ClipExtraction:
    """One clip's SRL parses -> key flag and tuples, through the paper's heuristics when asked.

    Uses the filters of :mod:`cookproc.srl.baselines` frame by frame (rather than its flat
    ``with_heuristics``) so that each surviving frame stays one tuple.
    """
    from cookproc.srl import baselines

    if heuristics:
        if lemma is None:
            from cookproc.data.wordnet import verb_lemma as lemma
        kept = []
        for frame in parses:
            filtered = baselines.filter_roles(frame)
            if filtered is not None:
                filtered = baselines.filter_lexicon(filtered, lexicon, lemma)
            if filtered is not None:
                kept.append(filtered)
    else:
        kept = [list(frame) for frame in parses]
    verbs, args = baselines.verbs_and_args(kept)
    tuples = []
    for frame in kept:
        frame_verbs, frame_args = baselines.verbs_and_args([frame])
        tuples += [ProcedureTuple(v, tuple(frame_args)) for v in frame_verbs]
    scores = [c.score for frame in kept for c in frame if c.role == "V" and c.score is not None]
    return ClipExtraction(bool(kept), max(scores) if scores else None, verbs, args, tuples)


@dataclass
class SRLExtractor:
    """SRL parses from a backend, with or without the paper's heuristics."""

    name: str
    labeller: FrameLabeller
    heuristics: bool
    lexicon: frozenset = frozenset()
    lowercase: bool = True

    @property
    def key_clips_by(self) -> str:
        return self.name

    def extract(self, sentences: Sequence[str], progress: ProgressCallback | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]:  # noqa: ARG002 (clip by clip)
        # The backends and the lexicon were built for the benchmark's lower-case transcripts.
        texts = [s.lower() if self.lowercase else s for s in sentences]
        t0 = time.perf_counter()
        out: list[ClipExtraction] = []
        # In chunks, so that long inputs report progress; a sentence's parses do not depend on the
        # other sentences of its batch (tests/workflow/test_corpus_workflow.py: 1 shard and 3 shards agree).
        for start in range(0, len(texts), CHUNK_SENTENCES):
            chunk = texts[start:start + CHUNK_SENTENCES]
            labelled = self.labeller(chunk)
            if len(labelled) != len(chunk):
                raise RuntimeError(f"{self.name}: the SRL backend returned {len(labelled)} results for "
                                   f"{len(chunk)} sentences")
            out += [parse_to_extraction(f, heuristics=self.heuristics, lexicon=self.lexicon) for f in labelled]
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

    def extract(self, sentences: Sequence[str], progress: ProgressCallback | None = None,
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

    def extract(self, sentences: Sequence[str], progress: ProgressCallback | None = None,
                videos: Sequence | None = None) -> list[ClipExtraction]:
        from cookproc.srl.parses import parse_rows

        texts = [s.lower() if self.lowercase else s for s in sentences]
        videos = [0] * len(texts) if videos is None else list(videos)
        if len(videos) != len(texts):
            raise ValueError(f"{len(videos)} video ids for {len(texts)} sentences")
        t0 = time.perf_counter()
        parses: list[list[list[dict]]] = []
        for start in range(0, len(texts), CHUNK_SENTENCES):
            chunk = texts[start:start + CHUNK_SENTENCES]
            for offset, clip_parses in enumerate(self.labeller(chunk)):
                # As the training clips' parses were read back from their table (clipfeatures.read_srl).
                rows = parse_rows(self.model.srl_backend, "", start + offset, clip_parses)
                by_frame: dict[int, list[dict]] = {}
                for row in rows:
                    by_frame.setdefault(row["frame_idx"], []).append(
                        {"role": row["role"], "text": row["text"], "lemma": row["predicate_lemma"],
                         "start": row["token_start"], "end": row["token_end"]})
                parses.append([by_frame[f] for f in sorted(by_frame)])
            if progress is not None:
                progress(len(chunk), len(texts))
        vectors = None
        if self.model.encoder is not None:
            from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder

            spec = self.model.encoder
            encoder = load_sentence_encoder(spec["path"], pooling=spec["pooling"], max_length=spec["max_length"],
                                            device=self.device)
            vectors = embed_sentences(texts, encoder, batch_size=spec["batch_size"])
        verbs, args = self.model.extract(texts, videos, parses, vectors)
        log.info("%s: %d sentences in %.1f s", self.name, len(texts), time.perf_counter() - t0)
        return [ClipExtraction(bool(v or a), None, list(v), list(a), [ProcedureTuple(x, tuple(a)) for x in v])
                for v, a in zip(verbs, args)]



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



def srl_labeller(backend: str, *, tagger_model: str | Path | None = None, device: str = "cpu") -> FrameLabeller:
    """Sentences -> parses with one of the backends of :mod:`cookproc.srl.predict`."""
    if backend == "spacy":
        def label_with_spacy(texts):
            # Imported on first use (torch, spaCy): a bad input file fails before these load.
            from cookproc.srl import predict

            return predict.label_with_spacy(texts)

        return label_with_spacy
    if backend == "tagger":
        if not tagger_model:
            raise ConfigError("procedures.srl_backend is 'tagger' but procedures.tagger_model is not set: give the trained "
                              "tagger's model file, or use the 'spacy' backend", ["procedures", "tagger_model"])
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

