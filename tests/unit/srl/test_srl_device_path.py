"""The SRL tagger's tensor paths give what the per-sentence host code gave: the batched Viterbi
decoder the same tags as ``bio.viterbi_decode`` (ties included), the batcher the same tensors as
the per-row build, the batched sub-word pooling the same float16 features as the per-sentence
loop; and the CUDA path (packed cuDNN LSTM, decoding there) the CPU's tags, when a GPU is present."""
import itertools

import numpy as np
import pytest
import torch

from cookproc.srl import training as T
from cookproc.srl.bio import allowed_starts, allowed_transitions, viterbi_decode
from cookproc.srl.tagger import Batcher, HeadConfig, Instance, SrlHead, Tagger, Vocab
from cookproc.srl.viterbi import BatchViterbi
from cookproc.srl.word_encoder import WordEncoder, WordFeatures
from fixtures import tagger_settings

LABELS = ["B-ARG0", "B-ARG1", "B-ARGM-TMP", "B-V", "I-ARG0", "I-ARG1", "I-ARGM-TMP", "I-V", "O"]
V, BANNED = LABELS.index("B-V"), [LABELS.index("B-V"), LABELS.index("I-V")]


def random_scores(rng, kind, b, n, k):
    if kind == "normal":
        return rng.normal(size=(b, n, k)).astype(np.float32)
    if kind == "ties":  # few distinct values: many equal candidates at every step
        return np.log(rng.integers(1, 4, size=(b, n, k)) / 4).astype(np.float32)
    if kind == "flat":
        return np.zeros((b, n, k), dtype=np.float32)
    if kind == "huge":  # scores on the scale of the -1e9 penalty: barred moves compete and tie
        return (rng.integers(-3, 1, size=(b, n, k)) * 1e9 + rng.integers(0, 3, size=(b, n, k))).astype(np.float32)
    return np.where(rng.random((b, n, k)) < 0.3, -np.inf, rng.normal(size=(b, n, k))).astype(np.float32)


def decode_all(decoder, scores, lengths, predicate, device="cpu"):
    out = decoder(torch.from_numpy(scores).to(device), torch.from_numpy(lengths), torch.from_numpy(predicate).to(device))
    return out.cpu().numpy()


@pytest.mark.parametrize("kind", ["normal", "ties", "flat", "impossible", "huge"])
def test_batched_viterbi_equals_the_per_sentence_decoder(kind):
    rng = np.random.default_rng(len(kind))
    decoder = BatchViterbi(LABELS, forced_label=V, banned=BANNED)
    checked = 0
    for _ in range(60):
        b, n = int(rng.integers(1, 12)), int(rng.integers(1, 30))
        lengths = rng.integers(1, n + 1, size=b)
        lengths[rng.integers(0, b)] = n
        predicate = np.array([rng.integers(0, m) for m in lengths])
        scores = random_scores(rng, kind, b, n, len(LABELS))
        paths = decode_all(decoder, scores, lengths, predicate)
        for r in range(b):
            m = int(lengths[r])
            expected = viterbi_decode(scores[r, :m], LABELS, forced={int(predicate[r]): V}, banned=BANNED)
            assert paths[r, :m].tolist() == expected, (kind, r, m)
            checked += 1
    assert checked > 300


def test_batched_viterbi_without_constraints_equals_the_reference():
    rng = np.random.default_rng(5)
    decoder = BatchViterbi(LABELS)
    scores = random_scores(rng, "ties", 7, 9, len(LABELS))
    lengths = np.array([9, 1, 4, 9, 2, 7, 3])
    paths = decoder(torch.from_numpy(scores), torch.from_numpy(lengths)).numpy()
    for r, m in enumerate(lengths):
        assert paths[r, :m].tolist() == viterbi_decode(scores[r, :m], LABELS)


def test_batched_viterbi_finds_the_best_valid_path_by_brute_force():
    """Tiny cases: the decoded path is valid BIO, keeps the predicate's B-V, uses no other V, and no
    valid path scores higher (every path enumerated)."""
    labels = ["B-A", "B-V", "I-A", "O"]
    trans, starts = allowed_transitions(labels), allowed_starts(labels)
    decoder = BatchViterbi(labels, forced_label=1, banned=[1])
    rng = np.random.default_rng(0)
    for n in range(1, 6):
        scores = rng.normal(size=(16, n, 4)).astype(np.float32)
        predicate = rng.integers(0, n, size=16)
        paths = decoder(torch.from_numpy(scores), torch.full((16,), n), torch.from_numpy(predicate)).numpy()
        for r in range(16):
            def valid(path):
                return (starts[path[0]] and all(trans[a, b] for a, b in zip(path, path[1:]))
                        and [t for t, k in enumerate(path) if k == 1] == [predicate[r]])

            def score(path):
                return sum(float(scores[r, t, k]) for t, k in enumerate(path) if t != predicate[r])

            best = max(score(p) for p in itertools.product(range(4), repeat=n) if valid(p))
            assert valid(tuple(paths[r])) and score(tuple(paths[r])) == pytest.approx(best, abs=1e-9)


def old_batch(tagger, instances, features):
    """The per-row host build the batcher replaced (kept as the reference)."""
    n = max(len(i.tag_ids) for i in instances)
    sentences = sorted({i.sentence for i in instances})
    slot = {s: k for k, s in enumerate(sentences)}
    feats = torch.zeros(len(sentences), n, tagger.cfg.n_layers, tagger.cfg.dim)
    for s in sentences:
        feats[slot[s], : features[s].shape[0]] = torch.from_numpy(features[s].astype(np.float32))
    ids = torch.zeros(3, len(instances), n, dtype=torch.long)
    gold = torch.full((len(instances), n), -100, dtype=torch.long)
    for r, inst in enumerate(instances):
        m = len(inst.tag_ids)
        ids[0, r, :m], ids[1, r, :m], ids[2, r, :m] = map(torch.tensor, (inst.tag_ids, inst.dep_ids, inst.rel_ids))
        if inst.label_ids is not None:
            gold[r, :m] = torch.tensor(inst.label_ids)
    return (feats, torch.tensor([slot[i.sentence] for i in instances]), torch.tensor([len(i.tag_ids) for i in instances]),
            torch.tensor([i.predicate for i in instances]), ids[0], ids[1], ids[2]), gold


def random_tagger_and_instances(seed=0, n_sentences=12, layers=3, dim=6):
    rng = np.random.default_rng(seed)
    labels = Vocab(LABELS)
    tagger = Tagger(HeadConfig(n_layers=layers, dim=dim, hidden=5, proj=7), Vocab.build(["a", "b", "c"]),
                    Vocab.build(["x", "y"]), Vocab.build(["r", "s"]), labels, "none")
    features = [rng.normal(size=(int(rng.integers(1, 15)), layers, dim)).astype(np.float16) for _ in range(n_sentences)]
    instances = []
    for s, f in enumerate(features):
        m = len(f)
        for p in sorted(set(rng.integers(0, m, size=3).tolist())):
            gold = rng.integers(0, len(LABELS), size=m).tolist() if s % 2 else None
            instances.append(Instance(s, p, rng.integers(0, 4, size=m).tolist(), rng.integers(0, 3, size=m).tolist(),
                                      rng.integers(0, 3, size=m).tolist(), gold))
    return tagger, instances, features


def test_the_batcher_builds_exactly_the_per_row_batches():
    tagger, instances, features = random_tagger_and_instances()
    batcher = Batcher(instances, WordFeatures.of(features))
    for idx in ([0], [3, 1, 7, 2], list(range(len(instances)))[::-1], [5, 5, 9]):
        (new, new_gold), (old, old_gold) = batcher(idx), old_batch(tagger, [instances[i] for i in idx], features)
        for a, b in zip(new + (new_gold,), old + (old_gold,)):
            assert a.dtype == b.dtype and torch.equal(a, b)


def old_predict(tagger, instances, features, batch_size):
    """The per-sentence host decoding ``predict`` replaced (kept as the reference)."""
    out = [None] * len(instances)
    order = sorted(range(len(instances)), key=lambda i: (len(instances[i].tag_ids), instances[i].sentence, i))
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            inputs, _ = old_batch(tagger, [instances[i] for i in idx], features)
            logp = tagger.log_probs(*inputs).numpy()
            for r, i in enumerate(idx):
                tags = tagger.decode(logp[r, :len(instances[i].tag_ids)], instances[i].predicate)
                out[i] = (tags, [float(np.exp(logp[r, t, k])) for t, k in enumerate(tagger.labels.ids(tags))])
    return out


def test_predict_gives_the_per_sentence_decoders_tags_and_probabilities():
    torch.manual_seed(0)
    tagger, instances, features = random_tagger_and_instances(seed=1, n_sentences=40)
    for head in tagger.heads:
        head.eval()
    expected = old_predict(tagger, instances, features, batch_size=8)
    assert tagger.predict(instances, features, batch_size=8) == expected
    assert tagger.predict(instances, WordFeatures.of(features), batch_size=8) == expected
    assert len({tuple(t) for t, _ in expected}) > 5  # not one degenerate answer


WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "chop", "the", "on", "##ion", "##s", "stir", "salt",
         "pan", "gar", "##lic", "in", "a", "bowl", "."]


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path = tmp_path_factory.mktemp("enc") / "bert"
    path.mkdir()
    BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}).save_pretrained(path)
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=64)).eval().save_pretrained(path)
    return path


def old_encode(encoder, sentences, batch_size):
    """The per-sentence pooling loop the batched scatter replaced (kept as the reference)."""
    lengths = [len(s) for s in sentences]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    buffer = np.zeros((int(offsets[-1]), encoder.n_layers, encoder.dim), dtype=np.float16)
    out = [buffer[offsets[i]:offsets[i + 1]] for i in range(len(sentences))]
    order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), i))
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            idx = order[b:b + batch_size]
            batch = [list(sentences[i]) if len(sentences[i]) else ["."] for i in idx]
            enc = encoder.tokenizer(batch, is_split_into_words=True, truncation=True,
                                    max_length=encoder.max_subwords, padding=True, return_tensors="pt")
            stack = torch.stack(encoder.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                              output_hidden_states=True).hidden_states, dim=2).float()
            for row, i in enumerate(idx):
                n = len(sentences[i])
                word_ids = enc.word_ids(row)
                sums, counts = torch.zeros(n, encoder.n_layers, encoder.dim), torch.zeros(n)
                pos = [t for t, w in enumerate(word_ids) if w is not None and w < n]
                if pos:
                    wid = torch.tensor([word_ids[t] for t in pos])
                    sums.index_add_(0, wid, stack[row, pos])
                    counts.index_add_(0, wid, torch.ones(len(pos)))
                out[i][...] = (sums / counts.clamp(min=1)[:, None, None]).numpy()
    return out


def test_batched_subword_pooling_equals_the_per_sentence_loop(tiny_encoder):
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    vocabulary = ["chop", "the", "onions", "onion", "stir", "salt", "pan", "garlic", "in", "a", "bowl", ".", "zzz"]
    sentences = [list(rng.choice(vocabulary, size=int(rng.integers(0, 12)))) for _ in range(37)]
    sentences.append(["onions"] * 30)  # past max_subwords: its last words get zeros
    encoder = WordEncoder(str(tiny_encoder), max_subwords=24)
    features = encoder.encode(sentences, batch_size=5)
    expected = old_encode(encoder, sentences, batch_size=5)
    assert isinstance(features, WordFeatures) and len(features) == len(sentences)
    for got, want in zip(features, expected):
        assert got.dtype == np.float16 and np.array_equal(got, want)
    assert np.count_nonzero(features[-1][-5:]) == 0 < np.count_nonzero(features[-1][:5])


def test_word_features_index_like_the_list_they_replace():
    arrays = [np.full((n, 2, 3), n, dtype=np.float16) for n in (2, 0, 5, 1)]
    features = WordFeatures.of(arrays)
    assert len(features) == 4 and [f.shape[0] for f in features] == [2, 0, 5, 1]
    assert np.array_equal(features[-2], arrays[2]) and [f.shape for f in features[1:3]] == [(0, 2, 3), (5, 2, 3)]
    buffer, first, count = features.on("cpu")
    assert first.tolist() == [0, 2, 2, 7] and count.tolist() == [2, 0, 5, 1]
    assert buffer.data_ptr() == torch.from_numpy(features.buffer).data_ptr()  # shared on the CPU, not copied
    with pytest.raises(ValueError, match="no sentences"):
        WordFeatures.of([])


def test_the_loss_read_once_an_epoch_is_the_per_batch_float_sum():
    """train_loss is summed on the device in float64: exactly the old float sum of per-batch losses."""
    from test_srl_training import tiny_prepared

    prep = tiny_prepared()
    cfg = tagger_settings(epochs=2, batch_size=2, hidden=8, projection=16, seed=4)
    torch.set_num_threads(1)
    losses = []
    original = torch.nn.CrossEntropyLoss.forward

    def recording(self, *args):
        loss = original(self, *args)
        losses.append(float(loss.detach()))
        return loss

    torch.nn.CrossEntropyLoss.forward = recording
    try:
        _, history = T.train(prep, cfg, n_layers=2, dim=8)
    finally:
        torch.nn.CrossEntropyLoss.forward = original
    sizes = [2, 2, 1]  # five instances in batches of two, in some order per epoch
    per_epoch = [losses[:3], losses[3:6]]
    for entry, epoch_losses in zip(history, per_epoch):
        candidates = {sum(x * s for x, s in zip(epoch_losses, order)) / 5 for order in set(itertools.permutations(sizes))}
        assert entry["train_loss"] in candidates


def test_the_packed_bilstm_for_cuda_equals_the_padded_one():
    """The one-call packed path (taken on CUDA; run here on the CPU) restores the batch's order:
    the same outputs as the padded per-direction path, zeros past each length."""
    torch.manual_seed(4)
    head = SrlHead(HeadConfig(n_layers=2, dim=8, hidden=6, proj=5, dropout=0.3), 4, 4, 4, 4).eval()
    lengths = torch.tensor([3, 7, 2, 7, 5, 1])
    x = torch.randn(len(lengths), 7, 5)
    with torch.inference_mode():
        packed, padded = head._packed_bilstm(x, lengths), head._bilstm(x, lengths)
    assert packed.shape == padded.shape and torch.allclose(packed, padded, atol=1e-6)
    assert torch.count_nonzero(packed[2, 2:]) == 0 and torch.count_nonzero(packed[2, :2]) > 0


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@cuda
def test_the_decoder_on_cuda_gives_the_cpu_paths():
    rng = np.random.default_rng(3)
    decoder = BatchViterbi(LABELS, forced_label=V, banned=BANNED)
    for kind in ("normal", "ties", "impossible", "huge"):
        scores = random_scores(rng, kind, 64, 25, len(LABELS))
        lengths = rng.integers(1, 26, size=64)
        predicate = np.array([rng.integers(0, m) for m in lengths])
        assert np.array_equal(decode_all(decoder, scores, lengths, predicate, "cuda"),
                              decode_all(decoder, scores, lengths, predicate, "cpu"))


@cuda
def test_the_head_and_predict_on_cuda_agree_with_the_cpu():
    torch.manual_seed(0)
    tagger, instances, features = random_tagger_and_instances(seed=2, n_sentences=30)
    head = tagger.head.eval()
    inputs, _ = tagger.batch(instances, features)
    with torch.inference_mode():
        on_cpu = head(*inputs)
        gpu_inputs, _ = tagger.batch(instances, features, "cuda")
        on_gpu = head.to("cuda")(*gpu_inputs).cpu()
    assert torch.allclose(on_cpu, on_gpu, atol=1e-4)
    cpu_tags = [t for t, _ in tagger.predict(instances, features, device="cpu")]
    gpu_tags = [t for t, _ in tagger.predict(instances, features, device="cuda")]
    assert gpu_tags == cpu_tags
    state = tagger.state()  # the heads are on cuda now: the checkpoint still holds CPU tensors
    assert all(v.device.type == "cpu" for v in state["head"].values())


@cuda
def test_training_a_step_on_cuda_runs():
    from test_srl_training import tiny_prepared

    prep = tiny_prepared()
    cfg = tagger_settings(epochs=2, batch_size=2, hidden=8, projection=16, seed=4, device="cuda")
    tagger, history = T.train(prep, cfg, n_layers=2, dim=8)
    assert len(history) == 2 and history[-1]["train_loss"] > 0
    assert T.evaluate(tagger, prep, "train", device="cuda")["overall"]["gold"] == 9
