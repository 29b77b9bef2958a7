"""Parses are deterministic: the spaCy backend twice gives byte-identical Parquet."""
import hashlib

import pyarrow as pa

from cookproc.core.parquet_io import write_parquet
from cookproc.srl.parses import PARSE_KEYS, SRL_PARSES, clip_parses, parse_rows
from cookproc.srl.predict import label_with_spacy
from cookproc.srl.syntax import parse_texts, rejoin_clitics

TEXTS = ["so now we 're gon na add the onions to the pan.", "chop the garlic and put it in a bowl.",
         "i do n't know."]


def write(tmp_path, name):
    rows = []
    for i, parses in enumerate(label_with_spacy(TEXTS)):
        rows += parse_rows("spacy", "vid", i, parses)
    path = tmp_path / name
    write_parquet(pa.Table.from_pylist(rows, schema=SRL_PARSES), path, SRL_PARSES, sort_keys=PARSE_KEYS)
    return path


def test_spacy_parses_are_deterministic_and_sensible(tmp_path):
    a, b = write(tmp_path, "a.parquet"), write(tmp_path, "b.parquet")
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
    import pyarrow.parquet as pq
    parses = clip_parses(pq.read_table(a))
    verbs = [c.text for f in parses[("vid", 1)] for c in f if c.role == "V"]
    assert verbs == ["chop", "put"]
    assert "gon" not in [c.text for f in parses[("vid", 0)] for c in f if c.role == "V"]


def test_clitics_are_rejoined_for_spacy():
    assert rejoin_clitics("i 'm sure we do n't , gon na") == "i'm sure we don't , gonna"
    words = parse_texts(["we 're gon na"])[0].words
    assert words == ["we", "'re", "gon", "na"]
