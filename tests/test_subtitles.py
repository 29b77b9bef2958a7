"""Subtitle and transcript parsing: cleaning, overlapping / rolling cues, sentence clips, errors."""
import pytest

from cookproc.subtitles import (Cue, SubtitleError, clean_text, format_time, read_subtitle_clips, read_subtitle_cues,
                                read_transcript, remove_rolling_repeats, segment)

SRT = """1
00:00:01,000 --> 00:00:04,000
<i>First</i> we chop
the <font color="#ff0000">onions</font>.

2
00:00:04,500 --> 00:00:08,000
{\\an8}Then add salt &amp; pepper. Stir well!

3
00:00:08,000 --> 00:00:10,000
[Music] ♪
"""

VTT = """WEBVTT
Kind: captions

NOTE rolling captions as YouTube writes them

00:00:01.000 --> 00:00:03.000 align:start position:0%
heat the<00:00:01.500><c> oil</c>

00:00:03.000 --> 00:00:03.010
heat the oil

00:00:03.010 --> 00:00:06.000
heat the oil
in a large pot.

00:00:05.000 --> 00:00:09.000
<v Chef>Add the tomatoes.</v>
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_clean_text_removes_markup_entities_and_sound_tags():
    assert clean_text("<i>Chop</i> the <b>onions</b>") == "Chop the onions"
    assert clean_text("{\\an8}salt &amp; pepper &lt;3") == "salt & pepper <3"
    assert clean_text("[Music] ♪ stir it ♪") == "stir it"
    assert clean_text("[Music]", drop_sound_tags=False) == "[Music]"
    assert clean_text("- Chop it.\n- Like this?") == "Chop it. Like this?"
    assert clean_text("multi\nline\r\n cue") == "multi line cue"


def test_srt_multiline_cues_and_tags(tmp_path):
    cues = read_subtitle_cues(write(tmp_path, "a.srt", SRT))
    assert [c.text for c in cues] == ["First we chop the onions.", "Then add salt & pepper. Stir well!", ""]
    assert [(c.start_s, c.end_s, c.line) for c in cues] == [(1.0, 4.0, 2), (4.5, 8.0, 7), (8.0, 10.0, 11)]


def test_srt_sentence_clips_split_a_cue_and_interpolate_times(tmp_path):
    clips = read_subtitle_clips(write(tmp_path, "a.srt", SRT))
    assert [c.sentence for c in clips] == ["First we chop the onions.", "Then add salt & pepper.", "Stir well!"]
    # "Then add salt & pepper." is 23 of the cue's 33 characters: the split falls 23/33 into it.
    assert clips[2].start_s == pytest.approx(4.5 + 3.5 * 23 / 33, abs=1e-3)
    # The paper's clips: each runs to the next one's start; the last to the end of its speech.
    assert clips[0].end_s == clips[1].start_s == 4.5 and clips[1].end_s == clips[2].start_s
    assert clips[2].end_s == 8.0
    assert clips[1].lines == [7]


def test_cue_segmentation_keeps_cues(tmp_path):
    clips = read_subtitle_clips(write(tmp_path, "a.srt", SRT), segmentation="cue")
    assert [c.sentence for c in clips] == ["First we chop the onions.", "Then add salt & pepper. Stir well!"]


def test_vtt_rolling_and_overlapping_cues(tmp_path):
    path = write(tmp_path, "a.vtt", VTT)
    cues = read_subtitle_cues(path)
    assert [c.text for c in cues] == ["heat the oil", "heat the oil", "heat the oil in a large pot.", "Add the tomatoes."]
    clips = read_subtitle_clips(path)
    # The repeated "heat the oil" of the rolling captions appears once; the overlapping last cue
    # (starts at 5 s, before the previous ends at 6 s) becomes the next clip.
    assert [c.sentence for c in clips] == ["heat the oil in a large pot.", "Add the tomatoes."]
    assert [(c.start_s, c.end_s) for c in clips] == [(1.0, 5.0), (5.0, 9.0)]
    assert clips[0].lines == [6, 12]  # the first cue and the one that completed the sentence


def test_overlapping_cues_out_of_order_are_sorted_by_start(tmp_path):
    srt = ("1\n00:00:05,000 --> 00:00:07,000\nsecond.\n\n"
           "2\n00:00:01,000 --> 00:00:06,000\nfirst.\n")
    clips = read_subtitle_clips(write(tmp_path, "o.srt", srt))
    assert [(c.sentence, c.start_s, c.end_s) for c in clips] == [("first.", 1.0, 5.0), ("second.", 5.0, 7.0)]


def test_rolling_repeats_only_within_a_short_gap():
    cues = [Cue(0.0, 2.0, "add the salt", 1), Cue(10.0, 12.0, "add the salt", 5)]
    # Ten seconds apart: a real repetition by the cook, kept.
    assert [c.text for c in remove_rolling_repeats(cues)] == ["add the salt", "add the salt"]
    cues[1] = Cue(2.0, 4.0, "the salt and stir", 5)
    assert [c.text for c in remove_rolling_repeats(cues)] == ["add the salt", "and stir"]


def test_max_clip_s_closes_unpunctuated_captions():
    cues = [Cue(float(t), float(t + 4), f"words {t}", t + 1) for t in range(0, 40, 4)]
    clips = segment(cues, max_clip_s=10.0)
    assert [c.start_s for c in clips] == [0.0, 12.0, 24.0, 36.0]
    assert clips[0].sentence == "words 0 words 4 words 8"


@pytest.mark.parametrize("timing, message", [
    ("00:00:0x,000 --> 00:00:05,000", "cue 2: bad timing '00:00:0x,000 --> 00:00:05,000'"),
    ("00:00:04,000 -> 00:00:05,000", None),  # not a timing line at all: the parser misses a cue
    ("00:00:06,000 --> 00:00:05,000", "cue 2: ends (00:00:05,000) before it starts (00:00:06,000)"),
    ("00:00:61,000 --> 00:00:62,000", "cue 2: minutes and seconds must be below 60"),
])
def test_bad_srt_timestamps_name_line_and_cue(tmp_path, timing, message):
    srt = f"1\n00:00:01,000 --> 00:00:02,000\nok.\n\n2\n{timing}\nbad.\n\n3\n00:00:07,000 --> 00:00:08,000\nok.\n"
    path = write(tmp_path, "bad.srt", srt)
    with pytest.raises(SubtitleError) as err:
        read_subtitle_clips(path)
    text = str(err.value)
    assert text.startswith(f"{path}, line ")
    if message:
        assert text.startswith(f"{path}, line 6: ") and message in text
    else:  # no "-->": the pre-check cannot see it, pysrt refuses the block starting there
        assert text.startswith(f"{path}, line 5: not a valid SubRip cue")


def test_bad_vtt_timestamp_names_line(tmp_path):
    vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nok.\n\n00:0x.000 --> 00:05.000\nbad.\n"
    path = write(tmp_path, "bad.vtt", vtt)
    with pytest.raises(SubtitleError, match=r"bad\.vtt, line 6: cue 2: bad timing"):
        read_subtitle_clips(path)


@pytest.mark.parametrize("name, text, message", [
    ("empty.srt", "", "the file is empty"),
    ("blank.vtt", "\n\n  \n", "the file is empty"),
    ("nocues.srt", "hello there\n", "no cues found"),
    ("header.vtt", "WEBVTT\n\n", "no cues found"),
    ("novtt.vtt", "00:01.000 --> 00:02.000\nhi.\n", "WebVTT parser"),
    ("music.srt", "1\n00:00:01,000 --> 00:00:02,000\n[Music]\n", "no text left in any cue"),
    ("empty.txt", "# only a comment\n", "no timed lines found"),
])
def test_empty_or_unusable_files(tmp_path, name, text, message):
    with pytest.raises(SubtitleError, match=message):
        read_subtitle_clips(write(tmp_path, name, text))


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "latin1.srt"
    path.write_bytes("1\n00:00:01,000 --> 00:00:02,000\ncr\xe8me\n".encode("latin-1"))
    with pytest.raises(SubtitleError, match=r"latin1\.srt, line 3: not UTF-8"):
        read_subtitle_clips(path)


def test_unknown_extension(tmp_path):
    with pytest.raises(SubtitleError, match=r"unknown subtitle format '\.ass'"):
        read_subtitle_clips(write(tmp_path, "a.ass", "x"))


def test_plain_transcript_formats(tmp_path):
    text = ("# my pancakes\n[00:00:01] Mix the flour and eggs.\n\n[01:02.5] Pour the batter.\n"
            "1:02:03\tFlip it.\n02:04.25\t<i>Serve</i> warm.\n")
    path = write(tmp_path, "t.txt", text)
    # Times must not decrease: 02:04.25 after 1:02:03 is refused.
    with pytest.raises(SubtitleError, match=r"t\.txt, line 6: time 00:02:04.2 is before the previous line's "
                                            r"01:02:03.0 \(line 5\)"):
        read_subtitle_clips(path)
    path = write(tmp_path, "t.txt", text.replace("02:04.25", "1:03:00"))
    assert [(c.start_s, c.end_s, c.line) for c in read_transcript(path)] == [
        (1.0, None, 2), (62.5, None, 4), (3723.0, None, 5), (3780.0, None, 6)]
    clips = read_subtitle_clips(path, video_end_s=4000.0)
    assert [c.sentence for c in clips] == ["Mix the flour and eggs.", "Pour the batter.", "Flip it.", "Serve warm."]
    assert [c.start_s for c in clips] == [1.0, 62.5, 3723.0, 3780.0]
    assert clips[-1].end_s == 4000.0  # the video's end
    assert read_subtitle_clips(path)[-1].end_s is None  # unknown without the video


def test_transcript_bad_line(tmp_path):
    path = write(tmp_path, "t.txt", "[00:01] ok\n00:02 no tab here\n")
    with pytest.raises(SubtitleError, match=r"t\.txt, line 2: expected '\[HH:MM:SS\] sentence'"):
        read_subtitle_clips(path)


def test_cue_after_video_end_is_an_error(tmp_path):
    path = write(tmp_path, "a.srt", SRT)
    with pytest.raises(SubtitleError, match=r"a\.srt, line 7: cue starts at 00:00:04.5, after the video's end"):
        read_subtitle_clips(path, video_end_s=4.0)


def test_format_time():
    assert format_time(3723.46) == "01:02:03.5"
    assert format_time(None) == "--"
