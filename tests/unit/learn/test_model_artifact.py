"""The deployed models' shared folder shape (cookproc.learn.deployed_model): saved atomically with its
model.json and card, read back checked, refused when another format, version, key set or spec."""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from cookproc.core.errors import InputError
from cookproc.core.formatting import markdown_table
from cookproc.learn.deployed_model import ModelFormat, card_text, training_summary


@dataclass(frozen=True)
class Spec:
    width: int
    threshold: float


FORMAT = ModelFormat("cookproc.test-model", 3, kind="test model", rule="deploy_test", rebuild="build it again",
                     files=("model.json", "weights.safetensors"), required=("code",), spec=Spec,
                     trusted=("tagger.pt",))


def _save(path, meta, card=None):
    with FORMAT.saving(path, meta, card) as (folder, final):
        (folder / "weights.safetensors").write_bytes(b"w")
        final["fitted"] = {"late": 1}  # what the block adds reaches model.json and the card


def test_saved_folder_reads_back_with_its_format_and_the_card_sees_the_final_model_json(tmp_path):
    path = tmp_path / "model"
    _save(path, {"code": "abc", "spec": {"width": 2, "threshold": 0.5}}, lambda meta: f"late {meta['fitted']['late']}\n")
    meta = FORMAT.read(path)
    assert meta["format"] == "cookproc.test-model" and meta["format_version"] == 3 and meta["fitted"] == {"late": 1}
    assert (path / "MODEL_CARD.md").read_text() == "late 1\n"
    assert (path / "model.json").read_text() == json.dumps(meta, indent=1, sort_keys=True) + "\n"
    (path / "tagger.pt").write_bytes(b"")  # trusted: its loader unpickles no code
    assert FORMAT.open(path)[1] == meta


def test_a_failed_save_leaves_nothing_and_keeps_the_old_folder(tmp_path):
    path = tmp_path / "model"
    _save(path, {"code": "abc", "spec": {"width": 2, "threshold": 0.5}})
    with pytest.raises(RuntimeError):
        with FORMAT.saving(path, {"code": "new"}) as (folder, _):
            (folder / "weights.safetensors").write_bytes(b"half")
            raise RuntimeError("killed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"] and FORMAT.read(path)["code"] == "abc"


@pytest.mark.parametrize("change, message", [
    (lambda m: m | {"format_version": 4}, "format version 4; this code reads version 3: build it again"),
    (lambda m: m | {"format": "other"}, "format 'other', expected 'cookproc.test-model'"),
    (lambda m: {k: v for k, v in m.items() if k != "code"}, "no 'code': not written by this workflow's rule deploy_test"),
    (lambda m: m | {"spec": {"width": 2}}, r"spec does not match this code: missing \['threshold'\], unknown \[\]"),
])
def test_another_format_version_key_set_or_spec_is_refused_naming_model_json(tmp_path, change, message):
    path = tmp_path / "model"
    _save(path, {"code": "abc", "spec": {"width": 2, "threshold": 0.5}})
    meta = json.loads((path / "model.json").read_text())
    (path / "model.json").write_text(json.dumps(change(meta)))
    with pytest.raises(InputError, match=rf"^{path / 'model.json'}: {message}"):
        FORMAT.read(path)


def test_pickles_other_than_the_trusted_files_are_refused_on_open(tmp_path):
    path = tmp_path / "model"
    _save(path, {"code": "abc", "spec": {"width": 2, "threshold": 0.5}})
    (path / "sub").mkdir()
    (path / "sub" / "tagger.pt").write_bytes(b"x")  # trusted by its path in the folder, not by its name
    with pytest.raises(InputError, match=r"sub/tagger.pt: refused"):
        FORMAT.open(path)


def test_training_summary_and_card_layout():
    clips = pd.DataFrame({"video_id": ["a", "a", "b", "c"], "recipe": ["r2", "r2", "r1", "r3"]})
    summary = training_summary(clips, np.array([False, False, True, False]))
    assert summary == {"n_clips": 4, "n_videos": 3, "n_recipes": 3, "n_train": 3, "n_val": 1,
                       "train_recipes": ["r2", "r3"], "val_recipes": ["r1"]}
    card = card_text("m", "Intro.", [("Scores", ["Text.", markdown_table(["a", "b"], [["1", "2"]])])])
    assert card == "# Model card: m\n\nIntro.\n\n## Scores\n\nText.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
