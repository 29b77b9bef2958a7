"""The neural key-clip selector: attention, fusion, masking, determinism, learning a toy signal."""
import numpy as np
import pytest
import torch

from cookproc.learn.inputs import VisualSets
from cookproc.keyclips.net import KeyClipNet, masked_attention, outer_fusion
from cookproc.learn.thresholds import best_threshold
from cookproc.keyclips.train import ClipInputs, KeyClipTrainConfig, predict, train_model

torch.set_num_threads(1)


def test_attention_shapes_and_weights_sum_to_one():
    torch.manual_seed(0)
    q, k = torch.randn(3, 8), torch.randn(3, 5, 8)
    mask = torch.ones(3, 5, dtype=torch.bool)
    w, v = masked_attention(q, k, mask)
    assert w.shape == (3, 5) and v.shape == (3, 8)
    assert torch.allclose(w.sum(1), torch.ones(3))
    # a = softmax(s . X / sqrt(d)), attended = sum a_i x_i
    expected = torch.softmax(torch.einsum("bd,btd->bt", q, k) / np.sqrt(8), dim=1)
    assert torch.allclose(w, expected)
    assert torch.allclose(v, torch.einsum("bt,btd->bd", expected, k))


def test_padded_members_get_no_weight_and_do_not_change_the_result():
    torch.manual_seed(0)
    q, k = torch.randn(2, 4), torch.randn(2, 3, 4)
    mask = torch.tensor([[True, True, False], [True, False, False]])
    w, v = masked_attention(q, k, mask)
    assert (w[~mask] == 0).all()
    garbage = k.clone()
    garbage[~mask] = 1e6  # whatever sits in padded slots must not matter
    w2, v2 = masked_attention(q, garbage, mask)
    assert torch.allclose(w, w2) and torch.allclose(v, v2)
    w1, v1 = masked_attention(q[1:], k[1:, :1], mask[1:, :1])  # same as the unpadded set
    assert torch.allclose(v[1], v1[0])


def test_empty_set_gives_zero_vector_not_nan():
    w, v = masked_attention(torch.randn(1, 4), torch.randn(1, 2, 4), torch.zeros(1, 2, dtype=torch.bool))
    assert torch.equal(w, torch.zeros(1, 2)) and torch.equal(v, torch.zeros(1, 4))


def test_outer_fusion_keeps_both_vectors_and_their_products():
    s, v = torch.tensor([[2.0, 3.0]]), torch.tensor([[5.0, 7.0, 11.0]])
    f = outer_fusion(s, v)
    assert f.shape == (1, 3 * 4)
    grid = f.view(3, 4)
    assert torch.equal(grid[:2, :3], torch.outer(s[0], v[0]))
    assert torch.equal(grid[:2, 3], s[0]) and torch.equal(grid[2, :3], v[0]) and grid[2, 3] == 1


@pytest.mark.parametrize("variant,fused", [("text", 6), ("visual", 6), ("full", 49)])
def test_variants_output_one_logit_per_clip(variant, fused):
    torch.manual_seed(0)
    net = KeyClipNet(variant, text_dim=10, visual_dim=7, vocab_size=20, dim=6, hidden=5)
    text, visual = torch.randn(4, 10), torch.randn(4, 3, 7)
    mask = torch.tensor([[1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]], dtype=torch.bool)
    tokens = torch.tensor([[1, 2, 0], [3, 0, 0], [0, 0, 0], [19, 20, 4]])
    vec, weights = net.encode(text, visual, mask, tokens)
    assert vec.shape == (4, fused)
    assert (weights is None) == (variant == "text")
    assert net(text=text, visual=visual, mask=mask, tokens=tokens).shape == (4,)


def test_text_variant_ignores_visual_input_and_visual_variant_ignores_text():
    torch.manual_seed(0)
    text_net = KeyClipNet("text", 10, 7, dim=6, hidden=5).eval()
    vis_net = KeyClipNet("visual", 10, 7, dim=6, hidden=5).eval()
    text, visual, mask = torch.randn(2, 10), torch.randn(2, 3, 7), torch.ones(2, 3, dtype=torch.bool)
    assert torch.equal(text_net(text, visual, mask), text_net(text, -visual, mask))
    assert torch.equal(vis_net(text, visual, mask), vis_net(-text, visual, mask))
    assert not torch.equal(vis_net(text, visual, mask), vis_net(text, -visual, mask))


def test_best_threshold_maximises_f1_on_the_given_clips():
    labels = np.array([1, 1, 0, 1, 0, 0])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])
    t = best_threshold(labels, scores, "f1")
    assert 0.2 < t < 0.6  # predicting the top 4 gives F1 6/7, the best cut
    assert best_threshold(labels, scores, "accuracy") == pytest.approx(0.75)  # top 2: 5/6 correct



def test_f1_accuracy_threshold_trades_a_little_f1_for_accuracy():
    labels = np.array([1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0], dtype=bool)
    scores = np.linspace(0.95, 0.05, len(labels))

    def predicted(metric):
        return int((scores >= best_threshold(labels, scores, metric)).sum())

    # Top 10: F1 12/16 (best), accuracy 10/14; top 3: accuracy 11/14 (best, tied with top 5 and the
    # higher threshold wins), F1 6/9; top 5: F1 8/11 and accuracy 11/14, the best mean of the two.
    assert (predicted("f1"), predicted("accuracy"), predicted("f1_accuracy")) == (10, 3, 5)
    with pytest.raises(ValueError, match="threshold metric"):
        best_threshold(labels, scores, "auc")


def test_calibrated_thresholds_follow_the_platt_probabilities():
    from cookproc.learn.thresholds import platt_scaling

    rng = np.random.default_rng(0)
    true_p = rng.uniform(0.01, 0.99, 40000)
    labels = rng.random(true_p.size) < true_p
    # The model is over-confident and biased: its score is sigmoid(2 * logit(p) + 1).
    logit = np.log(true_p / (1 - true_p))
    scores = 1 / (1 + np.exp(-(2 * logit + 1)))
    a, b = platt_scaling(labels, scores)
    assert a == pytest.approx(0.5, abs=0.02) and b == pytest.approx(-0.5, abs=0.03)
    # Expected accuracy is best where the calibrated probability is 1/2: score sigmoid(1) = 0.731.
    assert best_threshold(labels, scores, "calibrated_accuracy") == pytest.approx(0.731, abs=0.01)
    # Expected F1 is best where the calibrated probability is F1*/2 (Lipton et al. 2014), below 1/2.
    t_f1 = best_threshold(labels, scores, "calibrated_f1")
    p_at = 1 / (1 + np.exp(-(a * np.log(t_f1 / (1 - t_f1)) + b)))
    predicted = scores >= t_f1
    f1 = 2 * (predicted & labels).sum() / (predicted.sum() + labels.sum())
    assert p_at == pytest.approx(f1 / 2, abs=0.02)
    # The mean of the two lies between them.
    assert t_f1 < best_threshold(labels, scores, "calibrated_f1_accuracy") < 0.731


def test_calibrated_threshold_uses_the_labels_when_scores_fall_with_them():
    labels = np.array([1, 1, 0, 1, 0, 0])
    scores = 1 - np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])  # anti-correlated: Platt slope < 0
    assert best_threshold(labels, scores, "calibrated_f1") == best_threshold(labels, scores, "f1")

def _toy(n=240, seed=0):
    """Text dimension 0 and the visual set's mean of dimension 2 decide the label; the rest is noise."""
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.4
    text = rng.normal(size=(n, 6)).astype(np.float32)
    text[:, 0] += np.where(labels, 1.5, -1.5)
    sizes = rng.integers(1, 5, size=n)
    vectors = rng.normal(size=(int(sizes.sum()), 4)).astype(np.float32)
    index = np.full((n, 4), -1)
    row = 0
    for i, k in enumerate(sizes):
        vectors[row:row + k, 2] += 2.0 if labels[i] else -2.0
        index[i, :k] = np.arange(row, row + k)
        row += k
    return text, VisualSets(vectors, index), labels


CFG = KeyClipTrainConfig(dim=8, hidden=8, dropout=0.1, learning_rate=1e-2, batch_size=32, max_epochs=25, patience=5,
                         lexical=False)


@pytest.mark.parametrize("variant", ["text", "visual", "full"])
def test_training_learns_a_separable_toy_signal(variant):
    text, visual, labels = _toy()
    data = ClipInputs(text if variant != "visual" else None, visual if variant != "text" else None, labels)
    idx = np.arange(len(labels))
    net, summary = train_model(variant, data, idx[:160], idx[160:200], CFG, seed=1)
    scores = predict(net, data, idx[200:])
    assert ((scores >= 0.5) == labels[200:]).mean() >= 0.9
    assert summary["best_epoch"] >= 0


def test_training_is_deterministic_for_a_seed_and_changes_with_it():
    text, visual, labels = _toy()
    data = ClipInputs(text, visual, labels)
    idx = np.arange(len(labels))
    runs = [predict(train_model("full", data, idx[:160], idx[160:200], CFG, seed=s)[0], data, idx) for s in (3, 3, 4)]
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])
