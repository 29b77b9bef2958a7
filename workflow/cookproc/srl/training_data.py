"""Span-SRL training data from PropBank EWT skeletons + UD EWT words (official PropBank split).

The PropBank release ships EWT annotation as CoNLL skeletons without words (``[WORD]``); UD EWT
has the same documents with their words. One pass aligns them: document name -> CoNLL-U file,
sentence number -> n-th sentence, token number -> n-th word line (multiword-token ranges and
empty nodes skipped). A sentence is kept only when its token count matches and at least
``min_pos_agreement`` of its PTB tags agree; everything skipped is counted in the report.

Labels are normalised to the conventions of the model the paper used (AllenNLP BERT SRL trained
on OntoNotes / PropBank 2), so that upstream's heuristics behave as they did upstream:
- the ``V`` span is the predicate word only; other words inside a multi-word ``V`` span (verb
  particles in PropBank 3) and ``C-V`` spans become ``ARGM-PRT``;
- ``ARGM-PRP`` (purpose) becomes ``ARGM-PNC``, the OntoNotes label upstream's filter drops.
Other PropBank 3 labels (ARGM-PRR, ARGM-GOL, ARGM-COM, ARG1-DSP, ...) are kept: upstream's filter
already treats any unknown ``ARG*`` label as a kept argument.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from cookproc.core.errors import InputError
from cookproc.srl.bio import OverlapError, spans_to_bio

log = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")
SKELETON_ROOT = Path("propbank-release/data/google/ewt")
SPLIT_LIST = "propbank-release/docs/evaluation/ewt.{split}.txt"
UD_SOURCES = Path("UD_English-EWT/not-to-release/sources")

#: One row per verbal predicate instance.
SRL_TRAINING_DATA = pa.schema(
    [
        pa.field("split", pa.string(), nullable=False),
        pa.field("doc", pa.string(), nullable=False),  # e.g. answers/00/<name>.xml
        pa.field("sent_idx", pa.int32(), nullable=False),
        pa.field("words", pa.list_(pa.string()), nullable=False),
        pa.field("ptb_pos", pa.list_(pa.string()), nullable=False),
        pa.field("predicate_idx", pa.int32(), nullable=False),
        pa.field("predicate_lemma", pa.string(), nullable=False),
        pa.field("frame", pa.string(), nullable=False),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
    ]
)
TRAINING_DATA_KEYS = ("split", "doc", "sent_idx", "predicate_idx")

_OPEN = re.compile(r"\(([^*()]+)\*")


def normalise_role(role: str) -> str:
    """PropBank 3 label -> the OntoNotes-style label upstream's filter expects."""
    if role == "C-V":
        return "ARGM-PRT"
    return role.replace("ARGM-PRP", "ARGM-PNC")


@dataclass
class AlignmentReport:
    documents: int = 0
    documents_missing_words: list[str] = field(default_factory=list)
    documents_missing_skeleton: list[str] = field(default_factory=list)
    sentences: int = 0
    sentences_misaligned: int = 0
    sentence_count_mismatch_docs: list[str] = field(default_factory=list)
    sentences_without_verbal_predicate: int = 0
    predicates_verbal: int = 0
    predicates_nonverbal_skipped: int = 0
    predicates_overlapping_skipped: int = 0
    predicates_v_elsewhere_skipped: int = 0
    multiword_v_spans: int = 0
    roles: Counter = field(default_factory=Counter)
    per_split: Counter = field(default_factory=Counter)

    def as_text(self) -> str:
        lines = [
            f"documents in split lists: {self.documents}",
            f"documents without UD words (skipped): {len(self.documents_missing_words)} {self.documents_missing_words}",
            f"documents without skeleton (skipped): {len(self.documents_missing_skeleton)} {self.documents_missing_skeleton}",
            f"documents whose sentence counts differ: {len(self.sentence_count_mismatch_docs)} {self.sentence_count_mismatch_docs}",
            f"skeleton sentences: {self.sentences}",
            f"sentences not aligned (skipped): {self.sentences_misaligned}",
            f"aligned sentences without a verbal predicate: {self.sentences_without_verbal_predicate}",
            f"verbal predicate instances kept: {self.predicates_verbal}",
            f"non-verbal predicates (nouns, adjectives) skipped: {self.predicates_nonverbal_skipped}",
            f"predicates with overlapping spans skipped: {self.predicates_overlapping_skipped}",
            f"predicates whose V span misses the predicate word skipped: {self.predicates_v_elsewhere_skipped}",
            f"multi-word V spans split into V + ARGM-PRT: {self.multiword_v_spans}",
            "predicate instances per split: " + ", ".join(f"{s} {self.per_split[s]}" for s in SPLITS),
            "sentences per split: " + ", ".join(f"{s} {self.per_split['sent_' + s]}" for s in SPLITS),
            "roles (after normalisation): " + ", ".join(f"{r} {n}" for r, n in sorted(self.roles.items(), key=lambda x: (-x[1], x[0]))),
        ]
        return "\n".join(lines) + "\n"


def read_split_lists(root: Path) -> dict[str, str]:
    """Document (e.g. ``answers/00/x.xml``) -> split, from the official PropBank lists."""
    doc_split: dict[str, str] = {}
    for split in SPLITS:
        path = root / SPLIT_LIST.format(split=split)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            # The dev list names CoNLL-U files (``x.xml.conllu``), train/test the documents (``x.xml``).
            doc = line.strip().removesuffix(".conllu")
            if not doc:
                continue
            if doc in doc_split:
                raise InputError(path, f"document {doc} already listed in split {doc_split[doc]}", line=n)
            doc_split[doc] = split
    return doc_split


def read_skeleton(path: Path) -> list[list[list[str]]]:
    """Sentences of a ``.gold_skel`` file, each a list of whitespace-split token rows."""
    sentences, rows = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            if rows:
                sentences.append(rows)
                rows = []
            continue
        if len(parts) < 8:
            raise InputError(path, f"expected at least 8 columns, got {len(parts)}", line=n)
        if rows and len(parts) != len(rows[0]):
            raise InputError(path, f"expected {len(rows[0])} columns like the sentence's first row, got {len(parts)}", line=n)
        rows.append(parts)
    if rows:
        sentences.append(rows)
    return sentences


def read_conllu(path: Path) -> list[tuple[list[str], list[str]]]:
    """Sentences of a CoNLL-U file as (words, PTB tags); multiword ranges and empty nodes skipped."""
    sentences, words, tags = [], [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            if words:
                sentences.append((words, tags))
                words, tags = [], []
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise InputError(path, f"expected 10 tab-separated CoNLL-U columns, got {len(cols)}", line=n)
        if not cols[0].isdigit():
            continue
        words.append(cols[1])
        tags.append(cols[4])
    if words:
        sentences.append((words, tags))
    return sentences


def column_spans(rows: list[list[str]], col: int, path: Path, sent: int) -> list[tuple[str, int, int]]:
    """Bracketed spans ``(ROLE* ... *)`` of one predicate column."""
    spans, open_role, start = [], None, 0
    for i, row in enumerate(rows):
        cell = row[col]
        opened = _OPEN.findall(cell)
        if len(opened) > 1 or (opened and open_role is not None):
            raise InputError(path, f"sentence {sent}, token {i}: nested spans in {cell!r}")
        if opened:
            open_role, start = opened[0], i
        if cell.endswith(")"):
            if open_role is None:
                raise InputError(path, f"sentence {sent}, token {i}: ')' without an open span in {cell!r}")
            spans.append((open_role, start, i + 1))
            open_role = None
    if open_role is not None:
        raise InputError(path, f"sentence {sent}: span {open_role} never closed in column {col}")
    return spans


class VSpanError(ValueError):
    """A predicate column whose V span is not on the predicate's row (7 nominal cases in EWT)."""


def frame_tags(spans, predicate_idx: int, n_words: int, report: AlignmentReport) -> list[str]:
    """Normalised BIO tags of one predicate (V = predicate word; the rest of a V span -> PRT)."""
    out = []
    for role, start, end in spans:
        if role == "V":
            if not start <= predicate_idx < end:
                raise VSpanError(f"V span [{start}, {end}) does not hold predicate {predicate_idx}")
            out.append(("V", predicate_idx, predicate_idx + 1))
            if end - start > 1:
                report.multiword_v_spans += 1
                if start < predicate_idx:
                    out.append(("ARGM-PRT", start, predicate_idx))
                if predicate_idx + 1 < end:
                    out.append(("ARGM-PRT", predicate_idx + 1, end))
        else:
            out.append((normalise_role(role), start, end))
    return spans_to_bio(n_words, out)


def build_training_data(root: str | Path, *, min_pos_agreement: float = 0.5) -> tuple[list[dict], AlignmentReport]:
    """Rows of ``SRL_TRAINING_DATA`` for every aligned sentence, and the alignment report."""
    root = Path(root)
    report = AlignmentReport()
    doc_split = read_split_lists(root)
    report.documents = len(doc_split)
    rows: list[dict] = []
    for doc in sorted(doc_split):
        split = doc_split[doc]
        skel_path = root / SKELETON_ROOT / f"{doc}.gold_skel"
        genre, name = doc.split("/")[0], doc.split("/")[-1]
        ud_path = root / UD_SOURCES / genre / f"{name}.conllu"
        if not skel_path.is_file():
            report.documents_missing_skeleton.append(doc)
            continue
        if not ud_path.is_file():
            report.documents_missing_words.append(doc)
            continue
        skeleton, ud = read_skeleton(skel_path), read_conllu(ud_path)
        if len(skeleton) != len(ud):
            report.sentence_count_mismatch_docs.append(doc)
        for s, srows in enumerate(skeleton):
            report.sentences += 1
            if s >= len(ud) or len(ud[s][0]) != len(srows):
                report.sentences_misaligned += 1
                continue
            words, ud_pos = ud[s]
            ptb_pos = [r[4] for r in srows]
            agree = sum(a == b for a, b in zip(ptb_pos, ud_pos)) / len(srows)
            if agree < min_pos_agreement:
                report.sentences_misaligned += 1
                continue
            predicates = [i for i, r in enumerate(srows) if r[7] != "-"]
            n_cols = len(srows[0]) - 8
            if n_cols != len(predicates):
                raise InputError(skel_path, f"sentence {s}: {len(predicates)} predicates but {n_cols} argument columns")
            kept = 0
            for k, p in enumerate(predicates):
                if not ptb_pos[p].startswith("VB"):
                    report.predicates_nonverbal_skipped += 1
                    continue
                spans = column_spans(srows, 8 + k, skel_path, s)
                try:
                    tags = frame_tags(spans, p, len(words), report)
                except OverlapError:
                    report.predicates_overlapping_skipped += 1
                    continue
                except VSpanError:
                    report.predicates_v_elsewhere_skipped += 1
                    continue
                for t in tags:
                    if t.startswith("B-"):
                        report.roles[t[2:]] += 1
                rows.append({
                    "split": split, "doc": doc, "sent_idx": s, "words": list(words), "ptb_pos": ptb_pos,
                    "predicate_idx": p, "predicate_lemma": srows[p][6], "frame": srows[p][7], "tags": tags,
                })
                kept += 1
                report.per_split[split] += 1
                report.predicates_verbal += 1
            if kept:
                report.per_split["sent_" + split] += 1
            else:
                report.sentences_without_verbal_predicate += 1
    return rows, report
