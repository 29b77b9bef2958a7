"""Step texts scored as captions (cookproc.scoring.captioning: pycocoevalcap's BLEU-4, METEOR,
ROUGE-L, CIDEr-D) and the people's text scores built on it (cookproc.evaluation.people.text_scores)."""
from __future__ import annotations

import math

import pytest

from cookproc.evaluation import people
from cookproc.evaluation.people_steps import ScoredStep, text_scores
from cookproc.scoring.captioning import METRICS, caption_scores

REFERENCES = {"a": ["add the flour and the sugar to the bowl"], "b": ["flip the pancake with a spatula"],
              "c": ["cook the other side for a minute"], "d": ["heat some butter in a pan"]}


def test_a_copy_of_the_reference_scores_highest_and_a_shorter_text_lower():
    # Each call starts Java twice (the tokenizer, METEOR): two calls only.
    copy = caption_scores({k: v[0] for k, v in REFERENCES.items()}, REFERENCES)
    close = caption_scores({"a": "add the flour and sugar", "b": "flip the pancake", "c": "cook the other side",
                            "d": "heat the butter"}, REFERENCES)
    assert copy["bleu4"] == pytest.approx(100, abs=1e-3) and copy["rouge_l"] == pytest.approx(100)
    assert copy["meteor"] > 90
    for metric in METRICS:
        assert copy[metric] > close[metric] > 0, metric


def test_items_must_match_and_no_item_is_undefined():
    assert all(math.isnan(v) for v in caption_scores({}, {}).values())
    with pytest.raises(ValueError, match="not both"):
        caption_scores({"a": "add flour"}, {"b": ["add flour"]})


def test_matched_steps_go_with_their_captions_and_each_procedure_is_one_paragraph(monkeypatch):
    calls = []

    def recorded(hypotheses, references):
        calls.append((dict(hypotheses), dict(references)))
        return {metric: float(len(calls)) for metric in METRICS}

    monkeypatch.setattr("cookproc.scoring.captioning.caption_scores", recorded)
    captions = {"v": [ScoredStep(("whisk",), ("egg",), "whisk the eggs in a bowl"),
                      ScoredStep(("flip",), ("pancake",), "flip the pancake")],
                "w": [ScoredStep(("serve",), (), "serve it")]}
    # v's second step shares no verb with a caption; w has no procedure (an empty paragraph).
    steps = {"v": [ScoredStep(("whisk",), ("egg",), "whisk two eggs"), ScoredStep(("pour",), ("batter",),
                                                                                  "pour the batter")]}
    scores = text_scores(steps, captions)
    (matched_hyp, matched_ref), (paragraph_hyp, paragraph_ref) = calls
    assert matched_hyp == {"v/0": "whisk two eggs"} and matched_ref == {"v/0": ["whisk the eggs in a bowl"]}
    assert paragraph_hyp == {"v": "whisk two eggs pour the batter", "w": ""}
    assert paragraph_ref == {"v": ["whisk the eggs in a bowl flip the pancake"], "w": ["serve it"]}
    assert scores["matched_steps"] == 1 and scores["matched_bleu4"] == 1.0 and scores["paragraph_cider_d"] == 2.0
    assert people.TEXT_COLUMNS == [f"{u}_{m}" for u in ("matched", "paragraph") for m in METRICS]
