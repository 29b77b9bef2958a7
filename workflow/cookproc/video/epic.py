"""EPIC-Kitchens-55 class lists and the words a class stands for.

``EPIC_verb_classes.csv`` / ``EPIC_noun_classes.csv`` (upstream's copies): ``<id>,class_key,<members>``
where members is a Python list literal. Verb members join words with ``-`` (``turn-on``); noun
members write a modifier after a colon (``board:chopping`` = "chopping board").
"""
from __future__ import annotations

import ast
import csv
import functools
from dataclasses import dataclass
from pathlib import Path

from cookproc.core.errors import InputError

VERB, NOUN = "verb", "noun"


def verb_words(token: str) -> str:
    """``turn-on`` -> ``turn on`` (upstream: ``w.replace('-', ' ')``)."""
    return token.replace("-", " ")


def noun_words(token: str) -> str:
    """``board:chopping`` -> ``chopping board`` (upstream: reversed ``:``-parts joined by spaces)."""
    return " ".join(token.split(":")[::-1])


def to_words(kind: str, token: str) -> str:
    return verb_words(token) if kind == VERB else noun_words(token)


@dataclass(frozen=True)
class EpicClasses:
    """One EPIC class list: ``keys[i]`` is class i's key, ``members[key]`` its member tokens in file
    order (duplicates removed, first kept)."""

    kind: str
    keys: tuple[str, ...]
    members: dict[str, tuple[str, ...]]

    def __len__(self) -> int:
        return len(self.keys)

    def index(self, key: str) -> int:
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"{key!r} is not an EPIC {self.kind} class key") from None

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {k: i for i, k in enumerate(self.keys)}

    def key_words(self, key: str) -> str:
        """The class key as words (``board:chopping`` -> ``chopping board``)."""
        return to_words(self.kind, key)

    def member_words(self, key: str) -> tuple[str, ...]:
        """The class's member tokens as words, file order, duplicates removed."""
        return tuple(dict.fromkeys(to_words(self.kind, m) for m in self.members[key]))


def read_epic_classes(path: str | Path, kind: str) -> EpicClasses:
    """Read an EPIC class CSV; ids must be 0..n-1 in order (they index the model's logits)."""
    if kind not in (VERB, NOUN):
        raise ValueError(f"kind must be {VERB!r} or {NOUN!r}, not {kind!r}")
    path = Path(path)
    members_column = f"{kind}s"
    keys: list[str] = []
    members: dict[str, tuple[str, ...]] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        expected = {f"{kind}_id", "class_key", members_column}
        if reader.fieldnames is None or not expected <= set(reader.fieldnames):
            raise InputError(path, f"expected columns {sorted(expected)}, found {reader.fieldnames}", line=1)
        for row in reader:
            line = reader.line_num
            try:
                class_id = int(row[f"{kind}_id"])
            except (TypeError, ValueError):
                raise InputError(path, f"class id {row[f'{kind}_id']!r} is not an integer", line=line,
                                 column=f"{kind}_id") from None
            if class_id != len(keys):
                raise InputError(path, f"class ids must run 0,1,2,... in order; expected {len(keys)}, "
                                 f"found {class_id}", line=line, column=f"{kind}_id")
            key = (row["class_key"] or "").strip()
            if not key or key in members:
                raise InputError(path, f"empty or repeated class key {key!r}", line=line, column="class_key")
            try:
                tokens = ast.literal_eval(row[members_column] or "")
            except (ValueError, SyntaxError):
                tokens = None
            if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) and t.strip() for t in tokens):
                raise InputError(path, f"expected a non-empty Python list of strings, found "
                                 f"{row[members_column]!r}", line=line, column=members_column)
            keys.append(key)
            members[key] = tuple(dict.fromkeys(t.strip() for t in tokens))
    if not keys:
        raise InputError(path, "no classes")
    return EpicClasses(kind, tuple(keys), members)
