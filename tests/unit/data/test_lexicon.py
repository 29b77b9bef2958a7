"""The cooking lexicon rebuilt the paper's way."""
from collections import Counter

from cookproc.data.lexicon import build_lexicon, count_first_words, first_word, overlap_report


def test_first_word():
    assert first_word("  Chop the onions") == "chop"
    assert first_word("stir-fry the beef") == "stir-fry"
    assert first_word("2 cups of rice") is None


def test_counts_exclude_benchmark_videos(tmp_path):
    (tmp_path / "a.txt").write_text("add salt\nadd oil\nchop onions\n")
    (tmp_path / "bench.txt").write_text("add water\n")
    counts, videos, captions = count_first_words(tmp_path, ["bench"])
    assert counts == Counter({"add": 2, "chop": 1}) and videos == 1 and captions == 3


def test_frequency_synset_and_stop_list_filters():
    counts = Counter({"add": 9, "go": 9, "the": 9, "chop": 6, "dice": 5})
    verbs = {"add", "go", "chop", "dice"}
    lexicon = build_lexicon(counts, min_count=6, has_verb_synset=verbs.__contains__)
    assert lexicon == ["add", "chop"]  # "go": stop list; "the": no verb synset; "dice": 5 is not > 5


def test_overlap_report():
    r = overlap_report(["add", "chop"], ["add", "oil", ""])
    assert r["both"] == 1 and r["upstream"] == 2 and r["jaccard"] == 1 / 3
