"""Fine-tuning the sentence encoder's top layers per fold (cookproc.keyclips.finetune)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from cookproc.keyclips import finetune as ft
from cookproc.keyclips import frozen_bottom as fb
from cookproc.keyclips.finetune import FinetuneConfig, finetune_folds, finetune_sentence_vectors
from cookproc.keyclips.frozen_bottom import length_batches, load_bottom
from cookproc.keyclips.sentence_encoder import mean_pool
from cookproc.learn.finetuned_vectors import read_finetuned_vectors, finetuned_vectors_table

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "chop", "the", "onion", "now", "we", "like", "this", "stir",
         "soup", "so", "really", "good", "and", "salt"]


def _tiny_bert(path, layers=3, kind="bert"):
    from transformers import BertConfig, BertModel, BertTokenizerFast, MPNetConfig, MPNetModel

    path.mkdir()
    # transformers 5 takes the vocabulary as a dict (a vocab_file argument is ignored: every word -> [UNK]).
    BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}).save_pretrained(path)
    torch.manual_seed(0)
    config_class, model_class = {"bert": (BertConfig, BertModel), "mpnet": (MPNetConfig, MPNetModel)}[kind]
    config = config_class(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                          intermediate_size=32, max_position_embeddings=64)
    model_class(config).eval().save_pretrained(path)
    return path


def _sentences(n=160, seed=0):
    """Key clips say 'chop', the others do not; lengths vary so batches need padding."""
    rng = np.random.default_rng(seed)
    filler = ["the", "onion", "now", "we", "like", "this", "soup", "so", "really", "good", "and", "salt"]
    labels = np.arange(n) % 2 == 0
    sentences = []
    for key in labels:
        words = list(rng.choice(filler, size=int(rng.integers(2, 9))))
        if key:
            words.insert(int(rng.integers(0, len(words))), "chop")
        sentences.append(" ".join(words))
    return sentences, labels


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("enc") / "bert")


@pytest.fixture(scope="module")
def mpnet(tmp_path_factory):
    """MPNet (all-mpnet-base-v2's architecture): relative position bias inside the encoder layers."""
    return _tiny_bert(tmp_path_factory.mktemp("enc") / "mpnet", kind="mpnet")


@pytest.mark.parametrize("top", [1, 3])
@pytest.mark.parametrize("kind", ["bert", "mpnet"])
def test_frozen_bottom_then_top_layers_equals_the_whole_encoder(request, kind, top):
    from transformers import AutoModel, AutoTokenizer

    bert = request.getfixturevalue(kind)
    sentences = ["chop the onion", "so now we really like this good soup and salt", "stir"]
    bottom = load_bottom(bert, sentences, top)
    states, mask = bottom.batch([0, 1, 2])
    with torch.no_grad():
        finetuned = mean_pool(bottom.top().eval()(inputs_embeds=states, attention_mask=mask).last_hidden_state, mask)
        enc = AutoTokenizer.from_pretrained(str(bert))(sentences, padding=True, return_tensors="pt")
        whole = mean_pool(AutoModel.from_pretrained(str(bert)).eval()(**enc).last_hidden_state, enc["attention_mask"])
    assert torch.allclose(finetuned, whole, atol=1e-5)
    assert bottom.lengths.tolist() == enc["attention_mask"].sum(1).tolist()


def test_top_layers_must_exist(bert):
    with pytest.raises(ValueError, match="1..3 layers"):
        load_bottom(bert, ["chop"], 4)


def test_length_batches_cover_every_clip_once_with_similar_lengths():
    idx = np.arange(3, 103)
    lengths = np.random.default_rng(1).integers(1, 50, size=103)
    batches = length_batches(idx, lengths, 8, 4, torch.Generator().manual_seed(0))
    assert sorted(np.concatenate(batches).tolist()) == idx.tolist()
    assert max(len(b) for b in batches) == 8
    assert all((np.diff(lengths[b]) >= 0).all() for b in batches)  # sorted within each chunk
    again = length_batches(idx, lengths, 8, 4, torch.Generator().manual_seed(0))
    assert all((a == b).all() for a, b in zip(batches, again))


def _split(n):
    idx = np.arange(n)
    return idx[idx % 5 < 3], idx[idx % 5 == 3], idx[idx % 5 == 4]


CFG = FinetuneConfig(layers=1, epochs=10, learning_rate=1e-2, head_learning_rate=5e-2, batch_size=8, chunk_batches=4)


def test_finetuning_learns_a_separable_toy_signal_and_keeps_the_best_epoch(bert):
    sentences, labels = _sentences()
    train, val, _ = _split(len(labels))
    bottom = load_bottom(bert, sentences, 1)
    vectors, head, info = finetune_sentence_vectors(bottom, labels, train, val, CFG, seed=0)
    assert vectors.shape == (len(labels), 16) and vectors.dtype == np.float32
    assert head.shape == (len(labels),) and ((head > 0.5) == labels).mean() > 0.9  # the head itself has learnt it
    losses = info["finetune_val_loss"]
    assert len(losses) == CFG.epochs and info["finetune_best_epoch"] == int(np.argmin(losses))
    assert min(losses) < 0.35  # far below the 0.69 of a coin flip: "chop" is found


def test_finetuning_is_deterministic_and_never_reads_test_labels(bert):
    sentences, labels = _sentences(80)
    train, val, test = _split(len(labels))
    bottom = load_bottom(bert, sentences, 2)
    cfg = FinetuneConfig(layers=2, epochs=2, batch_size=8, chunk_batches=2)
    first, first_head, _ = finetune_sentence_vectors(bottom, labels, train, val, cfg, seed=3)
    poisoned = labels.copy()
    poisoned[test] = ~poisoned[test]
    second, second_head, _ = finetune_sentence_vectors(bottom, poisoned, train, val, cfg, seed=3)
    assert np.array_equal(first, second) and np.array_equal(first_head, second_head)
    other, _, _ = finetune_sentence_vectors(bottom, labels, train, val, cfg, seed=4)
    assert not np.array_equal(first, other)


def _toy_clips(sentences, labels):
    import pandas as pd

    n = len(labels)
    clips = pd.DataFrame({"video_id": [f"v{i // 10:02d}" for i in range(n)], "recipe": [f"r{i // 20}" for i in range(n)],
                          "clip_idx": np.arange(n) % 10, "start_s": np.arange(n) % 10 * 5.0,
                          "end_s": np.arange(n) % 10 * 5.0 + 4, "sentence": sentences, "is_key": labels})
    # Two videos per recipe, two recipes per fold; the second recipe of each fold is inner validation.
    folds = pd.DataFrame({"video_id": [f"v{v:02d}" for v in range(n // 10)], "fold": [v // 4 for v in range(n // 10)],
                          "inner_val": [v % 4 >= 2 for v in range(n // 10)]})
    return clips, folds


def test_finetuned_vectors_round_trip_through_parquet_and_bad_files_are_named(bert, tmp_path):
    import pyarrow.parquet as pq

    from cookproc.core.errors import InputError
    from cookproc.learn.folds import clip_folds
    from cookproc.learn.finetuned_vectors import finetuned_vectors_schema
    from cookproc.core.parquet_io import write_parquet

    sentences, labels = _sentences(120)
    clips, folds = _toy_clips(sentences, labels)
    fold, inner = clip_folds(folds, clips)
    finetuned = finetune_folds(load_bottom(bert, sentences, 1), labels, fold, inner, FinetuneConfig(layers=1, batch_size=8), 0)
    assert sorted(finetuned) == [0, 1, 2]
    path = tmp_path / "finetuned.parquet"
    write_parquet(finetuned_vectors_table(clips, finetuned), path, finetuned_vectors_schema(16), sort_keys=["fold", "video_id", "clip_idx"])
    shuffled = clips.sample(frac=1.0, random_state=1).reset_index(drop=True)  # rows come back in the clips' order
    back = read_finetuned_vectors(path, shuffled, [0, 1, 2])
    order = np.lexsort((shuffled["clip_idx"].to_numpy(), shuffled["video_id"].to_numpy()))
    reference = np.lexsort((clips["clip_idx"].to_numpy(), clips["video_id"].to_numpy()))
    for f in range(3):
        assert np.array_equal(back[f].vectors[order], finetuned[f].vectors[reference])
        assert np.array_equal(back[f].head[order], finetuned[f].head[reference])
    assert not np.array_equal(finetuned[0].vectors, finetuned[1].vectors)  # each fold has its own encoder
    with pytest.raises(InputError, match="folds \\[2\\].*stale"):
        read_finetuned_vectors(path, clips, [0, 1])
    table = pq.read_table(path)
    # Written by other means (no column digests): the row count is what is wrong.
    pq.write_table(table.replace_schema_metadata(None).slice(0, table.num_rows - 1), tmp_path / "short.parquet")
    with pytest.raises(InputError, match="short.parquet: fold 2: 119 distinct clips in 119 rows, expected each of the 120"):
        read_finetuned_vectors(tmp_path / "short.parquet", clips, [0, 1, 2])
    with pytest.raises(InputError, match="row 0: fold 0, clip v00#0 is not in the clip table"):
        read_finetuned_vectors(path, clips.iloc[1:], [0, 1, 2])


def test_cross_validation_with_finetuned_vectors_scores_every_clip_once(bert):
    from cookproc.learn.folds import clip_folds
    from cookproc.learn.inputs import text_inputs
    from cookproc.keyclips.neural import FinetunedSentences, neural_fit_predict, run_neural
    from cookproc.keyclips.train import KeyClipTrainConfig

    sentences, labels = _sentences(120)
    clips, folds = _toy_clips(sentences, labels)
    fold, inner = clip_folds(folds, clips)
    per_fold = finetune_folds(load_bottom(bert, sentences, 1), labels, fold, inner, CFG, 0)

    def sentence_input(vectors):
        return text_inputs(clips, vectors, context_window=0, layout=True)

    cfg = KeyClipTrainConfig(max_epochs=30, patience=30, lexical=False, learning_rate=1e-2)
    result = run_neural("text", clips, folds, None, None, cfg, seed=0, finetuned=FinetunedSentences(per_fold, sentence_input))
    assert not np.isnan(result.score).any() and sorted(set(result.fold.tolist())) == [0, 1, 2]
    # Out-of-fold scores rank key clips first: the finetuned vectors carry the signal.
    auc = (result.score[labels][:, None] > result.score[~labels][None, :]).mean()
    assert auc > 0.9
    # The head weight mixes in the finetuned head's probability of the held-out fold's own encoder.
    head_only = run_neural("text", clips, folds, None, None, cfg, seed=0,
                           finetuned=FinetunedSentences(per_fold, sentence_input, head_weight=1.0))
    expected = np.concatenate([per_fold[f].head[fold == f] for f in range(3)])
    assert np.allclose(np.concatenate([head_only.score[fold == f] for f in range(3)]), expected)
    half = run_neural("text", clips, folds, None, None, cfg, seed=0, finetuned=FinetunedSentences(per_fold, sentence_input, 0.5))
    assert np.allclose(half.score, (result.score + head_only.score) / 2)
    with pytest.raises(ValueError, match="no finetuned sentence vectors"):
        neural_fit_predict("visual", None, cfg, 0, finetuned=FinetunedSentences(per_fold, sentence_input), fold=fold)
    with pytest.raises(ValueError, match="head_weight must be in"):
        FinetunedSentences(per_fold, sentence_input, head_weight=1.5)


def test_held_out_fold_names_the_one_fold_of_the_test_clips_among_those_with_inputs():
    from cookproc.learn.keyclip_crossval import held_out_fold

    fold = np.repeat([0, 1, 2], 4)
    assert held_out_fold(fold, np.arange(4, 8), {0: None, 1: None, 2: None}) == 1
    with pytest.raises(ValueError, match=r"test clips of folds \[2\]; inputs exist for folds \[0, 1\]"):
        held_out_fold(fold, np.arange(8, 12), {0: None, 1: None})
    with pytest.raises(ValueError, match=r"test clips of folds \[0, 1\]"):
        held_out_fold(fold, np.arange(2, 6), {0: None, 1: None, 2: None})


def test_the_installed_mpnet_splits_like_the_whole_encoder():
    """The real all-mpnet-base-v2 that setup.sh installs (cookproc.data.encoders): loadable offline, and
    its top 6 layers on the cached bottom give the whole encoder's sentence vectors."""
    from transformers import AutoModel, AutoTokenizer

    from cookproc.data.encoders import resolve

    path = resolve("all-mpnet-base-v2")
    sentences = ["now chop the onions finely", "add a pinch of salt and stir it in", "hi guys"]
    bottom = load_bottom(path, sentences, 6)
    states, mask = bottom.batch([0, 1, 2])
    with torch.no_grad():
        finetuned = mean_pool(bottom.top().eval()(inputs_embeds=states, attention_mask=mask).last_hidden_state, mask)
        enc = AutoTokenizer.from_pretrained(str(path))(sentences, padding=True, return_tensors="pt")
        whole = mean_pool(AutoModel.from_pretrained(str(path)).eval()(**enc).last_hidden_state, enc["attention_mask"])
    assert finetuned.shape == (3, 768)
    assert torch.allclose(finetuned, whole, atol=1e-4)


def test_a_batch_gathered_on_the_device_equals_the_states_padded_on_the_host(bert):
    sentences, _ = _sentences(40)
    bottom = load_bottom(bert, sentences, 1)
    for idx in ([0], [3, 1, 2], list(range(39, -1, -2))):
        states, mask = bottom.batch(idx)
        padded, padded_mask = fb._pad([bottom.states[i] for i in idx])
        assert torch.equal(states, padded) and torch.equal(mask, padded_mask)


def _train_top_per_step(bottom, labels, train_idx, val_idx, cfg, seed):
    """train_top as it was before the batches stayed on the device: each step pads its batch on the
    host and copies states, mask and labels over (the reference for the CPU results)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    net = ft.FinetunedTop(bottom.top(), bottom.hidden_size)
    opt = torch.optim.AdamW([{"params": net.top.parameters(), "lr": cfg.learning_rate},
                             {"params": net.head.parameters(), "lr": cfg.head_learning_rate}], weight_decay=cfg.weight_decay)
    steps = ft.training_batches(len(train_idx), cfg)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, [lambda s: max(0.0, 1.0 - s / steps), lambda s: 1.0])
    loss_fn = torch.nn.BCEWithLogitsLoss()
    y = torch.from_numpy(np.asarray(labels, dtype=np.float32))
    losses, states_by_epoch = [], []
    for _ in range(cfg.epochs):
        net.train()
        for b in length_batches(train_idx, bottom.lengths, cfg.batch_size, cfg.chunk_batches, gen):
            states, mask = fb._pad([bottom.states[i] for i in b])
            opt.zero_grad()
            loss = loss_fn(net(states, mask), y[torch.from_numpy(b)])
            loss.backward()
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
        val = ft._run(net, bottom, val_idx, "forward")
        states_by_epoch.append((float(loss_fn(val, y[torch.from_numpy(val_idx)])),
                                {k: v.detach().clone() for k, v in net.state_dict().items()}))
    return losses, states_by_epoch


def test_cpu_fine_tuning_gives_the_weights_and_losses_of_the_per_step_path(bert, monkeypatch):
    sentences, labels = _sentences(120, seed=4)
    bottom = load_bottom(bert, sentences, 2)
    cfg = FinetuneConfig(layers=2, epochs=2, batch_size=8, chunk_batches=2, learning_rate=1e-3)
    train, val = np.arange(90), np.arange(90, 120)
    losses, per_epoch = _train_top_per_step(bottom, labels, train, val, cfg, seed=5)
    best = min(range(len(per_epoch)), key=lambda e: per_epoch[e][0])
    seen = []
    real_step = ft.Progress.step

    def recording_step(self, n=1, **fields):
        if "loss" in fields:
            seen.append(fields["loss"]())  # the running mean the log shows
        return real_step(self, n, **fields)

    monkeypatch.setattr(ft.Progress, "step", recording_step)
    net, info = ft.train_top(bottom, labels, train, val, cfg, seed=5)
    assert info["finetune_best_epoch"] == best
    assert info["finetune_val_loss"] == [round(loss, 5) for loss, _ in per_epoch]
    for name, value in net.state_dict().items():
        assert torch.equal(value, per_epoch[best][1][name]), name
    per_batch = len(losses) // cfg.epochs
    expected = [np.float32(sum(np.float32(x) for x in losses[e * per_batch:e * per_batch + k + 1])) / (k + 1)
                for e in range(cfg.epochs) for k in range(per_batch)]
    np.testing.assert_allclose(seen, expected, rtol=1e-6)


def test_mixed_precision_is_for_cuda_only_and_names_its_settings(bert):
    with pytest.raises(ValueError, match="mixed_precision must be one of"):
        FinetuneConfig(layers=1, mixed_precision="fp8")
    sentences, labels = _sentences(20)
    bottom = load_bottom(bert, sentences, 1)
    with pytest.raises(ValueError, match="mixed_precision bf16 needs a cuda device, got cpu"):
        ft.train_top(bottom, labels, np.arange(10), np.arange(10, 20), FinetuneConfig(layers=1, mixed_precision="bf16"), 0)
