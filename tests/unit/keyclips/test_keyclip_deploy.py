"""The deployed key-clip selector (cookproc.keyclips.deploy): trained on every recipe, saved, loaded
back, and refused when the artifact does not match the code."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from test_keyclip_finetune import _sentences, _tiny_bert

torch = pytest.importorskip("torch")

from cookproc.core.errors import InputError  # noqa: E402
from cookproc.keyclips import deploy  # noqa: E402
from cookproc.keyclips.finetune import FinetuneConfig, finetuned_outputs  # noqa: E402
from cookproc.keyclips.train import KeyClipTrainConfig, predict  # noqa: E402

FINETUNE = FinetuneConfig(layers=1, epochs=2, learning_rate=1e-3, head_learning_rate=1e-2, batch_size=16, max_length=32)
NET = KeyClipTrainConfig(dim=8, hidden=8, learning_rate=1e-2, max_epochs=30, patience=5, threshold_metric="f1", lexical=True,
                         lexical_min_count=2)


def _clips(n=160, seed=0):
    sentences, labels = _sentences(n, seed)
    per_video = 10
    return pd.DataFrame({"video_id": [f"v{i // per_video:02d}" for i in range(n)],
                         "recipe": [f"r{i // (2 * per_video)}" for i in range(n)],
                         "clip_idx": [i % per_video for i in range(n)], "sentence": sentences, "is_key": labels})


def _train(encoder, clips, seed=0):
    inner = clips["recipe"].isin(["r0", "r3"]).to_numpy()
    return deploy.train_selector(clips, inner, encoder_path=str(encoder), finetune=FINETUNE, net=NET,
                                 context_window=1, layout_features=True, head_weight=0.5, seed=seed)


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("enc") / "bert", layers=2)


@pytest.fixture(scope="module")
def trained(encoder):
    return _train(encoder, _clips())


@pytest.fixture(scope="module")
def artifact(trained, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "keyclips-neural-text"
    deploy.save_selector(trained, path, deploy.metadata(trained, config={"finetune": {"layers": 1}}, code="abc123"))
    return path


def test_a_loaded_selector_scores_clips_as_training_did(trained, artifact):
    clips = _clips()
    vectors, head = finetuned_outputs(trained.finetuned, trained.bottom, len(clips))
    data = deploy._net_inputs(clips, vectors, 1, True, trained.vocabulary, np.zeros(len(clips)))
    expected = 0.5 * predict(trained.net, data, np.arange(len(clips))) + 0.5 * head

    selector = deploy.KeyClipSelector.load(artifact)
    probability, is_key = selector.score(clips)
    np.testing.assert_allclose(probability, expected, atol=1e-5)
    assert np.array_equal(is_key, probability >= trained.spec.threshold)
    # It learned the task: "chop" marks key clips in the synthetic data.
    assert (is_key == clips["is_key"].to_numpy()).mean() > 0.8


def test_new_clips_need_no_labels_and_keep_their_order(artifact):
    selector = deploy.KeyClipSelector.load(artifact)
    clips = pd.DataFrame({"video_id": ["a"] * 4, "clip_idx": [0, 1, 2, 3],
                          "sentence": ["so really good", "and the salt", "chop the onion now", "we like this soup"]})
    probability, is_key = selector.score(clips)
    assert probability.shape == (4,) and is_key.tolist() == (probability >= selector.spec.threshold).tolist()
    # Neither is first or last (position is a feature): the word the labels follow decides.
    assert probability[2] > probability[1]
    with pytest.raises(ValueError, match="consecutive"):
        selector.score(pd.DataFrame({"video_id": ["a", "b", "a"], "clip_idx": [0, 0, 1],
                                     "sentence": ["x", "y", "z"]}))


def test_scoring_moves_no_module_and_gives_the_same_scores_every_call(artifact, monkeypatch):
    """The encoder's bottom and finetuned top go to the device once, when the selector loads: a corpus
    calls score once per chunk, and each call used to copy the whole encoder and move it."""
    selector = deploy.KeyClipSelector.load(artifact)
    bottom, finetuned = selector.bottom, selector.finetuned
    moved = []
    real_to = torch.nn.Module.to

    def counting_to(module, *args, **kwargs):
        moved.append(type(module).__name__)
        return real_to(module, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", counting_to)
    clips = _clips(40, seed=3)
    first, second = selector.score(clips), selector.score(clips)
    assert moved == []
    assert selector.bottom is bottom and selector.finetuned is finetuned
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    # The same scores as a selector loaded afresh for this one call (what each call used to build).
    np.testing.assert_array_equal(deploy.KeyClipSelector.load(artifact).score(clips)[0], first[0])


def test_training_twice_writes_identical_files(encoder, artifact, tmp_path):
    again = tmp_path / "again"
    selector = _train(encoder, _clips())
    deploy.save_selector(selector, again, deploy.metadata(selector, config={"finetune": {"layers": 1}}, code="abc123"),
                         card="# card\n")
    assert (again / "MODEL_CARD.md").read_text() == "# card\n"
    for name in ("model.json", "vocabulary.json", "net.safetensors", "finetuned_top.safetensors"):
        assert (again / name).read_bytes() == (artifact / name).read_bytes(), name
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left
    # Readable by every job of a cluster (a private temporary folder would not be).
    umask = os.umask(0)
    os.umask(umask)
    assert all(p.stat().st_mode & 0o777 == (0o777 if p.is_dir() else 0o666) & ~umask
               for p in [again, *again.rglob("*")])


def _copy(artifact, tmp_path):
    dest = tmp_path / "copy"
    shutil.copytree(artifact, dest)
    return dest


def _edit_meta(path, change):
    meta = json.loads((path / "model.json").read_text())
    change(meta)
    (path / "model.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("change, message", [
    (lambda m: m.update(format_version=deploy.ARTIFACT.version + 1), "format version"),
    (lambda m: m.update(format="something-else"), "format 'something-else'"),
    (lambda m: m["spec"].pop("threshold"), "missing \\['threshold'\\]"),
    (lambda m: m["spec"].update(extra=1), "unknown \\['extra'\\]"),
    (lambda m: m["spec"].update(hidden=m["spec"]["hidden"] + 3), "net.safetensors: weights do not match"),
    (lambda m: m["spec"].update(vocab_size=m["spec"]["vocab_size"] + 1), "vocabulary.json"),
    (lambda m: m["spec"].update(finetuned_layers=2), "finetuned_top.safetensors"),
], ids=["version", "format", "missing-field", "unknown-field", "net-shape", "vocabulary", "finetuned-layers"])
def test_a_mismatched_artifact_is_refused_naming_the_file(artifact, tmp_path, change, message):
    path = _copy(artifact, tmp_path)
    _edit_meta(path, change)
    with pytest.raises(InputError, match=message):
        deploy.KeyClipSelector.load(path)


def test_an_incomplete_artifact_is_refused(artifact, tmp_path):
    path = _copy(artifact, tmp_path)
    (path / "net.safetensors").unlink()
    with pytest.raises(InputError, match="missing net.safetensors"):
        deploy.KeyClipSelector.load(path)
    with pytest.raises(InputError, match="not a key-clip selector folder"):
        deploy.KeyClipSelector.load(tmp_path / "nowhere")


def test_the_model_card_gives_the_cross_validated_scores_and_the_threshold(trained, artifact):
    meta = deploy.read_model_json(artifact)
    rows = [{"run": "seed0", "accuracy": 83.41, "precision": 60.0, "recall": 75.0, "f1": 66.66}]
    card = deploy.model_card("keyclips-neural-text", meta, trained.seconds, rows,
                             {"unit": "recipe", "resamples": 100, "metrics": {"f1": (63.0, 70.0)}})
    assert "| seed0 | 83.4 | 60.0 | 75.0 | 66.7 |" in card
    assert f"{trained.spec.threshold:.4f}" in card and "f1 [63.0, 70.0]" in card
    assert f"{trained.info['n_train']} clips" in card


def test_video_chunks_never_split_a_video():
    from cookproc.app.extractors import video_chunks

    videos = ["a"] * 3 + ["b"] * 1 + ["c"] * 4 + ["d"] * 2
    assert video_chunks(videos, 4) == [(0, 4), (4, 8), (8, 10)]
    assert video_chunks(videos, 1) == [(0, 3), (3, 4), (4, 8), (8, 10)]
    assert video_chunks(videos, 100) == [(0, 10)] and video_chunks([], 5) == []


def test_selected_key_clips_score_each_video_alone(artifact, monkeypatch):
    """Chunks of whole videos (a corpus shard scores thousands) give what one pass gives: a clip's
    score depends on its own video only, so shards and chunking never change it."""
    from cookproc.app import extractors
    from cookproc.app.extractors import SelectedKeyClips, make_extractor

    sentences = ["so really good", "chop the onion now", "and salt", "we like this soup", "chop the soup",
                 "now we chop", "really good soup"]
    videos = [0, 0, 0, 1, 1, 2, 2]
    tuples = make_extractor("srl", labeller=lambda texts: [[] for _ in texts])
    selected = SelectedKeyClips(deploy.KeyClipSelector.load(artifact), tuples)
    whole = selected.extract(sentences, videos=videos)
    monkeypatch.setattr(extractors, "SELECTOR_CHUNK_SENTENCES", 1)
    chunked = selected.extract(sentences, videos=videos)
    # Equal up to the float rounding of other batch shapes (padding to another length).
    np.testing.assert_allclose([e.key_probability for e in chunked], [e.key_probability for e in whole], atol=1e-6)
    alone = selected.extract(sentences[3:5])  # video 1 by itself
    np.testing.assert_allclose([e.key_probability for e in alone], [e.key_probability for e in whole[3:5]], atol=1e-6)
    assert [e.is_key for e in whole] == [e.key_probability >= selected.selector.spec.threshold for e in whole]
    assert selected.key_clips_by == "keyclips-neural-text" and selected.name == "keyclips-neural-text + srl-spacy"


def test_the_candidate_that_wins_on_inner_validation_is_chosen_though_it_loses_elsewhere(encoder, monkeypatch):
    """Two candidates built to disagree: the encoder's head alone (head_weight 1) ranks the inner-
    validation clips perfectly and every other clip backwards; the net alone (head_weight 0) the
    reverse. Choosing on the inner-validation recipes must pick the head, the loser outside them;
    a choice that looked at any other clip would pick the net."""
    from cookproc.scoring.metrics import score_keyclips

    clips = _clips()
    inner = clips["recipe"].isin(["r0", "r3"]).to_numpy()
    labels = clips["is_key"].to_numpy().astype(float)
    right, backwards = labels, 1.0 - labels
    head_scores = np.where(inner, right, backwards)
    net_scores = np.where(inner, backwards, right)
    real_finetuned_outputs = deploy.finetuned_outputs

    def finetuned_outputs(finetuned, bottom, n):
        vectors, _ = real_finetuned_outputs(finetuned, bottom, n)
        return vectors, head_scores.copy()

    monkeypatch.setattr(deploy, "finetuned_outputs", finetuned_outputs)
    monkeypatch.setattr(deploy, "predict", lambda model, data, rows: net_scores[rows])
    trained = deploy.train_selector(clips, inner, encoder_path=str(encoder), finetune=FINETUNE, net=NET,
                                    context_window=1, layout_features=True, head_weight=0.5, seed=0,
                                    candidates={"head_weight": [0.0, 1.0], "threshold_metric": ["f1"]},
                                    objective="f1")
    assert trained.info["selected"]["head_weight"] == 1.0 and trained.spec.head_weight == 1.0
    assert trained.info["selection_value"] == 1.0
    values = {row["head_weight"]: row["value"] for row in trained.info["candidates"]}
    assert values[0.0] < values[1.0]
    # Outside the inner-validation recipes the chosen candidate is the loser, as built.
    outside = ~inner
    chosen = score_keyclips(labels[outside] > 0.5, head_scores[outside] >= trained.spec.threshold)
    other = score_keyclips(labels[outside] > 0.5, net_scores[outside] >= 0.5)
    assert chosen.f1 < other.f1 and other.f1 == 1.0


def test_the_deployed_selector_compares_the_candidates_of_its_cross_validated_runs(encoder, monkeypatch):
    """The same config gives the deployed selector (rule deploy_keyclip_selector) and each fold of
    the cross-validated run (rule keyclips_neural_text) the same candidates, in the same order (which
    breaks ties): both build them with keyclips.neural.CandidateGrid. Compared as each records them
    (settings and threshold rule per row), with the nets' training stubbed out."""
    from cookproc.keyclips.neural import CandidateGrid, net_candidates
    from cookproc.learn.keyclip_crossval import candidates_with_heads, nested_cross_validate
    from cookproc.learn.folds import clip_folds, make_folds

    candidates = {"context_window": [0, 1], "lexical": [True, False], "head_weight": [0.0, 0.7],
                  "threshold_metric": ["f1", "calibrated_f1"]}
    config = dict(context_window=1, head_weight=0.5)  # the single values of settings without candidates
    clips = _clips()
    rng = np.random.default_rng(0)
    monkeypatch.setattr(deploy, "train_model", lambda *args: (None, {}))
    monkeypatch.setattr(deploy, "predict", lambda model, data, rows: rng.random(len(rows)))
    trained = deploy.train_selector(clips, clips["recipe"].isin(["r0", "r3"]).to_numpy(), encoder_path=str(encoder),
                                    finetune=FINETUNE, net=NET, layout_features=True, seed=0, candidates=candidates,
                                    objective="f1", **config)
    deployed = [{k: v for k, v in row.items() if k != "value"} for row in trained.info["candidates"]]

    fold, inner = clip_folds(make_folds(clips, 2, 0, 0.5), clips)
    grid = CandidateGrid.from_config(candidates, lexical=NET.lexical, threshold_metric=NET.threshold_metric, **config)
    nets = net_candidates("text", NET, grid, lambda vectors, window: vectors, frozen=np.zeros((len(clips), 4)))

    def stub(train, val, test):
        return rng.random(len(val)), rng.random(len(test)), {}

    heads = {f: rng.random(len(clips)) for f in (0, 1)}
    fit = candidates_with_heads([(net.settings, stub) for net in nets], fold, heads, grid.head_weights)
    result = nested_cross_validate(fold, inner, clips["is_key"].to_numpy(), fit, list(grid.threshold_metrics),
                                   clips["recipe"].astype(str).to_numpy(), "f1")
    for f in (0, 1):
        crossval = [{k: v for k, v in row.items() if k != "value"} for row in result.info[f]["candidates"]]
        assert crossval == deployed
    assert len(deployed) == 2 * 2 * 2 * 2


def test_candidates_are_chosen_on_inner_validation_recipes_and_saved_with_the_choice(encoder, tmp_path):
    clips = _clips()
    inner = clips["recipe"].isin(["r0", "r3"]).to_numpy()
    candidates = {"context_window": [0, 1], "head_weight": [0.0, 1.0], "threshold_metric": ["f1", "calibrated_f1"]}
    trained = deploy.train_selector(clips, inner, encoder_path=str(encoder), finetune=FINETUNE, net=NET,
                                    context_window=1, layout_features=True, head_weight=0.5, seed=0,
                                    candidates=candidates, objective="f1")
    info, spec = trained.info, trained.spec
    assert len(info["candidates"]) == 8  # 2 windows x 2 weights x 2 rules (lexical: NET's single value)
    assert info["selection_value"] == max(row["value"] for row in info["candidates"])
    selected = info["selected"]
    assert (spec.context_window, spec.head_weight, spec.threshold_metric, spec.lexical) == (
        selected["context_window"], selected["head_weight"], selected["threshold_metric"], selected["lexical"])
    # The saved net reads the chosen window: 2w + 1 finetuned vectors and the 4 layout features.
    assert spec.text_dim == trained.bottom.hidden_size * (2 * spec.context_window + 1) + 4
    path = tmp_path / "selected"
    meta = deploy.metadata(trained, config={"finetune": {"layers": 1}}, code="abc123")
    card = deploy.model_card("selected", meta, trained.seconds, [], None)
    deploy.save_selector(trained, path, meta, card)
    assert "chosen among the configured candidates on the inner-validation recipes only" in card
    probability, is_key = deploy.KeyClipSelector.load(path).score(clips)
    assert np.array_equal(is_key, probability >= spec.threshold)
    with pytest.raises(ValueError, match=r"head_weight must be in \[0, 1\]"):
        deploy.train_selector(clips, inner, encoder_path=str(encoder), finetune=FINETUNE, net=NET, context_window=1,
                              layout_features=True, head_weight=0.5, seed=0, candidates={"head_weight": [2.0]})


# ----------------------------------------------------------------------------- issue 37: safetensors only

class _Payload:
    """Unpickling this runs a shell command that creates ``marker``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import shlex

        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def _crafted(artifact, tmp_path):
    crafted = tmp_path / "crafted"
    shutil.copytree(artifact, crafted)
    return crafted


def test_a_pickle_in_the_encoder_folder_is_refused_naming_it_before_anything_loads(artifact, tmp_path, monkeypatch):
    crafted = _crafted(artifact, tmp_path)
    marker = tmp_path / "pwned"
    torch.save({"weight": _Payload(marker)}, crafted / "encoder" / "pytorch_model.bin")
    import transformers

    def never(*args, **kwargs):
        raise AssertionError("a model was loaded")
    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", never)
    with pytest.raises(InputError) as caught:
        deploy.KeyClipSelector.load(crafted)
    assert str(caught.value) == (
        f"{crafted / 'encoder' / 'pytorch_model.bin'}: refused: weights are loaded from .safetensors files only, and "
        ".bin files can hold pickled code; remove it (convert it to safetensors if it is the only copy of the weights)")
    assert not marker.exists()


@pytest.mark.parametrize("craft, culprit, message", [
    (lambda d: (d / "net.pt").write_bytes(b"x"), "net.pt", "weights are loaded from .safetensors files only"),
    (lambda d: (d / "encoder" / "model.ckpt").write_bytes(b"x"), "encoder/model.ckpt", ".ckpt files"),
    (lambda d: (d / "extra.PKL").write_bytes(b"x"), "extra.PKL", ".pkl files"),
    (lambda d: (d / "encoder" / "modeling_evil.py").write_text("import os\n"), "encoder/modeling_evil.py",
     "a model folder must hold no code"),
    (lambda d: (d / "encoder" / "config.json").write_text(json.dumps(
        {**json.loads((d / "encoder" / "config.json").read_text()), "auto_map": {"AutoModel": "evil.Model"}})),
     "encoder/config.json", "'auto_map' asks to run code shipped with the model"),
    (lambda d: (d / "encoder" / "tokenizer_config.json").write_text(json.dumps(
        {**json.loads((d / "encoder" / "tokenizer_config.json").read_text()), "trust_remote_code": True})),
     "encoder/tokenizer_config.json", "'trust_remote_code' asks to run code"),
])
def test_other_weight_formats_and_code_hooks_are_refused(artifact, tmp_path, craft, culprit, message):
    crafted = _crafted(artifact, tmp_path)
    craft(crafted)
    with pytest.raises(InputError, match=rf"^{crafted / culprit}: refused: .*{message}"):
        deploy.KeyClipSelector.load(crafted)


def test_an_encoder_without_safetensors_weights_is_refused(artifact, tmp_path):
    crafted = _crafted(artifact, tmp_path)
    (crafted / "encoder" / "model.safetensors").unlink()
    with pytest.raises(InputError, match=rf"^{crafted / 'encoder'}: cannot load it as a Hugging Face model with "
                                         "safetensors weights"):
        deploy.KeyClipSelector.load(crafted)


def test_sentence_encoders_refuse_foreign_modules_and_pickles(encoder, tmp_path):
    from cookproc.keyclips.sentence_encoder import load_sentence_encoder

    folder = tmp_path / "st"
    shutil.copytree(encoder, folder)
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "name": "0", "path": "",
                                                      "type": "my_package.EvilModule"}]))
    with pytest.raises(InputError, match=r"modules.json: refused: module type 'my_package.EvilModule' is not one of "
                                         r"sentence-transformers' own"):
        load_sentence_encoder(folder)
    (folder / "modules.json").unlink()
    load_sentence_encoder(folder)  # the plain transformer loads
    (folder / "pytorch_model.bin").write_bytes(b"x")
    with pytest.raises(InputError, match=r"pytorch_model.bin: refused"):
        load_sentence_encoder(folder)


def test_the_shipped_encoders_hold_safetensors_and_pass_the_check():
    """The packaged MiniLM and, when installed, all-mpnet-base-v2 (data/encoders) load as before."""
    from cookproc.data import encoders
    from cookproc.core.model_folders import refuse_unsafe_model_files
    from cookproc.keyclips.sentence_encoder import default_encoder_path, load_sentence_encoder

    folders = [default_encoder_path()]
    mpnet = encoders.install_root() / "all-mpnet-base-v2"
    if (mpnet / "model.safetensors").is_file():
        folders.append(mpnet)
    for folder in folders:
        assert (folder / "model.safetensors").is_file(), folder
        refuse_unsafe_model_files(folder)
    encoder = load_sentence_encoder(None)
    assert encoder.encode_batch(["chop the onion"]).shape == (1, encoder.dim)
