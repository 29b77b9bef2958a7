"""Parsing the benchmark CSV: values as docs/protocol.md §2 says, and errors that name file, line and column."""
import csv

import pytest

from cookproc.data.dataset import (Repair, parse_timestamp, read_benchmark_csv, read_repairs, split_items,
                              video_durations_from_manifest)
from cookproc.core.errors import InputError
from fixtures import HEADER, REPO, n_clips


def write_csv(path, rows, header=HEADER):
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def row(no=1, video="vid1", ts="00:01.5", sentence="add salt .", idx=0, key="1", verbs="Add ; Mix,stir",
        obj="Salt;; pepper ;", loc="", time="", temp="", other=""):
    return [str(no), "soup", f"https://www.youtube.com/watch?v={video}", ts, sentence, str(idx), key, "add salt",
            verbs, obj, loc, time, temp, other]


def test_fixture_parses(tiny_upstream):
    table = read_benchmark_csv(tiny_upstream / "youcook2/reviewed_0812.csv")
    assert table.num_rows == n_clips()
    first_key = table.filter(table.column("is_key")).slice(0, 1).to_pylist()[0]
    assert first_key["gold_verbs"] and first_key["end_s"] > first_key["start_s"]


def test_items_are_split_stripped_lowercased(tmp_path):
    path = write_csv(tmp_path / "b.csv", [row(loc="In the PAN", other="with a spoon; ")])
    clip = read_benchmark_csv(path).to_pylist()[0]
    assert clip["gold_verbs"] == ["add", "mix", "stir"]          # split on ',' and ';'
    assert clip["gold_objects"] == ["salt", "pepper"]            # ';;' and trailing ';' give no empty item
    assert clip["gold_args"] == ["salt", "pepper", "in the pan", "with a spoon"]  # upstream's role order
    assert clip["start_s"] == 1.5 and clip["end_s"] is None      # last clip, video length unknown


def test_duplicates_are_kept_in_lists():
    assert split_items("salt; salt ;Salt") == ["salt", "salt", "salt"]


@pytest.mark.parametrize("text, seconds", [("00:01.5", 1.5), ("12:03.2", 723.2), ("0:03:38", 218.0),
                                           ("1:02:03.5", 3723.5), ("75:00.0", 4500.0)])
def test_timestamps(text, seconds):
    assert parse_timestamp(text) == pytest.approx(seconds)


def test_end_times_follow_next_clip_and_video_length(tmp_path):
    path = write_csv(tmp_path / "b.csv", [row(1, ts="00:00.5", idx=0), row(2, ts="00:04.0", idx=1)])
    clips = read_benchmark_csv(path, video_durations={"vid1": 9.0}).to_pylist()
    assert [(c["start_s"], c["end_s"]) for c in clips] == [(0.5, 4.0), (4.0, 9.0)]


@pytest.mark.parametrize("bad, column, message", [
    (dict(ts="1:2:3:4"), "TimeStamp", "timestamp"),
    (dict(ts="00:75.0"), "TimeStamp", "timestamp"),
    (dict(key="yes"), "IsUsefulSentence", "0 or 1"),
    (dict(key="2"), "IsUsefulSentence", "0 or 1"),
    (dict(idx="1.5"), "RowNumber", "integer"),
    (dict(video="vid1&x"), None, None),  # extra URL parameters are fine
])
def test_bad_cells_name_file_line_and_column(tmp_path, bad, column, message):
    if "idx" in bad:  # the first data row itself is bad
        rows = [row(1, idx=bad["idx"])]
    else:
        rows = [row(1, idx=0), row(2, **{"idx": 1, "ts": "00:02.0", **bad})]
    path = write_csv(tmp_path / "b.csv", rows)
    if column is None:
        assert read_benchmark_csv(path).num_rows == 2
        return
    with pytest.raises(InputError) as err:
        read_benchmark_csv(path)
    assert str(path) in str(err.value) and f"column {column!r}" in str(err.value) and message in str(err.value)
    assert err.value.line == (2 if "idx" in bad else 3)


def test_missing_column(tmp_path):
    header = [h for h in HEADER if h != "Location"]
    path = write_csv(tmp_path / "b.csv", [row()[:10] + row()[11:]], header=header)
    with pytest.raises(InputError, match=r"line 1: missing column\(s\) \['Location'\]"):
        read_benchmark_csv(path)


def test_duplicate_clip(tmp_path):
    path = write_csv(tmp_path / "b.csv", [row(1, idx=0), row(2, idx=0, ts="00:03.0")])
    with pytest.raises(InputError, match=r"line 3, column 'RowNumber': duplicate clip \(video vid1, RowNumber 0\); first seen on line 2"):
        read_benchmark_csv(path)


def test_clips_out_of_order(tmp_path):
    path = write_csv(tmp_path / "b.csv", [row(1, idx=0), row(2, idx=2, ts="00:03.0")])
    with pytest.raises(InputError, match="expected RowNumber 1"):
        read_benchmark_csv(path)


def test_non_utf8_names_the_line(tmp_path):
    path = write_csv(tmp_path / "b.csv", [row(1, idx=0), row(2, idx=1, ts="00:03.0", sentence="add SALT_MARK .")])
    path.write_bytes(path.read_bytes().replace(b"SALT_MARK", b"sal\xe9"))
    with pytest.raises(InputError, match=r"b.csv, line 3: not valid UTF-8"):
        read_benchmark_csv(path)


def test_wrong_field_count(tmp_path):
    path = tmp_path / "b.csv"
    write_csv(path, [row()])
    path.write_text(path.read_text(encoding="utf-8") + "2,soup,only,three\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3: expected 14 fields, found 4"):
        read_benchmark_csv(path)


def test_repairs_are_applied_checked_and_must_match(tmp_path):
    path = write_csv(tmp_path / "b.csv", [row(1, idx=0), row(2, idx=0, ts="00:03.0")])
    fixed = read_benchmark_csv(path, repairs=[Repair(3, "RowNumber", "0", "1", "test")])
    assert fixed.column("clip_idx").to_pylist() == [0, 1]
    with pytest.raises(InputError, match="repair expects '5'"):
        read_benchmark_csv(path, repairs=[Repair(3, "RowNumber", "5", "1", "test")])
    with pytest.raises(InputError, match="matched no cell"):
        read_benchmark_csv(path, repairs=[Repair(3, "RowNumber", "0", "1", "x"), Repair(99, "RowNumber", "0", "1", "y")])


def test_shipped_repair_table_reads():
    repairs = read_repairs(REPO / "workflow/schemas/upstream-repairs.tsv")
    assert [(r.line, r.column, r.old, r.new) for r in repairs] == [(289, "RowNumber", "0", "41")]


def test_manifest_durations(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("a_0001 a 0.0 10.0\na_0002 a 10.0 14.5\nb_0001 b 0.0 3.0\n", encoding="utf-8")
    assert video_durations_from_manifest(path) == {"a": 14.5, "b": 3.0}
    path.write_text("a_0001 a 0.0\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1"):
        video_durations_from_manifest(path)


def test_real_mirror_parses(mirror):
    table = read_benchmark_csv(mirror / "youcook2/reviewed_0812.csv",
                       repairs=read_repairs(REPO / "workflow/schemas/upstream-repairs.tsv"),
                       video_durations=video_durations_from_manifest(mirror / "youcook2/clip_manifest_10s.txt"))
    assert table.num_rows == 15511
    assert len(set(table.column("video_id").to_pylist())) == 352
    assert len(set(table.column("recipe").to_pylist())) == 89
    assert sum(table.column("is_key").to_pylist()) == 3569
    assert table.column("end_s").null_count == 0
