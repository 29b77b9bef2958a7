"""Training inputs (transcripts, cooking lexicon) and the per-iteration training log table."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pyarrow as pa

from cookproc.core.errors import InputError

from .segmenter import IterationStats

#: One row per hard-EM iteration (no timings: the file must be the same on every run).
ITERATIONS = pa.schema(
    [
        pa.field("iteration", pa.int32(), nullable=False),
        # Sum of the best labellings' log-probabilities under the model the E-step used.
        pa.field("log_likelihood", pa.float64(), nullable=False),
        # Hard EM's objective (cookproc.kiddon.model.Model.objective); null in iteration 1, whose
        # lexicon model scores verbs only.
        pa.field("objective", pa.float64(), nullable=True),
        pa.field("n_sentences", pa.int64(), nullable=False),
        pa.field("n_parsed", pa.int64(), nullable=False),
        pa.field("n_predicates", pa.int64(), nullable=False),
        pa.field("candidate_verbs", pa.int32(), nullable=False),
        pa.field("active_verbs", pa.int32(), nullable=False),
        pa.field("p_predicates", pa.float64(), nullable=False),
    ]
)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not UTF-8 text ({exc.reason})", line=line) from exc


def read_transcripts(folder: str | Path) -> list[list[str]]:
    """Every ``*.txt`` transcript of ``folder`` (sorted by name) as its list of lines."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "expected a folder of transcripts (<youtube_id>.txt)")
    paths = sorted(folder.glob("*.txt"))
    if not paths:
        raise InputError(folder, "no transcript (*.txt) found")
    return [_read_lines(p) for p in paths]


def read_lexicon_words(path: str | Path) -> list[str]:
    """The cooking lexicon: one word a line (blank lines skipped), lowercased."""
    path = Path(path)
    words = []
    for number, line in enumerate(_read_lines(path), start=1):
        word = line.strip()
        if not word:
            continue
        if len(word.split()) != 1:
            raise InputError(path, f"expected one word, found {word!r}", line=number)
        words.append(word.lower())
    if not words:
        raise InputError(path, "the lexicon is empty")
    return words


def iterations_table(history: Sequence[IterationStats]) -> pa.Table:
    rows = [{name: getattr(stats, name) for name in ITERATIONS.names} for stats in history]
    return pa.Table.from_pylist(rows, schema=ITERATIONS)
