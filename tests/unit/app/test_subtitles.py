"""Subtitle and transcript parsing: cleaning, overlapping / rolling cues, sentence clips, errors;
nothing lost from an ordinary file (issue 37), and a fuzz test of the reader."""
import html
import logging
import random
import re

import pytest

from cookproc.core.errors import InputError
from cookproc.app.caption_text import MARKUP_TAGS, clean_text
from cookproc.app.clips import Clip, cut_long_sentence, segment, split_sentences
from cookproc.app.cues import Cue, SubtitleError, format_time, read_subtitle_cues, read_transcript
from cookproc.app.rolling_captions import RollingEvidence, remove_rolling_repeats, rolling_evidence
from cookproc.app.subtitles import read_subtitle_clips, read_subtitles

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
    clips = read_subtitle_clips(path, rolling_captions="remove")
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
    # An hour between two lines would make a clip of an hour: refused by default (a typo in the hours?) ...
    with pytest.raises(SubtitleError, match=r"t\.txt, line 5: the line starts at 01:02:03\.0, 1h01m after the clip "
                                            r"before it \(line 4, 00:01:02\.5\), which would make a clip of 1h01m, "
                                            r"over the limit of 10m00s \(procedures.longest_clip_s\)"):
        read_subtitle_clips(path)
    # ... and read with a limit that allows it.
    clips = read_subtitle_clips(path, video_end_s=4000.0, longest_clip_s=4000.0)
    assert [c.sentence for c in clips] == ["Mix the flour and eggs.", "Pour the batter.", "Flip it.", "Serve warm."]
    assert [c.start_s for c in clips] == [1.0, 62.5, 3723.0, 3780.0]
    assert clips[-1].end_s == 4000.0  # the video's end
    assert read_subtitle_clips(path, longest_clip_s=4000.0)[-1].end_s is None  # unknown without the video


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


# ----------------------------------------------------------------------------- issue 37: nothing lost
def srt_file(tmp_path, cues, name="s.srt"):
    """An SRT file of ``(start_s, end_s, text)`` cues."""
    def ts(t):
        ms = int(round(t * 1000))
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"
    return write(tmp_path, name, "\n".join(f"{i}\n{ts(a)} --> {ts(b)}\n{text}\n" for i, (a, b, text) in enumerate(cues, 1)))


def test_an_ordinary_file_keeps_every_word_and_repeated_sentence(tmp_path):
    # The issue's cases: a cue starting with the word the previous one ended with, a second "Stir.",
    # a repeated "Add the butter.", each within a second of the cue before; the last clip ends at 18 s.
    cues = [(0.0, 2.0, "Now add the salt"), (2.2, 4.0, "Salt brings out the flavour."), (4.1, 6.0, "Stir."),
            (6.1, 8.0, "Stir."), (8.1, 10.0, "Add the butter."), (10.1, 12.0, "Add the butter."),
            (12.1, 15.0, "Cover the pan."), (15.1, 18.0, "Cover the pan and wait.")]
    path = srt_file(tmp_path, cues)
    reading = read_subtitles(path)
    assert [c.sentence for c in reading.clips] == ["Now add the salt Salt brings out the flavour.", "Stir.", "Stir.",
                                                   "Add the butter.", "Add the butter.", "Cover the pan.",
                                                   "Cover the pan and wait."]
    assert reading.clips[-1].end_s == 18.0
    rolling = reading.checks["rolling_captions"]
    # One pair rolls ("Cover the pan" -> "Cover the pan and wait."); "Add the butter." said twice
    # is the same words again, which never counts: 1 of 7, not rolling.
    assert rolling == {"mode": "auto", "cue_pairs": 7, "repeating_pairs": 1, "fraction": round(1 / 7, 4),
                       "applied": False, "words_removed": 0, "cues_changed": 0, "cues_dropped": 0}
    assert reading.checks["warnings"] == []
    # Asked to, the repeats go (the old behaviour), and the record says how many words.
    reading = read_subtitles(path, rolling_captions="remove")
    assert reading.checks["rolling_captions"]["applied"] and reading.checks["rolling_captions"]["words_removed"] == 8
    assert [c.sentence for c in reading.clips] == ["Now add the salt brings out the flavour.", "Stir.", "Add the butter.",
                                                   "Cover the pan.", "and wait."]


@pytest.mark.slow
def test_a_100000_cue_ordinary_file_keeps_all_its_sentences(tmp_path):
    pool = ["Salt brings out the flavour.", "Stir.", "Add the butter.", "Chop the onions finely.",
            "Heat the oil in a pan.", "Now add the salt.", "Let it simmer for ten minutes."]
    rng = random.Random(0)
    texts = [rng.choice(pool) for _ in range(100_000)]
    path = srt_file(tmp_path, [(float(i), i + 0.9, t) for i, t in enumerate(texts)])
    reading = read_subtitles(path)
    assert [c.sentence for c in reading.clips] == texts
    assert reading.clips[-1].end_s == 99_999.9
    assert not reading.checks["rolling_captions"]["applied"]
    # About one pair in seven is a sentence said twice: the same words again, never a rolling pair.
    assert reading.checks["rolling_captions"]["repeating_pairs"] == 0


def youtube_auto_captions(lines, *, seconds=2.0):
    """A WebVTT file as YouTube writes automatic captions: each cue shows the previous line and the
    new one (karaoke timestamps in it), then a 10 ms cue holds the finished line."""
    out = ["WEBVTT", "Kind: captions", "Language: en", ""]
    def ts(t):
        return f"{int(t // 3600):02d}:{int(t // 60 % 60):02d}:{t % 60:06.3f}"
    for k, line in enumerate(lines):
        start = k * seconds
        words = line.split()
        karaoke = words[0] + "".join(f"<{ts(start + 0.2 * (i + 1))}><c> {w}</c>" for i, w in enumerate(words[1:]))
        shown = [lines[k - 1], karaoke] if k else [karaoke]
        out += [f"{ts(start)} --> {ts(start + seconds)} align:start position:0%", *shown, ""]
        out += [f"{ts(start + seconds)} --> {ts(start + seconds + 0.01)} align:start position:0%", line, ""]
    return "\n".join(out)


def test_rolling_auto_captions_are_recognised_and_their_repeats_removed(tmp_path, caplog):
    lines = ["so today we are making a tomato soup", "first chop the onions and the garlic",
             "then heat some oil in a large pot", "add the onions and cook them until soft",
             "now add the tomatoes and some salt", "let it simmer for twenty minutes"]
    path = write(tmp_path, "auto.vtt", youtube_auto_captions(lines))
    with caplog.at_level(logging.WARNING, logger="cookproc.app.clips"):
        reading = read_subtitles(path)
    assert [c.sentence for c in reading.clips] == lines  # unpunctuated: one clip per (de-duplicated) cue
    rolling = reading.checks["rolling_captions"]
    # 11 consecutive pairs; each 10 ms cue repeats its line, each new cue the previous line. The
    # first 10 ms cue is the first cue's words again: that pair does not count.
    assert (rolling["cue_pairs"], rolling["repeating_pairs"], rolling["applied"]) == (11, 10, True)
    repeated_words = sum(len(line.split()) for line in lines) + sum(len(line.split()) for line in lines[:-1])
    assert rolling["words_removed"] == repeated_words
    # Every 10 ms cue is left empty; every later full cue loses the line it repeats.
    assert (rolling["cues_changed"], rolling["cues_dropped"]) == (11, 6)
    message = (f"{path}: rolling captions (10 of 11 cue pairs repeat the previous cue's last words): removed "
               f"{repeated_words} repeated words from 11 cues (6 of them left empty and dropped)")
    assert message in caplog.text and reading.checks["warnings"][0] == message
    # strict: refused, naming the first cue it would change.
    with pytest.raises(SubtitleError, match=r"auto\.vtt, line 8: rolling captions \(10 of 11 cue pairs .*\): would "
                                            rf"remove {repeated_words} repeated words from 11 cues .*; strict refuses"):
        read_subtitles(path, strict=True)
    # keep: nothing removed, even from rolling captions.
    kept = read_subtitles(path, rolling_captions="keep")
    assert not kept.checks["rolling_captions"]["applied"] and len(kept.clips) == 2 * len(lines)


def test_rolling_evidence_needs_several_repeating_pairs():
    cue = lambda t, text: Cue(t, t + 1.0, text, int(t) + 1)  # noqa: E731
    two = [cue(0, "add the butter now"), cue(1, "add the butter now and stir")]
    assert rolling_evidence(two) == RollingEvidence(1, 1) and not rolling_evidence(two).rolling
    # A cue repeated whole is a sentence said twice (or a duplicated cue), never a rolling pair.
    assert rolling_evidence([cue(0, "add the butter now"), cue(1, "Add the butter, now!")]) == RollingEvidence(1, 0)
    rolling = [cue(i, f"w{i} x y z") if i % 2 == 0 else cue(i, f"x y z w{i}") for i in range(8)]
    evidence = rolling_evidence(rolling)
    assert evidence.repeating_pairs == 4 and evidence.cue_pairs == 7 and evidence.rolling
    # A gap of more than a second between the cues: not rolling.
    assert rolling_evidence([Cue(c.start_s * 3, c.start_s * 3 + 1, c.text, c.line) for c in rolling]).repeating_pairs == 0


@pytest.mark.parametrize("text, kept", [
    ("Add [about two cups] of flour", "Add [about two cups] of flour"),
    ("[Music] Stir it [upbeat music playing]", "Stir it"),
    ("(laughs) that went well (applause)", "that went well"),
    ("Fold in (gently) the egg whites", "Fold in (gently) the egg whites"),
    ("Now [sound of the blender] it is smooth", "Now [sound of the blender] it is smooth"),
    ("♪ la la ♪ [MUSIC]", "la la"),
])
def test_only_whole_sound_descriptions_are_dropped(text, kept):
    assert clean_text(text) == kept
    assert clean_text(text, drop_sound_tags=False) == text


def test_bracketed_words_survive_to_the_clips(tmp_path):
    path = srt_file(tmp_path, [(0.0, 2.0, "Add [about two cups] of flour."), (2.0, 4.0, "[Music]")])
    assert [c.sentence for c in read_subtitle_clips(path)] == ["Add [about two cups] of flour."]


def test_entities_are_decoded_before_markup_is_removed():
    assert clean_text("&lt;script&gt;alert(1)&lt;/script&gt; stir") == "alert(1) stir"
    assert clean_text("<img src=x onerror=alert(1)>Stir") == "Stir"
    # A "<" that opens no tag is text.
    assert clean_text("if x &lt; 5 and y &gt; 3") == "if x < 5 and y > 3"
    assert clean_text("I <3 it") == "I <3 it"


@pytest.mark.parametrize("name, text", [
    ("a.srt", "1\n00:00:01,000 --> 00:00:02,000\nMix a --> b then\nmore --> text\n\n2\n00:00:03,000 --> 00:00:04,000\nok.\n"),
    ("a.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nMix a --> b then\nmore --> text\n\n"
              "c2\n00:03.000 --> 00:04.000\nok.\n"),
])
def test_an_arrow_in_cue_text_is_text(tmp_path, name, text):
    cues = read_subtitle_cues(write(tmp_path, name, text))
    assert [(c.start_s, c.text) for c in cues] == [(1.0, "Mix a --> b then more --> text"), (3.0, "ok.")]


@pytest.mark.parametrize("name, text, message", [
    ("big.srt", "1\n00:00:01,000 --> 00:00:02,000\nok.\n\n2\n99999999999:00:00,000 --> 99999999999:00:01,000\nlate.\n",
     r"big\.srt, line 6: cue 2: a time beyond 100 hours in '99999999999:00:00,000 --> 99999999999:00:01,000'"),
    ("big.vtt", "WEBVTT\n\n100:00:00.001 --> 100:00:01.000\nlate.\n",
     r"big\.vtt, line 3: cue 1: a time beyond 100 hours"),
    ("huge.srt", "1\n" + "9" * 5000 + ":00:00,000 --> 00:00:01,000\nx.\n", r"huge\.srt, line 2: cue 1: a time beyond 100 hours"),
    ("big.txt", "[00:01] ok\n[99999999999:00:00] late\n", r"big\.txt, line 2: a time beyond 100 hours"),
])
def test_times_beyond_100_hours_are_refused(tmp_path, name, text, message):
    with pytest.raises(SubtitleError, match=message):
        read_subtitle_clips(write(tmp_path, name, text))


def test_100_hours_is_accepted(tmp_path):
    path = write(tmp_path, "edge.srt", "1\n99:59:59,000 --> 100:00:00,000\nlast words.\n")
    assert read_subtitle_clips(path)[0].end_s == 360000.0


@pytest.mark.parametrize("name, text, message", [
    ("nul.srt", "1\n00:00:01,000 --> 00:00:02,000\nok.\n\n2\n00:00:03,000 --> 00:00:04,000\nchop the on\x00ions\n",
     r"nul\.srt, line 7: cue 2: control character U\+0000 in the text; remove it \(NUL bytes usually mean a UTF-16"),
    ("bell.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nstir\x07 it\n", r"bell\.vtt, line 4: cue 1: control character U\+0007"),
    ("nul.txt", "[00:01] chop\n[00:02] the on\x00ions\n", r"nul\.txt, line 2: control character U\+0000"),
    ("sep.srt", "1\n00:00:01,000 --> 00:00:02,000\nchop\u2028it\n", r"sep\.srt, line 3: cue 1: control character U\+2028"),
])
def test_control_characters_are_refused_naming_line_and_cue(tmp_path, name, text, message):
    with pytest.raises(SubtitleError, match=message):
        read_subtitle_clips(write(tmp_path, name, text))


def test_utf16_file_is_refused(tmp_path):
    path = tmp_path / "u16.srt"
    path.write_bytes("1\n00:00:01,000 --> 00:00:02,000\nok.\n".encode("utf-16-le"))
    with pytest.raises(SubtitleError, match=r"u16\.srt, line 1: control character U\+0000"):
        read_subtitle_clips(path)


def test_a_1mb_cue_is_cut_or_refused_before_any_parser(tmp_path, caplog):
    words = "chop the onions and add a pinch of salt".split() * 25_000  # about 1 MB of text in one cue
    text = " ".join(words)
    path = write(tmp_path, "huge.srt", f"1\n00:00:01,000 --> 00:00:02,000\nStir.\n\n2\n00:00:03,000 --> 00:00:09,000\n{text}\n")
    with caplog.at_level(logging.WARNING, logger="cookproc.app.clips"):
        reading = read_subtitles(path, segmentation="cue")
    pieces = reading.clips[1:]
    assert all(len(c.sentence) <= 2000 for c in reading.clips) and len(pieces) >= len(text) // 2000
    assert " ".join(c.sentence for c in pieces).split() == words  # every word kept, in order
    assert [c.lines for c in pieces] == [[6]] * len(pieces)
    starts = [c.start_s for c in pieces]
    assert starts[0] == 3.0 and starts == sorted(starts) and pieces[-1].end_s == 9.0
    message = f"{path}, line 6: cue 2: a sentence of {len(text):,} characters, over the limit of 2,000 " \
              f"(procedures.max_sentence_chars): cut at spaces into {len(pieces):,} clips (it has no sentence end)"
    assert message in caplog.text and reading.checks["warnings"] == [message]
    assert reading.checks["long_sentences"] == {"max_sentence_chars": 2000, "action": "cut", "cut": 1}
    with pytest.raises(SubtitleError, match=rf"huge\.srt, line 6: cue 2: a sentence of {len(text):,} characters, "
                                            r"over the limit of 2,000 \(procedures.max_sentence_chars\); split it"):
        read_subtitles(path, long_sentences="error")


def test_a_word_longer_than_the_limit_is_cut_inside():
    clip = Clip(0.0, 10.0, "a " + "x" * 25 + " b", [3])
    pieces = cut_long_sentence(clip, 10)
    assert [p.sentence for p in pieces] == ["a", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx b"]
    assert pieces[0].start_s == 0.0 and pieces[-1].end_s == 10.0
    assert [p.start_s for p in pieces] == sorted(p.start_s for p in pieces)


CHINESE = "1\n00:00:01,000 --> 00:00:06,000\n把洋葱切碎。加入黄油，搅拌至融化。\n\n2\n00:00:06,000 --> 00:00:09,000\n现在我们把面粉和鸡蛋混合在一起！\n"
ARABIC = "1\n00:00:01,000 --> 00:00:06,000\nأضف الزبدة وحرك حتى تذوب. هل تريد المزيد من الملح؟ ثم قطع البصل۔\n"
HINDI = "1\n00:00:01,000 --> 00:00:06,000\nमक्खन डालें और पिघलने तक हिलाएं। फिर प्याज काट लें।\n"


@pytest.mark.parametrize("text, sentences, language", [
    (CHINESE, ["把洋葱切碎。", "加入黄油，搅拌至融化。", "现在我们把面粉和鸡蛋混合在一起！"], "Chinese (zh)"),
    (ARABIC, ["أضف الزبدة وحرك حتى تذوب.", "هل تريد المزيد من الملح؟", "ثم قطع البصل۔"], "Arabic (ar)"),
    (HINDI, ["मक्खन डालें और पिघलने तक हिलाएं।", "फिर प्याज काट लें।"], "Hindi (hi)"),
], ids=["chinese", "arabic", "hindi"])
def test_other_scripts_are_cut_at_their_sentence_ends_and_their_language_named(tmp_path, caplog, text, sentences,
                                                                               language):
    path = write(tmp_path, "other.srt", text)
    with caplog.at_level(logging.WARNING, logger="cookproc.app.language"):
        reading = read_subtitles(path)
    assert reading.segmentation == "sentence" and [c.sentence for c in reading.clips] == sentences
    code = language[-3:-1]
    assert reading.checks["language"]["detected"] == code and reading.checks["language"]["expected"] == "en"
    assert f"{path}: the text looks like {language} (probability " in caplog.text
    assert reading.checks["warnings"] == [caplog.records[-1].getMessage()]
    with pytest.raises(InputError, match=rf"other\.srt: the text looks like {re.escape(language)} \(probability "
                                         r"[01]\.\d\d\), not English \(en\): the extractors"):
        read_subtitles(path, other_language="error")
    assert read_subtitles(path, language=None).checks["language"]["detected"] is None


def test_english_and_too_short_text_give_no_language_warning(tmp_path):
    reading = read_subtitles(write(tmp_path, "a.srt", SRT), other_language="error")
    assert reading.checks["language"]["detected"] == "en" and reading.checks["warnings"] == []
    # "Stir." alone says nothing about its language: undecided, not refused.
    reading = read_subtitles(write(tmp_path, "b.srt", "1\n00:00:01,000 --> 00:00:02,000\nStir.\n"), other_language="error")
    assert reading.checks["language"]["detected"] is None


def test_split_sentences_keeps_every_character_but_the_spaces_between():
    assert split_sentences('He said "stir." Then add it!) Done') == ['He said "stir."', "Then add it!)", "Done"]
    assert split_sentences("Wait... then 3.5 cups.") == ["Wait...", "then 3.5 cups."]
    assert split_sentences("好。「对。」然后") == ["好。", "「对。」", "然后"]


# ----------------------------------------------------------------------------- fuzz
FUZZ_WORDS = ["chop", "the", "onions", "add", "salt", "Stir.", "[Music]", "[about", "two", "cups]", "&amp;", "<i>oil</i>",
              "-->", "&lt;b&gt;", "好。", "؟", "x<y", "100%", "{\\an8}", "♪", "'", "\"quoted\"", "e.g.", "(laughs)"]


def _fuzz_file(rng):
    """A random subtitle or transcript file: (name, text, cues), cues ``(start_s, text)`` in the
    order the reader takes them when the file was not mutated, else None."""
    kind = rng.choice(["srt", "vtt", "txt"])
    n = rng.randint(1, 12)
    t, cues = 0.0, []
    for _ in range(n):
        start = t + rng.choice([0.0, 0.01, 0.5, 2.0])
        end = start + rng.choice([0.0, 0.01, 1.0, 3.0])
        text = " ".join(rng.choice(FUZZ_WORDS) for _ in range(rng.randint(1, 8)))
        cues.append((start, end, text))
        t = end if rng.random() < 0.8 else max(0.0, start - 1.0)

    def ts(x, sep):
        ms = int(round(x * 1000))
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"
    order = sorted(range(n), key=lambda i: (cues[i][0], i))  # the reader's: by start, then file order
    if kind == "srt":
        text = "\n".join(f"{i}\n{ts(a, ',')} --> {ts(b, ',')}\n{c}\n" for i, (a, b, c) in enumerate(cues, 1))
    elif kind == "vtt":
        text = "WEBVTT\n\n" + "\n".join(f"{ts(a, '.')} --> {ts(b, '.')}\n{c}\n" for a, b, c in cues)
    else:
        cues.sort(key=lambda c: c[0])
        order = list(range(n))
        text = "\n".join(f"[{ts(a, '.')[:8]}] {c}" for a, b, c in cues) if rng.random() < 0.7 else \
            "\n".join(c for _, _, c in cues)
    if rng.random() < 0.4:
        return f"f.{kind}", text, [cues[i][2] for i in order]
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        pos = rng.randrange(len(chars) + 1)
        if op < 0.3 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.6:
            chars.insert(pos, rng.choice(["\n", "\n\n", "-->", ":", ",", "0", "9", "<", ">", "&", "[", "]", "\x00",
                                          "\ufeff", " ", "\t", "\r", "。", "WEBVTT", "99999:", "1 --> 2"]))
        elif op < 0.8 and chars:
            chars[min(pos, len(chars) - 1)] = rng.choice("0123456789:.,-> \n")
        else:  # duplicate or drop a line
            lines = "".join(chars).split("\n")
            k = rng.randrange(len(lines))
            lines.insert(k, lines[k]) if rng.random() < 0.5 else lines.pop(k)
            chars = list("\n".join(lines))
    return f"f.{kind}", "".join(chars), None


def _is_subsequence(word, text):
    it = iter(text)
    return all(ch in it for ch in word)


def test_fuzz_the_reader_returns_input_words_or_an_input_error(tmp_path):
    """Random and mutated SRT, WebVTT and transcript files (300, from a fixed seed, each small): the
    reader either returns clips or raises InputError, never another exception. A file
    left whole loses no word: the clips' words are exactly its cues' words in the reader's order
    (unless it was found rolling); a mutated one gets no invented word (each clip word's characters
    come, in order, from the decoded file). Clips stay under the sentence limit, in time order."""
    rng = random.Random(37)
    outcomes = {"whole": 0, "mutated": 0, "error": 0}
    for case in range(300):  # files of at most 12 cues of 8 words: seconds in all
        name, text, cues = _fuzz_file(rng)
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        limit = rng.choice([2000, 20])
        try:
            reading = read_subtitles(path, language=None, max_sentence_chars=limit)
        except InputError as exc:
            outcomes["error"] += 1
            assert cues is None or "no text left" in str(exc), (case, str(exc), text)
            continue
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"case {case}: {type(exc).__name__}: {exc}\n--- {name} ---\n{text!r}")
        clip_words = [w for clip in reading.clips for w in clip.sentence.split()]
        if cues is not None:
            outcomes["whole"] += 1
            # Random cues from 24 words hardly ever repeat 3 words: never rolling.
            assert not reading.checks["rolling_captions"]["applied"], (case, text)
            assert clip_words == [w for cue in cues for w in clean_text(cue).split()], (case, text)
        else:
            outcomes["mutated"] += 1
            source = html.unescape(text)
            assert all(_is_subsequence(w, source) for w in clip_words), (case, clip_words, text)
        starts = [c.start_s for c in reading.clips]
        assert all(len(c.sentence) <= limit and c.sentence.strip() for c in reading.clips), (case, text)
        if starts[0] is not None:
            assert starts == sorted(starts) and 0 <= starts[0] and starts[-1] <= 360000, (case, starts)
            assert all(c.end_s is None or c.end_s >= c.start_s for c in reading.clips), (case, reading.clips)
    assert min(outcomes.values()) >= 20, outcomes


# ----------------------------------------------------------------------------- issue 46: every word kept or refused
def test_ordinary_punctuated_cues_said_twice_are_not_rolling_and_keep_every_sentence(tmp_path, caplog):
    """Issue 46: seven one-line punctuated cues, 3 s each, three of them said twice, were judged
    rolling captions and lost 3 sentences (11 words), with nothing on stderr."""
    texts = ["Whisk the eggs well.", "Whisk the eggs well.", "Now add the milk.", "Now add the milk.",
             "Keep whisking it.", "Keep whisking it.", "Pour into the pan."]
    path = srt_file(tmp_path, [(3.0 * i, 3.0 * i + 3.0, t) for i, t in enumerate(texts)])
    with caplog.at_level(logging.WARNING):
        reading = read_subtitles(path)
    assert [c.sentence for c in reading.clips] == texts
    assert reading.checks["rolling_captions"]["repeating_pairs"] == 0 and not reading.checks["rolling_captions"]["applied"]
    assert reading.checks["warnings"] == [] and caplog.text == ""
    # The same lines as a transcript keep all seven too.
    transcript = write(tmp_path, "t.txt", "".join(f"[00:00:{3 * i:02d}] {t}\n" for i, t in enumerate(texts)))
    assert [c.sentence for c in read_subtitles(transcript).clips] == texts


@pytest.mark.parametrize("text, cleaned", [
    ("Add salt <and> pepper to the <stew>.", "Add salt <and> pepper to the <stew>."),
    ("<ruby>Mix<rt>mikkusu</rt></ruby> the flour.", "Mix the flour."),
    ("<ruby>Mix<rt>mikkusu</ruby> the flour.", "Mix the flour."),  # WebVTT may leave out </rt>
    ("<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>字", "漢字"),
    ("Stir\u200b the\u200b sauce.", "Stir the sauce."),
    ("Stir\u200bthe sauce.", "Stir the sauce."),  # a zero-width space is a word break
    ("Chop\u00ad the on\u00adions\u2060.", "Chop the onions."),  # soft hyphens, word joiner
    ("Add \u200fthe \u2066salt\u2069.", "Add the salt."),  # a bidi mark, an isolate
    ("Add &#8238;tlas&#8236; now.", "Add tlas now."),  # an override an entity hid: what it reads, not what it shows
    ("Add the \U000e0061\U000e0062salt.", "Add the salt."),  # invisible tag characters
    ("<c.yellow>heat</c> <v Chef>the</v><00:00:01.500> <I>oil</I>", "heat the oil"),
    ('<font color="#ff0000">onions</font> <a href="x">here</a>', "onions here"),
    ("a<br>b<br/>c", "a b c"),
])
def test_only_real_markup_and_invisible_characters_are_removed(text, cleaned):
    """Issue 46: "<and>" and "<stew>" were deleted as markup, ruby kept its reading ("Mixmikkusu"),
    zero-width spaces glued to words hid the verb."""
    assert clean_text(text) == cleaned


def test_words_of_the_issue_reach_the_clips_whole(tmp_path):
    vtt = ("WEBVTT\n\n00:01.000 --> 00:03.000\nAdd salt <and> pepper to the <stew>.\n\n"
           "00:03.000 --> 00:05.000\n<ruby>Mix<rt>mikkusu</rt></ruby> it well.\n\n"
           "00:05.000 --> 00:07.000\nStir\u200b the\u200b sauce.\n")
    reading = read_subtitles(write(tmp_path, "w.vtt", vtt))
    assert [c.sentence for c in reading.clips] == ["Add salt <and> pepper to the <stew>.", "Mix it well.",
                                                   "Stir the sauce."]


def test_a_bidi_override_is_refused_naming_line_and_cue_and_never_reaches_markdown(tmp_path):
    """Issue 46: U+202E passed into the arguments and the Markdown: "tlas" displayed as "salt"."""
    from cookproc.app.documents import md_escape

    srt = "1\n00:00:01,000 --> 00:00:02,000\nStir.\n\n2\n00:00:03,000 --> 00:00:05,000\nAdd the \u202etlas\u202c now.\n"
    with pytest.raises(SubtitleError, match=r"o\.srt, line 7: cue 2: a right-to-left override \(U\+202E\) in the text, "
                                            r"so 'tlas' displays as 'salt'; remove it$"):
        read_subtitles(write(tmp_path, "o.srt", srt))
    with pytest.raises(SubtitleError, match=r"o\.txt, line 2: a left-to-right override \(U\+202D\)"):
        read_subtitles(write(tmp_path, "o.txt", "Stir.\nAdd the \u202dsalt.\n"))
    # Names and paths in the Markdown lose every invisible character too.
    assert md_escape("pan\u202ecakes\u2060") == "pancakes"


def test_a_webvtt_note_holding_an_arrow_is_a_comment(tmp_path):
    """Issue 46: a NOTE containing "-->" was reported as "cue 1: bad timing"."""
    vtt = ("WEBVTT\n\nNOTE old cue 00:00:01.000 --> 00:00:02.000 removed\n\n"
           "00:00:01.000 --> 00:00:03.000\nWhisk the eggs.\n\n"
           "NOTE\nthis was 00:00:05.000 --> 00:00:06.000\n\n"
           "STYLE\n::cue { color: red } /* --> */\n\n"
           "00:00:04.000 --> 00:00:06.000\nAdd the milk.\n")
    reading = read_subtitles(write(tmp_path, "n.vtt", vtt))
    assert [(c.sentence, c.lines) for c in reading.clips] == [("Whisk the eggs.", [5]), ("Add the milk.", [14])]
    assert reading.checks["warnings"] == []


def test_cues_out_of_order_warn_naming_the_line_or_are_refused_with_strict(tmp_path, caplog):
    """Issue 46: a cue starting before the previous one was re-sorted silently."""
    path = srt_file(tmp_path, [(0.0, 2.0, "Crack the eggs."), (6.0, 8.0, "Serve it hot."), (3.0, 5.0, "Fry them."),
                               (9.0, 10.0, "Enjoy.")])
    with caplog.at_level(logging.WARNING, logger="cookproc.app.clips"):
        reading = read_subtitles(path)
    assert [c.sentence for c in reading.clips] == ["Crack the eggs.", "Fry them.", "Serve it hot.", "Enjoy."]
    message = (f"{path}, line 10: cue 3 starts at 00:00:03.0, before cue 2 (line 6) at 00:00:06.0: the cues are "
               "taken in time order (check their times)")
    assert reading.checks["warnings"] == [message] and message in caplog.text
    assert reading.checks["cue_order"] == {"out_of_order": 1, "longest_clip_s": 600.0, "strict": False}
    with pytest.raises(SubtitleError, match=r"s\.srt, line 10: cue 3 starts at 00:00:03\.0, before cue 2 \(line 6\) at "
                                            r"00:00:06\.0: cues out of order \(strict refuses them\)"):
        read_subtitles(path, strict=True)


def test_an_hour_typo_is_refused_naming_its_line(tmp_path):
    """Issue 46: `10:00:08,000` in a 20-second file moved a step to the end and made a 10-hour clip."""
    cues = [(1.0, 3.0, "Chop the onions."), (4.0, 6.0, "Heat the oil."), (36008.0, 36010.0, "Add the onions."),
            (12.0, 14.0, "Stir them."), (16.0, 20.0, "Season with salt.")]
    path = srt_file(tmp_path, cues)
    with pytest.raises(SubtitleError, match=r"s\.srt, line 10: cue 3 starts at 10:00:08\.0, 9h59m after the clip "
                                            r"before it \(line 18, 00:00:16\.0\), which would make a clip of 9h59m, "
                                            r"over the limit of 10m00s \(procedures.longest_clip_s\): a typo in the "
                                            r"hours\?$"):
        read_subtitles(path)
    # A cue whose end has the typo makes the last clip that long.
    path = srt_file(tmp_path, [(1.0, 3.0, "Chop the onions."), (4.0, 36006.0, "Heat the oil.")], name="end.srt")
    with pytest.raises(SubtitleError, match=r"end\.srt, line 6: cue 2 ends at 10:00:06\.0, which would make the last "
                                            r"clip \(from 00:00:04\.0\) 10h00m long, over the limit of 10m00s"):
        read_subtitles(path)
    # A video that long is the video's business: its last clip may be long.
    assert read_subtitles(srt_file(tmp_path, cues[:2], name="v.srt"), video_end_s=3600.0).clips[-1].end_s == 3600.0


def test_undetected_language_without_english_looking_text_warns_like_a_detected_one(tmp_path, caplog):
    """Issue 46: romanised Hindi gave "language unknown", 0 key clips and no warning."""
    path = write(tmp_path, "hi.txt", "Pyaaz kaat lijiye.\nTel garam kijiye.\n")
    with caplog.at_level(logging.WARNING, logger="cookproc.app.language"):
        reading = read_subtitles(path)
    language = reading.checks["language"]
    assert language["detected"] is None and language["english_words"] == 0.0
    message = (f"{path}: the text's language could not be identified (no language more probable than "
               f"{language['confidence']:.2f}) and it does not look like English (0% of its 6 words are common "
               "English words, under 25%): the extractors and key-clip models were trained on English cooking "
               "transcripts, so expect few or no key clips (procedures.other_language: error refuses such files)")
    assert reading.checks["warnings"] == [message] and message in caplog.text
    with pytest.raises(InputError, match=r"hi\.txt: the text's language could not be identified"):
        read_subtitles(path, other_language="error")
    # The issue's own sentence is identified as another language: a warning as well.
    reading = read_subtitles(write(tmp_path, "hi2.txt", "Ab pyaaz ko baarik kaat lijiye.\n"))
    assert len(reading.checks["warnings"]) == 1 and "not English (en)" in reading.checks["warnings"][0]
    # Short English stays undecided and unwarned.
    reading = read_subtitles(write(tmp_path, "en.txt", "Chop onions finely.\n"))
    assert reading.checks["language"]["detected"] is None and reading.checks["warnings"] == []


def test_a_1mb_transcript_line_is_cut_at_its_sentence_ends(tmp_path):
    """Issue 46: a 1 MB .txt line was cut mid-sentence (at spaces, every 2,000 characters)."""
    sentences = [f"Step {i}: chop the onions and add a pinch of salt to the pan." for i in range(16_000)]
    line = " ".join(sentences)
    assert len(line) > 1_000_000
    path = write(tmp_path, "long.txt", f"Stir.\n{line}\n")
    reading = read_subtitles(path)
    assert [c.sentence for c in reading.clips] == ["Stir.", *sentences]  # every sentence whole, one a clip
    assert reading.checks["warnings"] == [
        f"{path}, line 2: a line of {len(line):,} characters, over the limit of 2,000 (procedures.max_sentence_chars): "
        f"cut into its {len(sentences):,} sentences, one clip each"]


def test_a_long_line_is_cut_at_sentence_ends_before_spaces():
    from cookproc.app.clips import limit_sentence_length

    clip = Clip(0.0, 10.0, "Chop it. " + "stir " * 6 + "well. Serve.", [4])
    clips, warnings = limit_sentence_length([clip], "x.txt", max_chars=20, action="cut")
    assert [c.sentence for c in clips] == ["Chop it.", "stir stir stir stir", "stir stir well.", "Serve."]
    assert warnings == ["x.txt, line 4: a line of 51 characters, over the limit of 20 (procedures.max_sentence_chars): "
                        "cut into its 3 sentences, and 1 of them still over the limit at spaces: 4 clips"]
    assert [c.start_s for c in clips] == sorted(c.start_s for c in clips) and clips[-1].end_s == 10.0


# ----------------------------------------------------------------------------- issue 55: words in angle brackets kept
@pytest.mark.parametrize("text, cleaned", [
    # The issue's cues: a tag's name followed by words is text, not a tag with an annotation.
    ("Add salt <i think> to the pot.", "Add salt <i think> to the pot."),
    ("Stir the a<b and c>d sauce.", "Stir the a<b and c>d sauce."),
    # Variants: other tag names of the closed set, classes before the words, an unopened closing tag.
    ("Pour <u see> the milk.", "Pour <u see> the milk."),
    ("Cook it <span class thing> slowly.", "Cook it <span class thing> slowly."),
    ("Heat <c.yellow the> oil.", "Heat <c.yellow the> oil."),
    ("Fold in <s and t> the flour.", "Fold in <s and t> the flour."),
    ("Keep it </b and c> warm.", "Keep it </b and c> warm."),
    ("Add salt <i think> to the pot</i>.", "Add salt <i think> to the pot."),
    # A ruby annotation outside a <ruby> element is no reading: nothing after it is dropped.
    ("Add the <rt> and stir well.", "Add the and stir well."),
    ("Stir the a<rt and c>d sauce.", "Stir the a<rt and c>d sauce."),
    ("Then <rp>add</rp> the rest.", "Then add the rest."),
    # Real markup still goes: a voice's speaker, a language tag, attributes, self-closing breaks.
    ("<v Roger Bingham>Chop the onions.</v>", "Chop the onions."),
    ("<lang en-GB>Chop</lang> the onions.", "Chop the onions."),
    ('<i class="x">Chop</i> the <b >onions</b>.', "Chop the onions."),
    ("a<br />b", "a b"),
    ("<ruby class=r>Mix<rt>mikkusu</rt></ruby> well.", "Mix well."),
])
def test_words_in_angle_brackets_that_start_like_a_tag_are_kept(text, cleaned):
    """Issue 55: `Add salt <i think> to the pot.` became "Add salt to the pot." and `a<b and c>d`
    became "ad", without a warning: a known tag name followed by words was taken for a tag with an
    annotation. Only a voice (its speaker) and a language tag carry an annotation that is markup."""
    assert clean_text(text) == cleaned


@pytest.mark.parametrize("name", sorted(MARKUP_TAGS - {"v", "lang"}))
def test_no_tag_name_followed_by_words_loses_a_word(tmp_path, name):
    """Every tag of the closed set, opened or closed, followed by words: each word of the cue reaches
    the clips (issue 55's cases, for every tag name)."""
    words = ["Add", "salt", f"<{name}", "think>", "to", "the", "pot", f"</{name}", "now>", "please."]
    cue = " ".join(words)
    assert clean_text(cue).split() == words
    reading = read_subtitles(srt_file(tmp_path, [(0.0, 3.0, cue), (3.0, 6.0, "Stir it.")]))
    assert [w for c in reading.clips for w in c.sentence.split()] == words + ["Stir", "it."]
    assert reading.checks["warnings"] == []
