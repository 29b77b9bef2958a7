"""Visual-only tuples and their fusion with an utterance system, in two variants.

Per clip, the EPIC verb and noun classes of its aligned TSM segments become words:

``paper`` (upstream's evaluate_visual.py, made deterministic)
  * visual-only / naive fusion: each class is replaced by the member word with the highest
    ``partial_ratio`` against any *gold* item of the clip (gold verbs for verbs, gold arguments for
    nouns); ties go to the first member in the fixed tie order (below); with no gold item or no
    similarity above 0 the raw class key stays (``board:chopping``). So these rows use the gold.
  * oracle fusion: every member word of every class, kept when it equals a gold item, unioned
    with the utterance system. Upstream filters *both* fields by the gold **verbs** (so nouns
    survive only when they equal a gold verb); reproduced.
  * tie order: upstream iterates ``list(set(words))``, whose order depends on PYTHONHASHSEED. We
    sort the members by their BLAKE2b digest keyed with ``tie_key`` (an arbitrary but fixed
    permutation, like one run's set order).

``corrected`` (no gold outside the oracle, arguments filtered by gold arguments)
  * visual-only / naive fusion: each class's key as words (``board:chopping`` -> ``chopping
    board``); noun classes in ``drop_nouns`` (``Nothing``) give no argument.
  * oracle fusion: member words plus, when enabled, their WordNet synonyms and 1-hop siblings
    (co-hyponyms: the other hyponyms of each hypernym) over the first ``max_senses`` senses, as the
    paper describes; verbs kept when they equal a gold verb, arguments when they equal a gold
    argument.

Fusion output lists: the utterance system's items (order kept, duplicates dropped), then the
visual words it lacks, sorted.
"""
from __future__ import annotations

import functools
import hashlib
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import pyarrow as pa

from cookproc.scoring.similarity import fuzz_partial_ratio
from cookproc.core.schemas import TUPLES
from cookproc.video.epic import NOUN, VERB, EpicClasses

log = logging.getLogger(__name__)

VARIANTS = ("paper", "corrected")
KINDS = ("visual", "fusion-naive", "fusion-oracle")
ClipKey = tuple[str, int]


def system_name(kind: str, source: str, variant: str) -> str:
    """``visual-upstream-paper``, ``fusion-naive-tsm-corrected``, ..."""
    if kind not in KINDS or variant not in VARIANTS:
        raise ValueError(f"unknown system kind/variant {kind!r}/{variant!r}")
    return f"{kind}-{source}-{variant}"


def tie_order(words: Iterable[str], tie_key: str) -> list[str]:
    """Distinct ``words`` in ascending BLAKE2b(word, key=tie_key) order (word itself breaks a digest tie)."""
    key = tie_key.encode("utf-8")
    if not 0 < len(key) <= 64:
        raise ValueError("tie_key must be 1..64 bytes")
    return sorted(dict.fromkeys(words), key=lambda w: (hashlib.blake2b(w.encode("utf-8"), key=key).digest(), w))


def choose_by_gold(class_key: str, candidates: Sequence[str], gold: Sequence[str]) -> str:
    """Upstream's select_pred for one class: the first candidate reaching the highest partial_ratio
    against any gold item (strictly greater replaces), else the raw class key."""
    best, best_score = None, 0
    for candidate in candidates:
        for item in gold:
            score = fuzz_partial_ratio(candidate, item)
            if score > best_score:
                best, best_score = candidate, score
    return best if best is not None else class_key


@functools.lru_cache(maxsize=None)
def wordnet_neighbours(word: str, pos: str, max_senses: int) -> frozenset[str]:
    """Synonyms and 1-hop siblings of ``word`` in WordNet (first ``max_senses`` senses; 0 = all),
    as lower-case words with spaces."""
    from cookproc.data.wordnet import wordnet

    wn = wordnet()
    synsets = wn.synsets(word.replace(" ", "_"), pos=pos)
    if max_senses:
        synsets = synsets[:max_senses]
    related = set()
    for synset in synsets:
        related.add(synset)
        for parent in synset.hypernyms() + synset.instance_hypernyms():
            related.update(parent.hyponyms() + parent.instance_hyponyms())
    return frozenset(name.replace("_", " ").lower() for s in related for name in s.lemma_names())


@dataclass
class VisualConfig:
    variant: str
    tie_key: str = "71"
    drop_nouns: Sequence[str] = ("Nothing",)
    wordnet_expansion: bool = True
    wordnet_max_senses: int = 1
    max_rank: int = 1

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, not {self.variant!r}")
        if self.max_rank < 1:
            raise ValueError("max_rank must be >= 1")


@dataclass
class Vocabulary:
    """One kind's classes and, per class, the words each variant may emit."""

    classes: EpicClasses
    config: VisualConfig
    _expansions: dict[str, frozenset[str]] = field(default_factory=dict)

    @functools.cached_property
    def ordered_members(self) -> dict[str, list[str]]:
        return {k: tie_order(self.classes.member_words(k), self.config.tie_key) for k in self.classes.keys}

    def visual_word(self, class_key: str, gold: Sequence[str]) -> str | None:
        if self.config.variant == "paper":
            return choose_by_gold(class_key, self.ordered_members[class_key], gold)
        if self.classes.kind == NOUN and class_key in self.config.drop_nouns:
            return None
        return self.classes.key_words(class_key)

    def expansion(self, class_key: str) -> frozenset[str]:
        cached = self._expansions.get(class_key)
        if cached is None:
            words = set(self.classes.member_words(class_key))
            if self.config.variant == "corrected" and self.config.wordnet_expansion:
                pos = "v" if self.classes.kind == VERB else "n"
                for word in list(words):
                    words |= wordnet_neighbours(word, pos, self.config.wordnet_max_senses)
            cached = self._expansions[class_key] = frozenset(words)
        return cached


def clip_labels(aligned: pa.Table, max_rank: int) -> dict[ClipKey, tuple[list[str], list[str]]]:
    """Per clip, the distinct verb and noun class keys of its aligned segments (ranks <= max_rank), sorted."""
    verbs: dict[ClipKey, set[str]] = defaultdict(set)
    nouns: dict[ClipKey, set[str]] = defaultdict(set)
    data = aligned.select(["video_id", "clip_idx", "rank", "verb_key", "noun_key"]).to_pydict()
    for video_id, clip_idx, rank, verb, noun in zip(*data.values()):
        if rank <= max_rank:
            verbs[(video_id, clip_idx)].add(verb)
            nouns[(video_id, clip_idx)].add(noun)
    return {k: (sorted(verbs[k]), sorted(nouns[k])) for k in verbs}


def _union(utterance: Sequence[str], visual: Iterable[str]) -> list[str]:
    out = list(dict.fromkeys(utterance))
    have = set(out)
    return out + sorted(set(visual) - have)


def _tuples_table(system: str, keys: Sequence[ClipKey], verbs: Sequence[list[str]], args: Sequence[list[str]]) -> pa.Table:
    return pa.table({
        "system": pa.array([system] * len(keys), pa.string()),
        "video_id": pa.array([k[0] for k in keys], pa.string()),
        "clip_idx": pa.array([k[1] for k in keys], pa.int32()),
        "verbs": pa.array(list(verbs), TUPLES.field("verbs").type),
        "args": pa.array(list(args), TUPLES.field("args").type),
    }, schema=TUPLES)


def build_visual_systems(clips: pa.Table, aligned: pa.Table, verbs: EpicClasses, nouns: EpicClasses,
                         utterance: pa.Table, *, source: str, config: VisualConfig) -> dict[str, pa.Table]:
    """The three systems (visual, naive fusion, oracle fusion) of one source and variant, as TUPLES
    tables with one row per clip of ``clips`` (clips with no aligned segment get no visual words)."""
    keys = [(v, int(c)) for v, c in zip(clips.column("video_id").to_pylist(), clips.column("clip_idx").to_pylist())]
    gold_verbs = dict(zip(keys, clips.column("gold_verbs").to_pylist()))
    gold_args = dict(zip(keys, clips.column("gold_args").to_pylist()))
    utter = {(r["video_id"], int(r["clip_idx"])): (r["verbs"], r["args"])
             for r in utterance.select(["video_id", "clip_idx", "verbs", "args"]).to_pylist()}
    missing = [k for k in keys if k not in utter]
    if missing:
        raise ValueError(f"utterance system lacks {len(missing)} clips, e.g. {missing[:3]}")
    labels = clip_labels(aligned, config.max_rank)
    unknown = sorted({k for k in labels if k not in gold_verbs})
    if unknown:
        raise ValueError(f"aligned segments name {len(unknown)} clips that are not benchmark clips, e.g. {unknown[:3]}")
    verb_vocab, noun_vocab = Vocabulary(verbs, config), Vocabulary(nouns, config)
    noun_filter = gold_verbs if config.variant == "paper" else gold_args  # upstream's bug, reproduced

    columns = {kind: ([], []) for kind in KINDS}
    for key in keys:
        verb_keys, noun_keys = labels.get(key, ([], []))
        visual_verbs = sorted({w for k in verb_keys if (w := verb_vocab.visual_word(k, gold_verbs[key])) is not None})
        visual_args = sorted({w for k in noun_keys if (w := noun_vocab.visual_word(k, gold_args[key])) is not None})
        oracle_verbs = set().union(*(verb_vocab.expansion(k) for k in verb_keys)) & set(gold_verbs[key])
        oracle_args = set().union(*(noun_vocab.expansion(k) for k in noun_keys)) & set(noun_filter[key])
        utter_verbs, utter_args = utter[key]
        for kind, (v, a) in (("visual", (visual_verbs, visual_args)),
                             ("fusion-naive", (_union(utter_verbs, visual_verbs), _union(utter_args, visual_args))),
                             ("fusion-oracle", (_union(utter_verbs, oracle_verbs), _union(utter_args, oracle_args)))):
            columns[kind][0].append(v)
            columns[kind][1].append(a)
    without = sum(1 for k in keys if k not in labels)
    log.info("%s/%s: %d clips, %d without aligned segments", source, config.variant, len(keys), without)
    return {system_name(kind, source, config.variant): _tuples_table(system_name(kind, source, config.variant),
                                                                     keys, *columns[kind])
            for kind in KINDS}
