"""Fine-tuning the sentence encoder's top layers per fold (cookproc.models.finetune)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from cookproc.models.finetune import FinetuneConfig, finetune_sentence_vectors, length_batches, load_bottom, mean_pool

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "chop", "the", "onion", "now", "we", "like", "this", "stir",
         "soup", "so", "really", "good", "and", "salt"]


def _tiny_bert(path, layers=3):
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path.mkdir()
    # transformers 5 takes the vocabulary as a dict (a vocab_file argument is ignored: every word -> [UNK]).
    BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}).save_pretrained(path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertModel(config).eval().save_pretrained(path)
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


@pytest.mark.parametrize("top", [1, 3])
def test_frozen_bottom_then_top_layers_equals_the_whole_encoder(bert, top):
    from transformers import AutoModel, AutoTokenizer

    sentences = ["chop the onion", "so now we really like this good soup and salt", "stir"]
    bottom = load_bottom(bert, sentences, top)
    states, mask = bottom.batch([0, 1, 2])
    with torch.no_grad():
        tuned = mean_pool(bottom.top().eval()(inputs_embeds=states, attention_mask=mask).last_hidden_state, mask)
        enc = AutoTokenizer.from_pretrained(str(bert))(sentences, padding=True, return_tensors="pt")
        whole = mean_pool(AutoModel.from_pretrained(str(bert)).eval()(**enc).last_hidden_state, enc["attention_mask"])
    assert torch.allclose(tuned, whole, atol=1e-5)
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


CFG = FinetuneConfig(layers=1, epochs=10, lr=1e-2, head_lr=5e-2, batch_size=8, chunk_batches=4)


def test_finetuning_learns_a_separable_toy_signal_and_keeps_the_best_epoch(bert):
    sentences, labels = _sentences()
    train, val, _ = _split(len(labels))
    bottom = load_bottom(bert, sentences, 1)
    vectors, info = finetune_sentence_vectors(bottom, labels, train, val, CFG, seed=0)
    assert vectors.shape == (len(labels), 16) and vectors.dtype == np.float32
    losses = info["finetune_val_loss"]
    assert len(losses) == CFG.epochs and info["finetune_best_epoch"] == int(np.argmin(losses))
    assert min(losses) < 0.35  # far below the 0.69 of a coin flip: "chop" is found


def test_finetuning_is_deterministic_and_never_reads_test_labels(bert):
    sentences, labels = _sentences(80)
    train, val, test = _split(len(labels))
    bottom = load_bottom(bert, sentences, 2)
    cfg = FinetuneConfig(layers=2, epochs=2, batch_size=8, chunk_batches=2)
    first, _ = finetune_sentence_vectors(bottom, labels, train, val, cfg, seed=3)
    poisoned = labels.copy()
    poisoned[test] = ~poisoned[test]
    second, _ = finetune_sentence_vectors(bottom, poisoned, train, val, cfg, seed=3)
    assert np.array_equal(first, second)
    other, _ = finetune_sentence_vectors(bottom, labels, train, val, cfg, seed=4)
    assert not np.array_equal(first, other)


def test_cross_validation_with_fine_tuning_scores_every_clip_once(bert):
    import pandas as pd

    from cookproc.models.crossval import SentenceTuning, neural_fit_predict, run_neural, text_inputs
    from cookproc.models.train import TrainConfig

    sentences, labels = _sentences(120)
    clips = pd.DataFrame({"video_id": [f"v{i // 10:02d}" for i in range(120)], "recipe": [f"r{i // 20}" for i in range(120)],
                          "clip_idx": np.arange(120) % 10, "start_s": np.arange(120) % 10 * 5.0,
                          "end_s": np.arange(120) % 10 * 5.0 + 4, "sentence": sentences, "is_key": labels})
    # Two videos per recipe, two recipes per fold; the second recipe of each fold is inner validation.
    folds = pd.DataFrame({"video_id": [f"v{v:02d}" for v in range(12)], "fold": [v // 4 for v in range(12)],
                          "inner_val": [v % 4 >= 2 for v in range(12)]})
    bottom = load_bottom(bert, sentences, 1)

    def sentence_input(vectors):
        return text_inputs(clips, vectors, context_window=0, layout=True)

    tuning = SentenceTuning(bottom, CFG, sentence_input)
    frozen = sentence_input(np.zeros((120, 16), np.float32))  # replaced per fold by the tuned vectors
    cfg = TrainConfig(max_epochs=30, patience=30, lexical=False, lr=1e-2)
    result = run_neural("text", clips, folds, frozen, None, cfg, seed=0, tuning=tuning)
    assert not np.isnan(result.score).any() and sorted(set(result.fold.tolist())) == [0, 1, 2]
    assert all("finetune_val_loss" in info for info in result.info.values())
    # Out-of-fold scores rank key clips first: the tuned vectors carry the signal (the frozen input is zeros).
    auc = (result.score[labels][:, None] > result.score[~labels][None, :]).mean()
    assert auc > 0.9
    with pytest.raises(ValueError, match="nothing to fine-tune"):
        neural_fit_predict("visual", None, cfg, 0, tuning=tuning)
