"""Importers: upstream predictions and user systems into the common schemas."""
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cookproc.data.dataset import read_benchmark_csv
from cookproc.core.errors import InputError
from cookproc.core.schemas import KEYCLIPS, TUPLES
from cookproc.evaluation.systems import (import_upstream_keyclips, import_upstream_srl, read_user_keyclips, read_user_tuples,
                              write_jsonl)
from fixtures import VIDEOS, n_clips


@pytest.fixture
def clips(tiny_upstream):
    return read_benchmark_csv(tiny_upstream / "youcook2/reviewed_0812.csv")


def test_upstream_neural_follows_file_order(tiny_upstream, clips):
    table = import_upstream_keyclips(tiny_upstream / "youcook2/reviewed_0812.attach_key_sent_selection.tsv", clips)
    assert table.schema == KEYCLIPS and table.num_rows == n_clips()
    expected = [bool(c[-1]) for _, (_, rows) in sorted(VIDEOS.items()) for c in rows]
    assert table.column("is_key").to_pylist() == expected
    assert set(table.column("system").to_pylist()) == {"upstream-neural"}


def test_upstream_neural_rejects_bad_flag(tiny_upstream, clips):
    path = tiny_upstream / "youcook2/reviewed_0812.attach_key_sent_selection.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3][:-1] + "x"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 4, column 'key_sentence_prediction': expected 0 or 1"):
        import_upstream_keyclips(path, clips)


def test_upstream_srl_key_iff_a_verb_survived(tiny_upstream, clips):
    keys, tuples = import_upstream_srl(tiny_upstream / "youcook2/srl_pred.json", clips)
    assert tuples.schema == TUPLES
    assert keys.column("is_key").to_pylist() == [bool(v) for v in tuples.column("verbs").to_pylist()]
    data = json.loads((tiny_upstream / "youcook2/srl_pred.json").read_text())
    first = tuples.slice(0, 1).to_pylist()[0]
    assert first["verbs"] == data[0][first["video_id"]][0] and first["args"] == data[1][first["video_id"]][0]


def test_upstream_srl_wrong_length(tiny_upstream, clips):
    path = tiny_upstream / "youcook2/srl_pred.json"
    data = json.loads(path.read_text())
    data[0]["vidSoup0003"].pop()
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="video vidSoup0003 has 5 clips, the benchmark 6"):
        import_upstream_srl(path, clips)


def _all_clips(clips):
    return list(zip(clips.column("video_id").to_pylist(), clips.column("clip_idx").to_pylist()))


def test_user_jsonl_and_parquet_round_trip(tmp_path, clips):
    records = [{"video_id": v, "clip_idx": c, "is_key": c % 2 == 1, "score": c / 10} for v, c in _all_clips(clips)]
    jsonl = tmp_path / "mine.keyclips.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    table = read_user_keyclips(jsonl, clips, "user-mine")
    assert table.column("is_key").to_pylist() == [r["is_key"] for r in records]
    parquet = tmp_path / "mine.keyclips.parquet"
    pq.write_table(pa.Table.from_pylist(records), parquet)
    assert read_user_keyclips(parquet, clips, "user-mine").equals(table)
    tuples = [{"video_id": v, "clip_idx": c, "verbs": ["add"], "args": []} for v, c in _all_clips(clips)]
    path = tmp_path / "mine.tuples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in tuples))
    back = read_user_tuples(path, clips, "user-mine")
    assert write_jsonl(back) == "".join(json.dumps(r, sort_keys=True) + "\n" for r in tuples)


@pytest.mark.parametrize("mutate, message", [
    (lambda recs: recs[:-1], "1 benchmark clips have no prediction"),
    (lambda recs: recs + [recs[0]], "appears twice"),
    (lambda recs: recs + [{**recs[0], "video_id": "nope"}], "nope#0 is not in the benchmark"),
    (lambda recs: [{**recs[0], "extra": 1}] + recs[1:], "expected fields"),
    (lambda recs: [{**recs[0], "verbs": "add"}] + recs[1:], "expected a list of strings"),
])
def test_user_tuples_errors_name_the_line(tmp_path, clips, mutate, message):
    records = mutate([{"video_id": v, "clip_idx": c, "verbs": [], "args": []} for v, c in _all_clips(clips)])
    path = tmp_path / "bad.tuples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError, match=message) as err:
        read_user_tuples(path, clips, "user-bad")
    assert str(path) in str(err.value)


def test_user_keyclips_bad_flag(tmp_path, clips):
    path = tmp_path / "k.keyclips.jsonl"
    path.write_text(json.dumps({"video_id": "vidPizza001", "clip_idx": 0, "is_key": "yes"}) + "\n")
    with pytest.raises(InputError, match="line 1: is_key must be"):
        read_user_keyclips(path, clips, "user-k")


def test_outputs_are_written_atomically_with_normal_permissions(tmp_path, clips):
    import os
    import stat

    from cookproc.core.parquet_io import atomic_write_text, write_parquet
    from cookproc.core.schemas import CLIPS

    target = tmp_path / "out" / "clips.parquet"
    write_parquet(clips, target, CLIPS, sort_keys=("video_id", "clip_idx"))
    text = tmp_path / "out" / "t.csv"
    atomic_write_text(text, "a,b\n")
    umask = os.umask(0)
    os.umask(umask)
    for path in (target, text):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in target.parent.iterdir()) == ["clips.parquet", "t.csv"]  # no temp left
    bad = clips.drop_columns(["sentence"])
    with pytest.raises(Exception, match="missing columns \\['sentence'\\]"):
        write_parquet(bad, tmp_path / "out" / "bad.parquet", CLIPS)
    assert not (tmp_path / "out" / "bad.parquet").exists()


# ----------------------------------------------------------------------------- issue 37: user systems

def _keyclip_records(clips):
    return [{"video_id": v, "clip_idx": c, "is_key": c % 2 == 1, "score": 0.5} for v, c in _all_clips(clips)]


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_user_keyclips_refuse_non_finite_scores(tmp_path, clips, bad):
    lines = [json.dumps(r) for r in _keyclip_records(clips)]
    lines[2] = lines[2].replace('"score": 0.5', f'"score": {bad}')
    path = tmp_path / "nan.keyclips.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert bad in path.read_text()
    with pytest.raises(InputError, match=rf"nan\.keyclips\.jsonl, line 3: score must be a finite number, got "
                                         rf"{'-inf' if bad == '-Infinity' else 'inf' if bad == 'Infinity' else 'nan'}$"):
        read_user_keyclips(path, clips, "user-nan")


def test_user_keyclips_refuse_nan_scores_in_parquet_and_huge_integers(tmp_path, clips):
    records = _keyclip_records(clips)
    records[4]["score"] = float("nan")
    path = tmp_path / "nan.keyclips.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    with pytest.raises(InputError, match=r"nan\.keyclips\.parquet, row 5: score must be a finite number, got nan"):
        read_user_keyclips(path, clips, "user-nan")
    lines = [json.dumps(r) for r in _keyclip_records(clips)]
    lines[0] = lines[0].replace('"score": 0.5', '"score": 1' + "0" * 400)
    path = tmp_path / "big.keyclips.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"line 1: score must be a finite number, got 1000.*\.\.\. \(401 characters\)"):
        read_user_keyclips(path, clips, "user-big")


def test_a_nan_score_that_pandas_wrote_as_null_is_an_error_naming_its_row(tmp_path, clips):
    """Issue 46: one NaN score in a user Parquet (pandas writes NaN as null) made the whole system
    binary decisions (AUC and AP "n/a") without a word."""
    import pandas as pd

    records = _keyclip_records(clips)
    records[6]["score"] = float("nan")
    path = tmp_path / "pandas.keyclips.parquet"
    pd.DataFrame(records).to_parquet(path)
    assert pq.read_table(path).column("score").null_count == 1  # NaN became null on the way
    with pytest.raises(InputError, match=r"pandas\.keyclips\.parquet, row 7: this clip has no score \(null, NaN "
                                         r"written as null, or absent\) but the clip on row 1 has one: give every "
                                         r"clip a finite score, or none$"):
        read_user_keyclips(path, clips, "user-pandas")
    # In JSONL too: a score left out of one line.
    lines = [json.dumps(r) for r in _keyclip_records(clips)]
    lines[0] = lines[0].replace(', "score": 0.5', "")
    path = tmp_path / "partial.keyclips.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"partial\.keyclips\.jsonl, line 1: this clip has no score .* the clip on "
                                         r"line 2 has one"):
        read_user_keyclips(path, clips, "user-partial")
    # No score at all is a system of decisions, as before.
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "score"}) + "\n"
                            for r in _keyclip_records(clips)))
    assert read_user_keyclips(path, clips, "user-partial").column("score").null_count == n_clips()


def test_a_json_key_given_twice_is_an_error_naming_the_line(tmp_path, clips):
    """Issue 46: `"is_key": true, "is_key": false` kept the last."""
    lines = [json.dumps(r) for r in _keyclip_records(clips)]
    lines[3] = lines[3].replace('"is_key": true', '"is_key": true, "is_key": false')
    assert '"is_key": true, "is_key": false' in lines[3]
    path = tmp_path / "twice.keyclips.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"twice\.keyclips\.jsonl, line 4: the key 'is_key' appears twice in one "
                                         r"object \(JSON keeps only the last\): give it once$"):
        read_user_keyclips(path, clips, "user-twice")


def test_offending_values_are_echoed_cut_short(tmp_path, clips):
    huge = "v" * 5_000_000
    records = _keyclip_records(clips)
    records[1]["video_id"] = huge
    path = tmp_path / "flood.keyclips.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError) as caught:
        read_user_keyclips(path, clips, "user-flood")
    message = str(caught.value)
    assert len(message) < 300, len(message)
    assert message == f"{path}, line 2: clip {'v' * 80}... (5000002 characters) is not in the benchmark"
    records = _keyclip_records(clips)
    records[0]["is_key"] = "x" * 1000
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(InputError, match=r"line 1: is_key must be true/false or 0/1, got 'x{79}\.\.\. \(1002 characters\)$"):
        read_user_keyclips(path, clips, "user-flood")
    tuples = [{"video_id": v, "clip_idx": c, "verbs": ["a" * 500], "args": []} for v, c in _all_clips(clips)]
    tuples[0]["verbs"] = "b" * 500
    path = tmp_path / "flood.tuples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in tuples))
    with pytest.raises(InputError, match=r"line 1 verbs: expected a list of strings, got 'b{79}\.\.\. \(502 characters\)$"):
        read_user_tuples(path, clips, "user-flood")


def test_an_upper_case_extension_is_read(tmp_path, clips):
    records = _keyclip_records(clips)
    path = tmp_path / "shout.KEYCLIPS.JSONL"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert read_user_keyclips(path, clips, "user-shout").num_rows == len(records)
    parquet = tmp_path / "shout.tuples.Parquet"
    pq.write_table(pa.Table.from_pylist([{"video_id": v, "clip_idx": c, "verbs": [], "args": []}
                                         for v, c in _all_clips(clips)]), parquet)
    assert read_user_tuples(parquet, clips, "user-shout").num_rows == len(records)


def test_the_folder_scan_lists_every_bad_file_in_one_message(tmp_path):
    from cookproc.evaluation.systems import scan_user_systems

    folder = tmp_path / "systems"
    folder.mkdir()
    for name in ("good.keyclips.jsonl", "good.tuples.parquet", "Shout.keyclips.JSONL", "my system.keyclips.jsonl",
                 "-dash.tuples.jsonl", "dup.tuples.jsonl", "dup.tuples.parquet", "dup.keyclips.jsonl",
                 "notes.txt", "mine.keyclips.json", ".gitkeep"):
        (folder / name).write_text("")
    (folder / "sub.keyclips.jsonl").mkdir()
    scan = scan_user_systems(folder)
    assert scan.names("keyclips") == ["Shout", "dup", "good"]  # dup's key clips are fine: only its tuples clash
    assert scan.names("tuples") == ["good"]
    assert scan.files("keyclips", "Shout") == [str(folder / "Shout.keyclips.JSONL")]
    assert scan.files("tuples", "dup") == [str(folder / "dup.tuples.jsonl"), str(folder / "dup.tuples.parquet")]
    assert scan.message() == (
        f"{folder}: 6 problem(s) with user systems (each must be one file <name>.keyclips.jsonl|parquet or "
        "<name>.tuples.jsonl|parquet, <name> matching [A-Za-z0-9][A-Za-z0-9_.-]*); these are left out of the "
        "tables until fixed:\n"
        "  - '-dash.tuples.jsonl': the name '-dash' must start with a letter or digit and hold only letters, "
        "digits, '_', '.' and '-' (rename the file)\n"
        "  - 'mine.keyclips.json': not a system file (move it out of the folder or rename it)\n"
        "  - 'my system.keyclips.jsonl': the name 'my system' must start with a letter or digit and hold only "
        "letters, digits, '_', '.' and '-' (rename the file)\n"
        "  - 'notes.txt': not a system file (move it out of the folder or rename it)\n"
        "  - 'sub.keyclips.jsonl': a folder, not a file\n"
        "  - user system 'dup' (tuples): 2 files, dup.tuples.jsonl, dup.tuples.parquet; keep one")
    assert scan_user_systems(tmp_path / "absent").message() == ""


def test_the_import_job_names_a_missing_or_doubled_system_file(tmp_path):
    from cookproc.evaluation.systems import user_system_file

    assert user_system_file(["d/x.keyclips.jsonl"], "keyclips", "x", "d") == Path("d/x.keyclips.jsonl")
    with pytest.raises(InputError, match=r"^d: user system 'x' \(tuples\): 2 files, x.tuples.jsonl, "
                                         r"x.tuples.parquet; keep one$"):
        user_system_file(["d/x.tuples.parquet", "d/x.tuples.jsonl"], "tuples", "x", "d")
    with pytest.raises(InputError, match=r"^d: user system 'x' \(tuples\): no file x.tuples.jsonl or x.tuples.parquet$"):
        user_system_file([], "tuples", "x", "d")
