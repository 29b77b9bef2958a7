"""The deployed text-only supervised tuple extractor (cookproc.supervised.deploy): saved without
pickles, scored as a cross-validation fold with the new clips held out (what does not depend on them
fitted once, at build), refused when the artifact does not match, and plugged into the procedures."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from cookproc.core.errors import InputError
from cookproc.core.parquet_io import write_parquet
from cookproc.learn.folds import clip_folds, make_folds
from cookproc.learn.sentence_vectors import text_features_schema, text_features_table
from cookproc.srl.parses import SRL_PARSES
from cookproc.supervised import deploy
from test_supervised import LEXICON, PARAMS, lemma
from test_verb_classifier import CLASSIFIER, unsaid_verb_clips

SETTINGS = PARAMS | {"verb_classifier": CLASSIFIER, "prior_verbs": 0}


def _artifact(tmp_path, clips, settings=SETTINGS, vectors=True):
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)
    srl = tmp_path / "srl.parquet"
    write_parquet(SRL_PARSES.empty_table(), srl, SRL_PARSES)
    vectors_path = None
    if vectors:
        vectors_path = tmp_path / "vectors.parquet"
        embeddings = np.random.default_rng(0).normal(size=(len(clips), 4)).astype(np.float32)
        write_parquet(text_features_table(clips["video_id"].tolist(), clips["clip_idx"].tolist(), embeddings),
                      vectors_path, text_features_schema(4))
    meta = {"settings": settings, "srl_backend": "spacy", "sentence_vectors": vectors, "encoder": {},
            "lexicon": sorted(LEXICON), "code": "abc", "path": str(tmp_path / "model"),
            "training": {"n_clips": len(clips), "n_videos": clips["video_id"].nunique(),
                         "n_recipes": clips["recipe"].nunique(), "n_train": int((~inner).sum()),
                         "n_val": int(inner.sum())}}
    deploy.save_extractor(tmp_path / "model", deploy.training_table(clips, fold, inner), srl, vectors_path, meta,
                          lemma=lemma)
    return tmp_path / "model"


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    return _artifact(tmp_path_factory.mktemp("tuples"), unsaid_verb_clips())


def _vectors(n, seed=1):
    return np.random.default_rng(seed).normal(size=(n, 4)).astype(np.float32)


def test_new_clips_get_the_verbs_and_arguments_the_training_recipes_teach(artifact):
    model = deploy.TupleExtractor.load(artifact)
    sentences = ["now chop the onion to the pan", "these are the garlic we bought", "hello friends welcome back"]
    verbs, args = model.extract(sentences, ["a", "a", "a"], [[], [], []], _vectors(3), lemma=lemma)
    assert "chop" in verbs[0] and "onion" in args[0]
    # The annotators' unsaid verb, learnt by the verb classifier from the benchmark's gold.
    assert "take" in verbs[1] and "garlic" in args[1]
    with pytest.raises(ValueError, match="reads sentence vectors: give them"):
        model.extract(sentences, ["a"] * 3, [[], [], []], None, lemma=lemma)
    with pytest.raises(ValueError, match="3 sentences, 2 video ids"):
        model.extract(sentences, ["a"] * 2, [[], [], []], _vectors(3), lemma=lemma)


def test_a_videos_tuples_do_not_depend_on_the_other_files_of_the_call(artifact):
    model = deploy.TupleExtractor.load(artifact)
    first = ["now stir the rice to the pan", "and the salt"]
    second = ["now pour the sugar to the pan"]
    vectors = _vectors(3)
    together = model.extract(first + second, ["a", "a", "b"], [[]] * 3, vectors, lemma=lemma)
    alone_a = model.extract(first, ["a", "a"], [[]] * 2, vectors[:2], lemma=lemma)
    alone_b = model.extract(second, ["b"], [[]], vectors[2:], lemma=lemma)
    assert together[0] == alone_a[0] + alone_b[0] and together[1] == alone_a[1] + alone_b[1]
    # The same call twice: the same tuples (seeded fits, deterministic solvers).
    assert model.extract(first, ["a", "a"], [[]] * 2, vectors[:2], lemma=lemma) == alone_a


NESTED = SETTINGS | {"selection": {"candidates": {
    "boosting": [{"max_iter": 15, "learning_rate": 0.2, "max_leaf_nodes": 7},
                 {"max_iter": 30, "learning_rate": 0.1, "max_leaf_nodes": 3}],
    "verb_classifier": [True, False]}}}


@pytest.mark.parametrize("settings", [SETTINGS, NESTED], ids=["one-candidate", "nested-selection"])
def test_what_was_fitted_once_gives_the_tuples_of_fitting_everything_again(tmp_path, settings):
    clips = unsaid_verb_clips()
    model = deploy.TupleExtractor.load(_artifact(tmp_path, clips, settings=settings))
    fitted = model.meta["fitted"]
    assert model.classifier_probabilities.shape == (len(clips), len(fitted["classifier_verbs"]))
    if settings is NESTED:
        assert set(fitted["choices"]["verbs"]) == {"max_iter", "learning_rate", "max_leaf_nodes", "verb_classifier"}
    sentences = ["now chop the onion to the pan", "these are the garlic we bought", "and stir the rice",
                 "hello friends welcome back", "pour the sugar"]
    videos, frames, vectors = ["a", "a", "a", "b", "b"], [[]] * 5, _vectors(5)
    stored = model.extract(sentences, videos, frames, vectors, lemma=lemma)
    # Every fit again, nested selection included: the cross-validation fold the artifact stands for.
    everything, _ = model._score(sentences, videos, frames, vectors, lemma=lemma)
    assert stored == (everything["verbs"][len(clips):], everything["arguments"][len(clips):])
    assert any(stored[0]) and any(stored[1])


def test_stored_classifier_probabilities_that_do_not_match_are_refused(artifact, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(artifact, copy)
    meta = json.loads((copy / "model.json").read_text())
    meta["fitted"]["classifier_verbs"] = meta["fitted"]["classifier_verbs"] + ["zest"]
    (copy / "model.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"classifier.parquet.*lists 3 verbs|classifier.parquet.*verbs"):
        deploy.TupleExtractor.load(copy)
    (copy / "classifier.parquet").unlink()
    with pytest.raises(InputError, match="missing classifier.parquet"):
        deploy.TupleExtractor.load(copy)


@pytest.mark.parametrize("change, message", [
    (lambda meta: meta | {"format": "other"}, "format 'other'"),
    (lambda meta: meta | {"format_version": 99}, "format version 99"),
    (lambda meta: {k: v for k, v in meta.items() if k != "lexicon"}, "no 'lexicon'"),
    (lambda meta: {k: v for k, v in meta.items() if k != "fitted"}, "no 'fitted'"),
])
def test_a_mismatched_artifact_is_refused_naming_the_file(artifact, tmp_path, change, message):
    copy = tmp_path / "copy"
    shutil.copytree(artifact, copy)
    meta = json.loads((copy / "model.json").read_text())
    (copy / "model.json").write_text(json.dumps(change(meta)))
    with pytest.raises(InputError, match=f"model.json.*{message}"):
        deploy.TupleExtractor.load(copy)


def test_an_incomplete_artifact_is_refused(artifact, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(artifact, copy)
    (copy / "vectors.parquet").unlink()
    with pytest.raises(InputError, match="missing vectors.parquet"):
        deploy.TupleExtractor.load(copy)
    (copy / "srl.parquet").unlink()
    with pytest.raises(InputError, match="missing srl.parquet"):
        deploy.TupleExtractor.load(copy)
    with pytest.raises(InputError, match="not a tuple extractor folder"):
        deploy.TupleExtractor.load(tmp_path / "nothing")
    # Frames from the tagger: new sentences must be parsed by the same tagger, so it travels along.
    tagged = tmp_path / "tagged"
    shutil.copytree(artifact, tagged)
    meta = json.loads((tagged / "model.json").read_text())
    (tagged / "model.json").write_text(json.dumps(meta | {"srl_backend": "tagger"}))
    with pytest.raises(InputError, match="missing tagger.pt"):
        deploy.TupleExtractor.load(tagged)
    (tagged / "tagger.pt").write_bytes(b"")
    assert deploy.TupleExtractor.load(tagged).tagger_model == tagged / "tagger.pt"
    # The tagger is read with torch.load(weights_only=True); any other pickle or code is refused unread.
    (tagged / "extra.pkl").write_bytes(b"x")
    with pytest.raises(InputError, match=r"extra.pkl: refused: weights are loaded from .safetensors files only"):
        deploy.TupleExtractor.load(tagged)


def test_procedures_take_verbs_and_arguments_from_the_artifact_and_need_a_selector(tmp_path):
    from cookproc.app.extractors import SupervisedTuples
    from cookproc.app.procedures import ProcedureSettings, load_extractor

    clips = unsaid_verb_clips()
    path = _artifact(tmp_path, clips, settings=PARAMS | {"prior_verbs": 0}, vectors=False)
    model = deploy.TupleExtractor.load(path)
    seen = []

    def labeller(texts):
        seen.extend(texts)
        return [[] for _ in texts]

    extractor = SupervisedTuples(model, labeller)
    out = extractor.extract(["Now CHOP the onion to the pan", "hello friends welcome back number 7"], videos=[0, 0])
    assert seen == ["now chop the onion to the pan", "hello friends welcome back number 7"]  # lowercased
    assert "chop" in out[0].verbs and out[0].key_probability is None
    assert [t.verb for t in out[0].tuples] == out[0].verbs and all(t.args == tuple(out[0].args) for t in out[0].tuples)
    settings = ProcedureSettings(segmentation="auto", max_clip_s=15.0, drop_sound_tags=True, extractor="srl-heur",
                                 srl_backend="spacy", tagger_model=None, device="cpu", lowercase=True,
                                 keyclip_model=None, tuple_model=str(path))
    with pytest.raises(ValueError, match="needs procedures.step_model or procedures.keyclip_model"):
        load_extractor(settings, LEXICON)


def test_the_model_card_gives_the_cross_validated_cells_with_intervals(artifact):
    from cookproc.evaluation.bootstrap import oracle_cell_intervals
    from cookproc.supervised import extract

    clips = unsaid_verb_clips()
    fold, inner = clip_folds(make_folds(clips, 4, 0, 0.25), clips)
    setups = extract.build_setups(clips, {}, [[] for _ in range(len(clips))], LEXICON, lemma, PARAMS)
    preds, _ = extract.run(clips, fold, inner, setups, PARAMS)
    bootstrap = {"unit": "recipe", "resamples": 200, "seed": 1, "confidence": 0.95}
    cells = oracle_cell_intervals(clips, preds["verbs"], preds["arguments"], bootstrap=bootstrap)
    f1 = {c["field"]: c for c in cells if c["metric"] == "f1"}
    assert set(f1) == {"verbs", "arguments"} and f1["verbs"]["ci_low"] <= f1["verbs"]["value"] <= f1["verbs"]["ci_high"]
    meta = json.loads((artifact / "model.json").read_text())
    card = deploy.model_card("tuples-supervised-text", meta, cells, bootstrap, 12.0)
    assert "| verbs (exact) | " in card and f"{f1['verbs']['value']:.1f} [{f1['verbs']['ci_low']:.1f}" in card
    assert "No pickled model is stored" in card and "--tuples" in card
    assert f"- verbs: learning_rate 0.2, max_iter 15, max_leaf_nodes 7, threshold {meta['fitted']['thresholds']['verbs']}" in card


def test_building_twice_writes_identical_files(artifact, tmp_path):
    again = _artifact(tmp_path, unsaid_verb_clips())
    names = sorted(p.name for p in artifact.iterdir())
    assert names == sorted(p.name for p in again.iterdir()) and "classifier.parquet" in names
    for name in names:
        before, after = (artifact / name).read_bytes(), (again / name).read_bytes()
        if name == "model.json":  # it names its own folder
            before, after = (json.loads(x) for x in (before, after))
            before.pop("path"), after.pop("path")
        assert before == after, name
