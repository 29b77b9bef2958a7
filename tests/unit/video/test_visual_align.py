"""Segments to clips: the alignment rule and its edge cases, upstream's clip timing, and the
importer of upstream's TSM predictions."""
from __future__ import annotations

import csv
import math

import pyarrow as pa
import pytest

from cookproc.core.errors import InputError
from cookproc.core.schemas import ALIGNED_SEGMENTS, CLIPS, TSM_SEGMENTS
from cookproc.video.align import ClipSpan, align, spans_from_clips, spans_upstream, upstream_timestamp
from cookproc.video.epic import EpicClasses
from cookproc.video.segments import import_upstream, read_manifest


def segments_table(spans, video="v1"):
    """Top-1 segments [start, end] numbered from 1; verb/noun keys name the segment."""
    rows = []
    for i, (start, end) in enumerate(spans, start=1):
        rows.append({"video_id": video, "segment_idx": i, "start_s": float(start), "end_s": float(end), "rank": 1,
                     "verb_class": i, "verb_key": f"v{i}", "verb_score": None, "noun_class": i,
                     "noun_key": f"n{i}", "noun_score": None})
    return pa.Table.from_pylist(rows, schema=TSM_SEGMENTS)


def aligned_ids(table):
    out = {}
    for r in table.to_pylist():
        out.setdefault(r["clip_idx"], []).append(r["segment_idx"])
    return out


FIVE_S = segments_table([(0, 5), (5, 10), (10, 15), (15, 20), (20, 23)])


def test_segments_meeting_a_clip_boundary_or_inside_the_clip_belong_to_it():
    spans = [ClipSpan("v1", 0, 1.0, 7.0), ClipSpan("v1", 1, 7.0, 10.0), ClipSpan("v1", 2, 10.0, 21.0),
             ClipSpan("v1", 3, 21.0, math.inf)]
    table = align(FIVE_S, spans)
    assert table.schema == ALIGNED_SEGMENTS
    assert aligned_ids(table) == {
        0: [1, 2],  # both boundaries fall inside segments 1 and 2
        1: [2, 3],  # end 10.0 touches segment 3's start: inclusive, as upstream
        2: [2, 3, 4, 5],  # start 10.0 touches segment 2's end; segments 3-4 inside; end inside 5
        3: [5],  # the last clip runs to the video's end
    }


def test_clip_inside_one_segment_gaps_overlaps_and_other_videos():
    spans = [ClipSpan("v1", 0, 11.0, 12.0),  # wholly inside segment 3
             ClipSpan("v1", 1, 30.0, 40.0),  # after every segment (gap): nothing
             ClipSpan("v1", 2, 4.0, 4.0),  # zero length: the segment holding it
             ClipSpan("v2", 0, 0.0, math.inf)]  # a video without segments: nothing
    assert aligned_ids(align(FIVE_S, spans)) == {0: [3], 2: [1]}
    overlapping = segments_table([(0, 5), (3, 8), (8, 9)])  # segments may overlap each other
    assert aligned_ids(align(overlapping, [ClipSpan("v1", 0, 4.0, 8.5)])) == {0: [1, 2, 3]}


def test_spans_from_clips_open_last_clip():
    clips = pa.table({"video_id": ["a", "a"], "clip_idx": pa.array([0, 1], pa.int32()),
                      "start_s": [0.5, 3.0], "end_s": [3.0, None]})
    assert spans_from_clips(clips) == [ClipSpan("a", 0, 0.5, 3.0), ClipSpan("a", 1, 3.0, math.inf)]


def test_upstream_timestamp_reading_is_reproduced():
    assert upstream_timestamp("03:28.6") == pytest.approx(208.6)
    assert upstream_timestamp("0:03:38") == 3.0  # H:MM:SS read as minute 0, second 3 (upstream's bug)
    assert upstream_timestamp("1:05:00") == 65.0


def write_benchmark_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["No", "VideoUrl", "TimeStamp", "Sentence"])
        for i, (video, stamp, sentence) in enumerate(rows, start=1):
            writer.writerow([i, f"https://www.youtube.com/watch?v={video}", stamp, sentence])


def clips_table(rows):
    """CLIPS rows for (video_id, clip_idx, source_line); other columns filled in."""
    return pa.Table.from_pylist([{
        "video_id": v, "recipe": "r", "clip_idx": c, "start_s": 0.0, "end_s": None, "sentence": "s", "is_key": False,
        "gold_verbs": [], "gold_args": [], "gold_objects": [], "gold_locations": [], "gold_times": [],
        "gold_temperatures": [], "gold_others": [], "key_steps": "", "source_line": line} for v, c, line in rows],
        schema=CLIPS)


def test_upstream_spans_follow_csv_order_and_key_by_source_line(tmp_path):
    path = tmp_path / "bench.csv"
    # A multi-line sentence shifts the following records' first lines: the join must follow it.
    write_benchmark_csv(path, [("vidA", "00:01.0", "one"), ("vidA", "0:00:20", "two\nlines"),
                               ("vidA", "00:30.5", "three"), ("vidB", "00:02.0", "other video")])
    clips = clips_table([("vidA", 0, 2), ("vidA", 1, 3), ("vidA", 2, 5), ("vidB", 0, 6)])
    assert spans_upstream(path, clips) == [
        ClipSpan("vidA", 0, 1.0, 0.0),  # the next row's 0:00:20 reads as 0 s
        ClipSpan("vidA", 1, 0.0, 30.5),
        ClipSpan("vidA", 2, 30.5, 1_000_000.0),  # last of its video
        ClipSpan("vidB", 0, 2.0, 1_000_000.0)]
    with pytest.raises(InputError, match="line 5: record is video 'vidA' but clip vidB/0"):
        spans_upstream(path, clips_table([("vidA", 0, 2), ("vidA", 1, 3), ("vidB", 0, 5), ("vidA", 2, 6)]))
    with pytest.raises(InputError, match="4 records but the clips table has 3 clips"):
        spans_upstream(path, clips_table([("vidA", 0, 2), ("vidA", 1, 3), ("vidA", 2, 5)]))


EPIC_V = EpicClasses("verb", ("take", "put"), {"take": ("take",), "put": ("put",)})
EPIC_N = EpicClasses("noun", ("pan", "board:chopping"), {"pan": ("pan",), "board:chopping": ("board:chopping",)})


def test_import_splits_ten_second_segments_like_upstream(tmp_path):
    manifest = tmp_path / "manifest.txt"
    manifest.write_text("vidA_0001 vidA 0.0334 9.9766\nvidA_0002 vidA 9.9766 13.5\nvidA_0003 vidA 13.5 19.0\n")
    assert read_manifest(manifest) == {
        ("vidA", 1): (0.0334, 5.0334), ("vidA", 2): (5.0334, 9.9766),
        ("vidA", 3): (9.9766, 13.5),  # 5 s or less: one piece, numbered 2k-1
        ("vidA", 5): (13.5, 18.5), ("vidA", 6): (18.5, 19.0)}
    predictions = tmp_path / "pred.txt"
    lines = [f"imgs_cliped_5s/vidA_{n:04d} 150 0 {v} {o}" for n, v, o in
             [(6, "put", "pan"), (1, "take", "board:chopping"), (2, "put", "pan"), (3, "take", "pan"),
              (5, "put", "board:chopping")]]
    predictions.write_text("\n".join(lines) + "\n")
    table = import_upstream(manifest, predictions, EPIC_V, EPIC_N)
    assert table.schema == TSM_SEGMENTS
    row = {r["segment_idx"]: r for r in table.to_pylist()}
    assert sorted(row) == [1, 2, 3, 5, 6]
    assert (row[1]["verb_class"], row[1]["noun_key"], row[1]["noun_class"]) == (0, "board:chopping", 1)
    assert row[6]["start_s"] == 18.5 and row[6]["verb_score"] is None and row[6]["rank"] == 1

    predictions.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError, match="1 manifest segments have no prediction: vidA_0005"):
        import_upstream(manifest, predictions, EPIC_V, EPIC_N)
    predictions.write_text("\n".join(lines + [lines[0]]) + "\n")
    with pytest.raises(InputError, match=r"line 6: segment .* predicted twice \(first on line 1\)"):
        import_upstream(manifest, predictions, EPIC_V, EPIC_N)
    predictions.write_text("\n".join(lines[:-1] + ["imgs_cliped_5s/vidA_0005 150 0 stir pan"]) + "\n")
    with pytest.raises(InputError, match="line 5: 'stir' is not an EPIC verb class key"):
        import_upstream(manifest, predictions, EPIC_V, EPIC_N)
    manifest.write_text("vidA_0001 vidB 0.0 9.0\n")
    with pytest.raises(InputError, match="does not belong to video 'vidB'"):
        read_manifest(manifest)
