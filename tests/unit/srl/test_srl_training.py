"""A tiny training run overfits five sentences; the tagger checkpoint round-trips; spans scores."""
import numpy as np
import pytest
import torch

from cookproc.srl import training as T
from cookproc.srl.syntax import ParsedSentence
from cookproc.srl.tagger import Tagger
from fixtures import tagger_settings

SENTENCES = [
    (["chop", "the", "onions", "."], ["VB", "DT", "NNS", "."], ["ROOT", "det", "dobj", "punct"], [0, 2, 0, 0],
     0, ["B-V", "B-ARG1", "I-ARG1", "O"]),
    (["we", "add", "salt", "now", "."], ["PRP", "VBP", "NN", "RB", "."], ["nsubj", "ROOT", "dobj", "advmod", "punct"],
     [1, 1, 1, 1, 1], 1, ["B-ARG0", "B-V", "B-ARG1", "B-ARGM-TMP", "O"]),
    (["put", "it", "in", "the", "pan"], ["VB", "PRP", "IN", "DT", "NN"], ["ROOT", "dobj", "prep", "det", "pobj"],
     [0, 0, 0, 4, 2], 0, ["B-V", "B-ARG1", "B-ARG2", "I-ARG2", "I-ARG2"]),
    (["do", "n't", "burn", "it"], ["VB", "RB", "VB", "PRP"], ["aux", "neg", "ROOT", "dobj"], [2, 2, 2, 2],
     2, ["O", "B-ARGM-NEG", "B-V", "B-ARG1"]),
    (["stir", "well"], ["VB", "RB"], ["ROOT", "advmod"], [0, 0], 0, ["B-V", "B-ARGM-MNR"]),
]


def tiny_prepared(dim=8, layers=2):
    rng = np.random.default_rng(0)
    words, parsed, feats, parses = [], [], [], []
    for s, (w, tags, deps, heads, pred, labels) in enumerate(SENTENCES):
        words.append(w)
        parsed.append(ParsedSentence(w, tags, deps, heads, [x.lower() for x in w]))
        feats.append(rng.normal(size=(len(w), layers, dim)).astype(np.float16))
        parses.append((s, pred, labels))
    sentences = [("train", "d", i) for i in range(len(SENTENCES))]
    return T.Prepared(sentences, words, parsed, feats, parses, ["train"] * len(SENTENCES))


def test_tiny_training_overfits_five_sentences():
    torch.set_num_threads(1)
    prep = tiny_prepared()
    cfg = tagger_settings(epochs=60, batch_size=5, learning_rate=1e-2, hidden=16, projection=32, dropout=0.0, seed=1)
    tagger, history = T.train(prep, cfg, n_layers=2, dim=8)
    assert history[-1]["train_loss"] < 0.1 < history[0]["train_loss"]
    scores = T.evaluate(tagger, prep, "train")
    assert scores["overall"]["f1"] == 1.0
    assert scores["overall"]["gold"] == 9  # every non-V span of the five parses


def test_kept_weights_are_the_best_on_dev_of_the_last_epochs_and_their_mean():
    torch.set_num_threads(1)
    prep = tiny_prepared()
    # The same five sentences once more as a dev split.
    n = len(prep.sentences)
    prep.sentences += [("dev", "d", i) for i in range(n)]
    prep.words += prep.words[:n]
    prep.parsed += prep.parsed[:n]
    prep.features += prep.features[:n]
    prep.parses += [(s + n, p, labels) for s, p, labels in prep.parses]
    prep.split_of += ["dev"] * n
    cfg = tagger_settings(epochs=8, eval_last_epochs=4, batch_size=5, learning_rate=1e-2, hidden=8, projection=16, dropout=0.0, seed=3)
    tagger, history = T.train(prep, cfg, n_layers=2, dim=8)
    assert [h["epoch"] for h in history] == [1, 2, 3, 4, 5, 6, 7, 8, "mean of epochs 5-8"]
    assert ["dev_f1" in h for h in history] == [False] * 4 + [True] * 5
    best = max(h["dev_f1"] for h in history if "dev_f1" in h)
    assert T.evaluate(tagger, prep, "dev")["overall"]["f1"] == best
    assert history[-1]["kept"] == (history[-1]["dev_f1"] > max(h["dev_f1"] for h in history[4:8]))

    cfg.average_checkpoints = False
    _, history = T.train(prep, cfg, n_layers=2, dim=8)
    assert [h["epoch"] for h in history] == list(range(1, 9))


def test_checkpoint_round_trip_predicts_the_same():
    torch.set_num_threads(1)
    prep = tiny_prepared()
    cfg = tagger_settings(epochs=3, batch_size=5, hidden=8, projection=16, seed=2)
    tagger, _ = T.train(prep, cfg, n_layers=2, dim=8)
    inst, _ = T.instances_for(tagger, prep, "train")
    again = Tagger.from_state(tagger.state())
    assert tagger.predict(inst, prep.features) == again.predict(inst, prep.features)


def test_span_scores_per_role():
    gold = [["B-ARG0", "B-V", "B-ARG1", "I-ARG1"]]
    pred = [["B-ARG0", "B-V", "B-ARG1", "O"]]
    s = T.span_scores(gold, pred)
    assert s["ARG0"]["f1"] == 1.0 and s["ARG1"]["f1"] == 0.0
    assert s["overall"]["precision"] == 0.5 and s["overall"]["recall"] == 0.5
    assert "V" not in s


def test_ensemble_averages_the_heads_log_probabilities():
    torch.set_num_threads(1)
    prep = tiny_prepared()
    cfg = tagger_settings(epochs=3, batch_size=5, hidden=8, projection=16, seed=2)
    tagger, members = T.train_ensemble(prep, cfg, n_layers=2, dim=8, members=2)
    assert [m["seed"] for m in members] == [2, 3] and len(tagger.heads) == 2
    inst, _ = T.instances_for(tagger, prep, "train")
    inputs, _ = tagger.batch(inst, prep.features)
    with torch.inference_mode():
        single = [torch.log_softmax(head.eval()(*inputs), -1) for head in tagger.heads]
        assert not torch.equal(single[0], single[1])  # different seeds, different heads
        assert torch.allclose(tagger.log_probs(*inputs), (single[0] + single[1]) / 2)
    again = Tagger.from_state(tagger.state())
    assert len(again.heads) == 2
    assert again.predict(inst, prep.features) == tagger.predict(inst, prep.features)


def test_ensemble_members_must_share_vocabularies():
    prep = tiny_prepared()
    cfg = tagger_settings(epochs=1, batch_size=5, hidden=8, projection=16, seed=2)
    tagger, _ = T.train(prep, cfg, n_layers=2, dim=8)
    other, _ = T.train(prep, tagger_settings(epochs=1, batch_size=5, hidden=4, projection=16, seed=3), n_layers=2, dim=8)
    with pytest.raises(ValueError, match="share"):
        tagger.add_heads([other])


def test_the_padded_bilstm_equals_the_packed_one_in_outputs_and_gradients():
    """The head runs its BiLSTM on padded input with each backward direction reading
    its sequence reversed within its own length: at every word, outputs and weight gradients equal
    those of ``nn.LSTM`` on the packed sequences; padded positions are zero."""
    from torch import nn

    from cookproc.srl.tagger import HeadConfig, SrlHead

    torch.manual_seed(3)
    head = SrlHead(HeadConfig(n_layers=2, dim=8, hidden=6, proj=5, dropout=0.3), 4, 4, 4, 4).eval()
    lengths = torch.tensor([7, 2, 5, 1, 7, 4])
    x = torch.randn(len(lengths), 7, 5)
    words = (torch.arange(7)[None, :] < lengths[:, None])[:, :, None]

    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    reference, _ = nn.utils.rnn.pad_packed_sequence(head.lstm(packed)[0], batch_first=True, total_length=7)
    (reference * torch.linspace(-1, 1, 12)).sum().backward()
    reference_grads = {n: p.grad.clone() for n, p in head.lstm.named_parameters()}
    head.zero_grad()

    padded = head._bilstm(x, lengths)
    (padded * torch.linspace(-1, 1, 12)).sum().backward()
    assert torch.allclose(padded, reference, atol=1e-6)
    assert torch.count_nonzero(padded * ~words) == 0
    assert torch.count_nonzero(padded * words) > 0.9 * words.sum() * 12
    for name, param in head.lstm.named_parameters():
        assert torch.allclose(param.grad, reference_grads[name], atol=1e-5), name


def test_training_twice_with_two_threads_gives_identical_weights():
    """Same data, seed and thread count: the same weights (the tagger a workflow rerun keeps)."""
    prep = tiny_prepared()
    cfg = tagger_settings(epochs=6, batch_size=2, learning_rate=1e-2, hidden=16, projection=32, dropout=0.3,
                              seed=5, threads=2)
    first, _ = T.train(prep, cfg, n_layers=2, dim=8)
    second, _ = T.train(prep, cfg, n_layers=2, dim=8)
    a, b = first.head.state_dict(), second.head.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
