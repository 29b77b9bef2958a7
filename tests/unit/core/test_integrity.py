"""Intermediates cannot rot silently: damaged Parquet is an error naming the file (and a workflow
output is moved aside to be rebuilt), never different data; tagger files load without pickle code."""
import hashlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq
import pytest
import torch

from cookproc.core import integrity
from cookproc.core.errors import InputError, IntermediateError
from cookproc.core.parquet_io import read_parquet, read_table, write_parquet, wrong_columns
from cookproc.core.schemas import SchemaError, conform
from cookproc.srl.predict import load_tagger
from cookproc.srl.tagger import HeadConfig, Tagger, Vocab
from cookproc.srl.training import save_tagger
from fixtures import REPO

# Every kind of column the workflow writes: strings (dictionary-encoded), ints, bools, nullable
# floats and ints, string lists and a fixed-size float32 vector.
SCHEMA = pa.schema([
    pa.field("video_id", pa.string(), nullable=False),
    pa.field("clip_idx", pa.int32(), nullable=False),
    pa.field("is_key", pa.bool_(), nullable=False),
    pa.field("score", pa.float64(), nullable=True),
    pa.field("fold", pa.int32(), nullable=True),
    pa.field("verbs", pa.list_(pa.string()), nullable=False),
    pa.field("embedding", pa.list_(pa.float32(), 4), nullable=False),
])


def sample_table(n=60) -> pa.Table:
    rng = np.random.default_rng(7)
    rows = [{"video_id": f"vid{i % 5}", "clip_idx": i, "is_key": bool(i % 3), "score": None if i % 4 == 0 else i / 7,
             "fold": None if i % 5 == 0 else i % 3, "verbs": ["add", "stir"][: i % 3],
             "embedding": rng.normal(size=4).astype(np.float32).tolist()} for i in range(n)]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def written(path) -> pa.Table:
    """Write the sample table the workflow's way and return it as written (conformed, sorted)."""
    write_parquet(sample_table(), path, SCHEMA, sort_keys=["video_id", "clip_idx"])
    return conform(sample_table(), SCHEMA, what="sample").sort_by([("video_id", "ascending"), ("clip_idx", "ascending")])


def chunk_span(column_meta) -> tuple[int, int]:
    """First and one-past-last byte of a column chunk (its dictionary page, if any, comes first)."""
    start = column_meta.dictionary_page_offset or column_meta.data_page_offset
    return start, start + column_meta.total_compressed_size


def flip_positions(path: Path) -> dict[str, list[int]]:
    """Byte positions to damage, by region: page headers and bodies of dictionary and data pages,
    the footer (schema, offsets, key-value metadata), its length and both magic numbers."""
    size = path.stat().st_size
    meta = pq.ParquetFile(path).metadata
    footer_len = int.from_bytes(path.read_bytes()[-8:-4], "little")
    regions = {"dictionary page": [], "data page": [], "footer": [], "footer length and magic": [],
               "leading magic": [0, 1, 2, 3]}
    for g in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            col = meta.row_group(g).column(c)
            if col.has_dictionary_page:
                start, end = col.dictionary_page_offset, col.data_page_offset
                regions["dictionary page"] += [start + 1, start + 6, (start + end) // 2, end - 1]
            start, end = col.data_page_offset, chunk_span(col)[1]
            regions["data page"] += [start + 1, start + 6, (start + end) // 2, end - 1]
    footer_start = size - 8 - footer_len
    regions["footer"] = sorted(set(np.linspace(footer_start, size - 9, 40).astype(int).tolist()))
    regions["footer length and magic"] = list(range(size - 8, size))
    return regions


def test_a_flipped_byte_anywhere_fails_naming_the_file_or_reads_back_the_original(tmp_path):
    path = tmp_path / "clean.parquet"
    original = written(path)
    data = path.read_bytes()
    regions = flip_positions(path)
    assert all(regions.values()) and sum(map(len, regions.values())) >= 16
    damaged = tmp_path / "damaged.parquet"
    outcomes = {}
    for region, positions in regions.items():
        for pos in positions:
            for mask in (0x01, 0x80):
                copy = bytearray(data)
                copy[pos] ^= mask
                damaged.write_bytes(bytes(copy))
                try:
                    table = read_table(damaged)
                except IntermediateError as exc:
                    assert str(damaged) in str(exc) and "is damaged" in str(exc)
                    outcomes[region, pos, mask] = "error"
                    continue
                # Not detected: then the values must be exactly those written.
                assert conform(table, SCHEMA, what=str(damaged)).equals(original), (region, pos, mask)
                assert table.to_pylist() == original.to_pylist()
                outcomes[region, pos, mask] = "same"
    # Damage is caught in every region; in the magic numbers and the footer length, always.
    for region in regions:
        assert "error" in {o for (r, _, _), o in outcomes.items() if r == region}, region
    for (region, _, _), outcome in outcomes.items():
        if "magic" in region:
            assert outcome == "error", region


def test_a_truncated_file_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "clean.parquet"
    written(path)
    data = path.read_bytes()
    cut = tmp_path / "cut.parquet"
    for length in (0, 4, len(data) // 2, len(data) - 9, len(data) - 1):
        cut.write_bytes(data[:length])
        with pytest.raises(IntermediateError, match=str(cut)):
            read_table(cut)


def test_footer_damage_that_changes_values_is_caught_by_the_column_digests(tmp_path):
    """A flipped byte in the footer's schema renames a column without touching any page: page
    checksums cannot tell, the digests can."""
    path = tmp_path / "t.parquet"
    written(path)
    data = path.read_bytes()
    footer = data[-8 - int.from_bytes(data[-8:-4], "little"):-8]
    pos = len(data) - 8 - len(footer) + footer.index(b"clip_idx")
    copy = bytearray(data)
    copy[pos] ^= 0x01  # clip_idx -> blip_idx in the Parquet schema
    path.write_bytes(bytes(copy))
    with pytest.raises(IntermediateError, match="not those it was written with"):
        read_table(path)


def test_a_changed_provenance_entry_is_damage_not_a_different_history(tmp_path):
    """The provenance text sits in the footer, where no page checksum reaches: its digest, stored
    with the column digests, makes a changed byte there an error for readers of data and of lineage."""
    from cookproc.core import provenance

    path = tmp_path / "t.parquet"
    written(path)
    data = path.read_bytes()
    entry = pq.read_metadata(path).metadata[provenance.PROVENANCE_KEY]
    pos = data.rindex(entry) + entry.index(b'"format"') + 2  # "format" -> "gormat": still valid JSON
    copy = bytearray(data)
    copy[pos] ^= 0x01
    path.write_bytes(bytes(copy))
    with pytest.raises(IntermediateError, match="footer entry 'cookproc.provenance' differs"):
        read_table(path)
    with pytest.raises(provenance.ProvenanceError, match="differs from what was written"):
        provenance.stored_provenance(pq.read_metadata(path).metadata)


def test_a_removed_provenance_entry_is_damage_and_files_written_before_it_was_covered_still_read(tmp_path):
    from cookproc.core import provenance

    path = tmp_path / "t.parquet"
    table = written(path)
    metadata = dict(pq.read_metadata(path).metadata)
    stripped = {k: v for k, v in metadata.items() if k != provenance.PROVENANCE_KEY}
    pq.write_table(table.replace_schema_metadata(stripped), path, write_page_checksum=True)
    with pytest.raises(IntermediateError, match="footer entry 'cookproc.provenance' is missing"):
        read_table(path)
    # The digest entry of earlier versions listed columns only: such a file reads as before.
    older = {**integrity.digest_metadata(table), provenance.PROVENANCE_KEY: metadata[provenance.PROVENANCE_KEY]}
    pq.write_table(table.replace_schema_metadata(older), path, write_page_checksum=True)
    assert read_table(path).to_pylist() == table.to_pylist()
    assert provenance.stored_provenance(pq.read_metadata(path).metadata)["format"] == provenance.PROVENANCE_FORMAT


def test_a_damaged_workflow_output_is_moved_aside_and_the_message_says_how_to_rebuild(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("results/keyclips/sys.parquet")
    written(path)
    start, end = chunk_span(pq.ParquetFile(path).metadata.row_group(0).column(1))
    copy = bytearray(path.read_bytes())
    copy[(start + end) // 2] ^= 0xFF
    path.write_bytes(bytes(copy))
    with pytest.raises(IntermediateError) as caught:
        read_parquet(path, SCHEMA)
    message = str(caught.value)
    assert message.startswith("results/keyclips/sys.parquet is damaged (")
    assert "moved it aside to results/keyclips/sys.parquet.damaged" in message and "run `snakemake`" in message
    assert not path.exists()  # so the next run rebuilds it
    assert Path("results/keyclips/sys.parquet.damaged").read_bytes() == bytes(copy)  # nothing lost
    assert caught.value.moved_to == "results/keyclips/sys.parquet.damaged"

    # Damaged again: the first damaged copy is kept, the second goes beside it.
    written(path)
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(IntermediateError, match=r"sys\.parquet\.damaged\.2"):
        read_table(path)
    assert Path("results/keyclips/sys.parquet.damaged").read_bytes() == bytes(copy)


def test_when_it_cannot_be_moved_the_message_gives_the_forcerun_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("results/x.parquet")
    written(path)
    path.write_bytes(path.read_bytes()[:100])

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")
    monkeypatch.setattr(integrity.os, "link", refuse)
    monkeypatch.setattr(integrity.os, "rename", refuse)
    with pytest.raises(IntermediateError, match=r"rebuild it with `snakemake --forcerun results/x\.parquet`"):
        read_table(path)
    assert path.exists()


def test_damaged_files_outside_results_stay_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("data/systems/mine.keyclips.parquet")
    written(path)
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(IntermediateError, match="data/systems/mine.keyclips.parquet is damaged .*replace it"):
        read_table(path)
    assert path.exists() and not Path(str(path) + ".damaged").exists()


def test_a_missing_column_outside_results_is_an_input_error_and_moves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("data/t.parquet")
    written(path)
    with pytest.raises(InputError, match=r"data/t\.parquet: has no column\(s\) \['nope'\]") as caught:
        read_table(path, ["video_id", "nope"])
    assert not isinstance(caught.value, IntermediateError)
    assert path.exists()


def test_a_workflow_output_lacking_a_column_is_damage_and_moved_aside(tmp_path, monkeypatch):
    """Another schema under results/ (an older workflow's file, or one swapped in) would fail every
    later run the same way: it goes aside, to be rebuilt."""
    monkeypatch.chdir(tmp_path)
    path = Path("results/t.parquet")
    written(path)
    with pytest.raises(IntermediateError, match=r"results/t\.parquet is damaged \(has no column\(s\) \['nope'\].*"
                                                r"moved it aside to results/t\.parquet\.damaged"):
        read_table(path, ["video_id", "nope"])
    assert not path.exists()
    # Readers that check the columns first (column_names) do the same.
    written(path)
    with pytest.raises(IntermediateError, match=r"missing columns \['x'\].*moved it aside"):
        wrong_columns(path, "missing columns ['x']")
    assert not path.exists()
    written(Path("data/t.parquet"))
    with pytest.raises(InputError, match=r"^data/t\.parquet: missing columns") as caught:
        wrong_columns(Path("data/t.parquet"), "missing columns ['x']")
    assert not isinstance(caught.value, IntermediateError) and Path("data/t.parquet").exists()


def swapped_in(path: Path) -> bytes:
    """The issue's case: a valid Parquet file of the right schema, its digests removed and every
    ``is_key`` flipped, written over a workflow output with plain pyarrow."""
    table = read_table(path)
    flipped = table.set_column(table.column_names.index("is_key"), "is_key",
                               pa.compute.invert(table.column("is_key")))
    pq.write_table(flipped.replace_schema_metadata(None), path, write_page_checksum=True)
    return path.read_bytes()


def test_a_workflow_output_without_digests_is_damage_not_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = Path("results/keyclips/srl-heur-spacy.parquet")
    written(path)
    swapped = swapped_in(path)
    with pytest.raises(IntermediateError) as caught:
        read_parquet(path, SCHEMA)
    assert str(caught.value) == (
        "results/keyclips/srl-heur-spacy.parquet is damaged (it carries no column digests, so this workflow did "
        "not write it as it is): moved it aside to results/keyclips/srl-heur-spacy.parquet.damaged; run "
        "`snakemake` again to rebuild it")
    assert not path.exists() and Path(str(path) + ".damaged").read_bytes() == swapped
    # Asking for some columns only is refused alike.
    written(path)
    swapped_in(path)
    with pytest.raises(IntermediateError, match="no column digests"):
        read_table(path, ["video_id"])


def test_a_users_file_needs_no_digests_and_is_never_moved(tmp_path, monkeypatch):
    """User systems are placed deliberately: read as before, wherever they lie."""
    monkeypatch.chdir(tmp_path)
    for path in (Path("data/systems/mine.keyclips.parquet"), Path("results/mine.keyclips.parquet")):
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(sample_table(), path)
        assert read_table(path, user_file=True).equals(sample_table())
        path.write_bytes(path.read_bytes()[:-1])
        with pytest.raises(IntermediateError, match=f"{path} is damaged .*it is your file.*replace it"):
            read_table(path, user_file=True)
        assert path.exists() and not Path(str(path) + ".damaged").exists()


def test_a_workflow_output_of_another_schema_is_moved_aside(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = pa.schema([pa.field("video_id", pa.string(), nullable=False), pa.field("n", pa.int64(), nullable=False)])
    path = Path("results/keyclips/x.parquet")
    write_parquet(pa.table({"video_id": ["a"], "n": [1]}), path, other)
    with pytest.raises(IntermediateError) as caught:
        read_parquet(path, SCHEMA)
    assert str(caught.value).startswith(
        "results/keyclips/x.parquet is damaged (not the schema this workflow reads: missing columns ['clip_idx', ")
    assert str(caught.value).endswith("moved it aside to results/keyclips/x.parquet.damaged; run `snakemake` "
                                      "again to rebuild it")
    assert not path.exists()
    # Elsewhere: the schema error as before, the file left where it is.
    path = Path("data/x.parquet")
    write_parquet(pa.table({"video_id": ["a"], "n": [1]}), path, other)
    with pytest.raises(SchemaError, match=r"^data/x\.parquet: missing columns"):
        read_parquet(path, SCHEMA)
    assert path.exists()


def test_read_table_reads_the_columns_asked_for_in_order_without_digest_metadata(tmp_path):
    path = tmp_path / "t.parquet"
    original = written(path)
    table = read_table(path, ["fold", "video_id"])
    assert table.column_names == ["fold", "video_id"]
    assert table.equals(original.select(["fold", "video_id"]))
    assert table.schema.metadata is None


def test_files_without_digests_or_page_checksums_still_read(tmp_path):
    """User files (and outputs of other tools) carry neither; they read with what they have."""
    table = sample_table()
    plain = tmp_path / "plain.parquet"
    pq.write_table(table, plain)
    assert read_table(plain).equals(table)
    checked = tmp_path / "checked.parquet"
    pq.write_table(table, checked, write_page_checksum=True)
    _, end = chunk_span(pq.ParquetFile(checked).metadata.row_group(0).column(0))
    copy = bytearray(checked.read_bytes())
    copy[end - 2] ^= 0x10
    checked.write_bytes(bytes(copy))
    with pytest.raises(IntermediateError, match="CRC"):
        read_table(checked)


def test_the_same_input_writes_byte_identical_files_whatever_its_chunking_and_hash_seed(tmp_path):
    table = sample_table()
    rechunked = pa.concat_tables([table.slice(0, 17), table.slice(17, 1), table.slice(18)])
    write_parquet(table, tmp_path / "a.parquet", SCHEMA, sort_keys=["video_id", "clip_idx"])
    write_parquet(rechunked, tmp_path / "b.parquet", SCHEMA, sort_keys=["video_id", "clip_idx"])
    # A fresh process with another hash seed, given the same rows through a plain Parquet file.
    pq.write_table(table, tmp_path / "rows.parquet", row_group_size=25)
    (tmp_path / "schema.arrow").write_bytes(SCHEMA.serialize().to_pybytes())
    code = ("import pyarrow as pa, pyarrow.parquet as pq; from cookproc.core.parquet_io import write_parquet; "
            f"schema = pa.ipc.read_schema(pa.py_buffer(open({str(tmp_path / 'schema.arrow')!r}, 'rb').read())); "
            f"write_parquet(pq.read_table({str(tmp_path / 'rows.parquet')!r}), {str(tmp_path / 'c.parquet')!r}, "
            "schema, sort_keys=['video_id', 'clip_idx'])")
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(REPO / "workflow"))
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True)
    digests = {name: hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
               for name in ("a.parquet", "b.parquet", "c.parquet")}
    assert len(set(digests.values())) == 1, digests


def test_column_digests_ignore_layout_but_see_every_value():
    values = pa.array([1.5, None, -0.0, 3.0], pa.float64())
    # The same column with garbage under the null slot, and split into chunks.
    garbage = np.array([1.5, 12345.0, -0.0, 3.0]).tobytes()
    validity = values.buffers()[0]
    same = pa.Array.from_buffers(pa.float64(), 4, [validity, pa.py_buffer(garbage)], null_count=1)
    assert same.to_pylist() == values.to_pylist()
    digest = integrity.column_digest(values)
    assert integrity.column_digest(same) == digest
    assert integrity.column_digest(pa.chunked_array([values.slice(0, 1), values.slice(1)])) == digest
    assert integrity.column_digest(pa.array([1.5, None, 0.0, 3.0])) != digest  # -0.0 is not 0.0
    assert integrity.column_digest(pa.array([1.5, 0.0, -0.0, 3.0])) != digest  # null is not 0.0
    assert integrity.column_digest(values.cast(pa.float32())) != digest       # the type counts
    lists = pa.array([["a"], None, [], ["b", "c"]])
    assert integrity.column_digest(pa.chunked_array([lists.slice(0, 3), lists.slice(3)])) == \
        integrity.column_digest(lists)
    assert integrity.column_digest(pa.array([["a"], [], None, ["b", "c"]])) != integrity.column_digest(lists)
    assert integrity.column_digest(pa.array([["a"], None, [], ["bc"]])) != integrity.column_digest(lists)


# ----------------------------------------------------------------------------- tagger files

def tiny_tagger(seed=0) -> Tagger:
    torch.manual_seed(seed)
    labels = Vocab(["O", "B-V", "I-V", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1"])
    tagger = Tagger(HeadConfig(n_layers=2, dim=8, hidden=4, proj=8, dropout=0.0),
                    Vocab.build(["VB", "NN", "DT"]), Vocab.build(["ROOT", "dobj"]), Vocab.build(["self", "child"]),
                    labels, "tiny-encoder")
    tagger.add_heads([Tagger(tagger.cfg, tagger.tags, tagger.deps, tagger.rels, labels, "tiny-encoder")])
    return tagger


def test_a_saved_tagger_loads_with_weights_only(tmp_path):
    tagger = tiny_tagger()
    path = tmp_path / "tagger.pt"
    save_tagger(tagger, path)
    torch.load(path, map_location="cpu", weights_only=True)  # the restricted unpickler accepts it
    again = load_tagger(path)
    assert again.cfg == tagger.cfg and again.encoder == "tiny-encoder"
    assert again.predicate_tags == tagger.predicate_tags and again.labels.items == tagger.labels.items
    assert len(again.heads) == 2
    for head, loaded in zip(tagger.heads, again.heads):
        for (name, a), (_, b) in zip(head.state_dict().items(), loaded.state_dict().items()):
            assert torch.equal(a, b), name


def test_saving_refuses_a_state_that_the_safe_loader_would_refuse(tmp_path, monkeypatch):
    tagger = tiny_tagger()
    monkeypatch.setattr(tagger, "state", lambda: {"format": "x", "path": Path("/x")})
    with pytest.raises(TypeError, match=r"state\['path'\] \(PosixPath\)"):
        save_tagger(tagger, tmp_path / "tagger.pt")
    assert not (tmp_path / "tagger.pt").exists()


class _Payload:
    """Unpickling this runs a shell command that creates ``marker``."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def test_a_pickle_payload_in_a_tagger_file_is_refused_not_run(tmp_path):
    marker = tmp_path / "pwned"
    state = dict(tiny_tagger().state(), cfg=_Payload(marker))
    path = tmp_path / "evil.pt"
    torch.save(state, path)
    with pytest.raises(InputError, match=rf"{path}: refused: not a tagger of tensors and plain values"):
        load_tagger(path)
    assert not marker.exists()
    # The payload is live: the unrestricted unpickler would have run it.
    torch.load(path, weights_only=False)
    assert marker.exists()


def test_a_damaged_tagger_file_is_an_error_naming_it(tmp_path):
    path = tmp_path / "tagger.pt"
    save_tagger(tiny_tagger(), path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(InputError, match=rf"{path}: unreadable tagger file"):
        load_tagger(path)
