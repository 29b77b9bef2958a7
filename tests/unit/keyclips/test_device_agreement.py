"""The device path against the CPU path on the test fixtures, when a CUDA device is present
(skipped otherwise). What the docs promise (docs/methods.md, "Determinism"): the same weights give
embeddings and probabilities within a small tolerance of the CPU's and identical tags, and with
torch.deterministic a GPU run repeats bit for bit. Training itself differs between devices (the
GPU draws its dropout masks from its own generator), so the comparisons use the same weights."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

from cookproc.core.torch_runtime import configure_torch  # noqa: E402
from cookproc.keyclips import finetune as ft  # noqa: E402
from cookproc.keyclips import frozen_bottom as fb
from test_keyclip_deploy import _clips, _train  # noqa: E402
from test_keyclip_finetune import _sentences, _tiny_bert  # noqa: E402

# Float32 on both sides; the real-size measurements were 1.8e-6 (embeddings) and 9.5e-7
# (selector probabilities). The tiny fixture models sit well inside these.
EMBEDDING_TOL = 1e-5
PROBABILITY_TOL = 1e-5


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("enc") / "bert", layers=2)


@pytest.fixture(autouse=True)
def _reset_determinism():
    yield
    torch.use_deterministic_algorithms(False)


def test_frozen_bottom_and_finetuned_vectors_match_the_cpu(bert):
    sentences, labels = _sentences(80)
    cpu = fb.load_bottom(bert, sentences, 1)
    gpu = fb.load_bottom(bert, sentences, 1, device="cuda")
    for i in range(len(sentences)):
        np.testing.assert_allclose(gpu.states[i].numpy(), cpu.states[i].numpy(), atol=EMBEDDING_TOL)
    net, _ = ft.train_top(cpu, labels, np.arange(60), np.arange(60, 80), ft.FinetuneConfig(layers=1, batch_size=8), 0)
    vectors_cpu, head_cpu = ft.finetuned_outputs(net, cpu, len(sentences))
    vectors_gpu, head_gpu = ft.finetuned_outputs(net.to("cuda"), gpu, len(sentences))
    np.testing.assert_allclose(vectors_gpu, vectors_cpu, atol=EMBEDDING_TOL)
    np.testing.assert_allclose(head_gpu, head_cpu, atol=PROBABILITY_TOL)


def test_gpu_fine_tuning_trains_and_repeats_bit_for_bit_when_deterministic(bert):
    sentences, labels = _sentences(120)
    configure_torch(1, "cuda", deterministic=True)
    bottom = fb.load_bottom(bert, sentences, 1, device="cuda")
    cfg = ft.FinetuneConfig(layers=1, epochs=10, learning_rate=1e-2, head_learning_rate=5e-2, batch_size=8, chunk_batches=4)
    runs = [ft.finetune_sentence_vectors(bottom, labels, np.arange(90), np.arange(90, 120), cfg, 0) for _ in range(2)]
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][2] == runs[1][2]
    # It learned the fixture's signal ("chop" marks the key clips) on the GPU.
    assert ((runs[0][1][90:] > 0.5) == labels[90:]).mean() > 0.8


def test_gpu_mixed_precision_trains_within_reach_of_float32(bert):
    sentences, labels = _sentences(120)
    bottom = fb.load_bottom(bert, sentences, 1, device="cuda")
    cfg = ft.FinetuneConfig(layers=1, epochs=10, learning_rate=1e-2, head_learning_rate=5e-2, batch_size=8, chunk_batches=4,
                            mixed_precision="bf16")
    _, head, _ = ft.finetune_sentence_vectors(bottom, labels, np.arange(90), np.arange(90, 120), cfg, 0)
    assert head.dtype == np.float64 and np.isfinite(head).all()
    assert ((head[90:] > 0.5) == labels[90:]).mean() > 0.8


def test_the_deployed_selector_scores_on_the_gpu_as_on_the_cpu(tmp_path):
    from cookproc.keyclips import deploy

    encoder = _tiny_bert(tmp_path / "bert", layers=2)
    trained = _train(encoder, _clips())
    path = tmp_path / "selector"
    deploy.save_selector(trained, path, deploy.metadata(trained, config={}, code="test"))
    clips = _clips(60, seed=5)
    on_cpu, _ = deploy.KeyClipSelector.load(path).score(clips)
    selector = deploy.KeyClipSelector.load(path, device="cuda")
    on_gpu, is_key = selector.score(clips)
    np.testing.assert_allclose(on_gpu, on_cpu, atol=PROBABILITY_TOL)
    clear = np.abs(on_cpu - selector.spec.threshold) > PROBABILITY_TOL
    assert np.array_equal(is_key[clear], (on_cpu >= selector.spec.threshold)[clear])


def test_the_srl_tagger_tags_on_the_gpu_as_on_the_cpu():
    from cookproc.srl import training as T
    from fixtures import tagger_settings
    from test_srl_training import tiny_prepared

    prep = tiny_prepared()
    cfg = tagger_settings(epochs=20, batch_size=5, learning_rate=1e-2, hidden=16, projection=32, dropout=0.0, seed=1)
    tagger, _ = T.train(prep, cfg, n_layers=2, dim=8)
    instances, _ = T.instances_for(tagger, prep, "train")
    on_cpu = tagger.predict(instances, prep.features)
    on_gpu = tagger.predict(instances, prep.features, device="cuda")
    assert [tags for tags, _ in on_gpu] == [tags for tags, _ in on_cpu]
    for (_, p_gpu), (_, p_cpu) in zip(on_gpu, on_cpu):
        np.testing.assert_allclose(np.asarray(p_gpu, dtype=float), np.asarray(p_cpu, dtype=float), atol=PROBABILITY_TOL)


def test_sentence_embeddings_match_the_cpu(bert):
    from cookproc.keyclips.sentence_encoder import embed_sentences, load_sentence_encoder

    sentences, _ = _sentences(50)
    cpu = embed_sentences(sentences, load_sentence_encoder(bert, device="cpu"))
    gpu = embed_sentences(sentences, load_sentence_encoder(bert, device="cuda"))
    np.testing.assert_allclose(gpu, cpu, atol=EMBEDDING_TOL)
