"""Sentence embeddings: batching and de-duplication, the Parquet contract, both kinds of encoder."""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from cookproc.core.errors import InputError
from cookproc.keyclips.sentence_encoder import SentenceEncoder, embed_sentences, load_sentence_encoder
from cookproc.learn.sentence_vectors import read_text_features, text_features_schema, text_features_table
from cookproc.core.parquet_io import write_parquet

torch.set_num_threads(1)


class CountingEncoder:
    """A fake encoder: vector = (length, number of 'a's); records every batch it sees."""

    def __init__(self):
        self.batches = []

    def __call__(self, batch):
        self.batches.append(list(batch))
        return np.array([[len(s), s.count("a")] for s in batch], dtype=np.float32)


def test_embed_sentences_dedupes_batches_and_keeps_input_order():
    fake = CountingEncoder()
    enc = SentenceEncoder("fake", 2, fake)
    sentences = ["banana", "a", "cab", "a", "banana", "xyz"]
    out = embed_sentences(sentences, enc, batch_size=2)
    assert out.tolist() == [[6, 3], [1, 1], [3, 1], [1, 1], [6, 3], [3, 0]]
    seen = [s for b in fake.batches for s in b]
    assert sorted(seen) == ["a", "banana", "cab", "xyz"]  # each distinct sentence once
    assert all(len(b) <= 2 for b in fake.batches)
    assert [len(s) for s in seen] == sorted(len(s) for s in seen)  # length-ordered batches


def test_embed_sentences_rejects_a_wrong_shape():
    enc = SentenceEncoder("bad", 3, lambda batch: np.zeros((len(batch), 2), np.float32))
    with pytest.raises(RuntimeError, match="returned shape"):
        embed_sentences(["x"], enc)


def test_features_file_round_trip(tmp_path):
    vectors = np.arange(6, dtype=np.float32).reshape(3, 2)
    table = text_features_table(["b", "a", "a"], [0, 1, 0], vectors)
    path = tmp_path / "f.parquet"
    write_parquet(table, path, text_features_schema(2), sort_keys=["video_id", "clip_idx"])
    keys, matrix = read_text_features(path)
    assert keys == [("a", 0), ("a", 1), ("b", 0)]
    assert matrix.tolist() == [[4, 5], [2, 3], [0, 1]]
    emb_type = pq.read_schema(path).field("embedding").type
    assert pa.types.is_fixed_size_list(emb_type) and emb_type.list_size == 2 and emb_type.value_type == pa.float32()


def _tiny_bert(path):
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "add", "the", "salt", "stir", "soup", "hello"]
    path.mkdir()
    # transformers 5 takes the vocabulary as a dict (a vocab_file argument is ignored: every word -> [UNK]).
    BertTokenizerFast(vocab={w: i for i, w in enumerate(words)}).save_pretrained(path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertModel(config).eval().save_pretrained(path)


def test_plain_bert_directory_with_mean_and_cls_pooling(tmp_path):
    _tiny_bert(tmp_path / "bert")
    mean = load_sentence_encoder(tmp_path / "bert", pooling="mean")
    cls = load_sentence_encoder(tmp_path / "bert", pooling="cls")
    assert mean.dim == 16
    a = embed_sentences(["add the salt", "hello", "add the salt"], mean, batch_size=2)
    assert a.shape == (3, 16) and np.allclose(a[0], a[2])
    # Padding must not change a sentence's vector: alone or batched with a longer one, the same.
    alone = embed_sentences(["hello"], mean)
    assert np.allclose(alone[0], a[1], atol=1e-5)
    assert not np.allclose(embed_sentences(["hello"], cls), alone)


def test_missing_encoder_directory_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="local Hugging Face model directory"):
        load_sentence_encoder(tmp_path / "nope")


@pytest.mark.slow
def test_packaged_minilm_loads_offline_and_embeds_meaningfully():
    enc = load_sentence_encoder(None)
    assert enc.dim == 384
    v = embed_sentences(["chop the onions finely", "dice the onion", "please subscribe to my channel"], enc)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
