"""OnnxEmbedder on a tiny hand-built ONNX model (a token-embedding table) and a word tokenizer.

The model's ``last_hidden_state`` is one table row per token, so the sentence vector
Folio must produce is known exactly: the mean of the rows of the real tokens, L2-normalised.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.errors import KnownError
from desktop_app.core.models.catalog import open_embedder
from desktop_app.core.models.embed import OnnxEmbedder
from desktop_app.core.stages import Embedder

WORDS = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "honeydew"]
VOCAB = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3} | {w: i + 4 for i, w in enumerate(WORDS)}
DIM = 6
TABLE = np.random.default_rng(7).normal(size=(len(VOCAB), DIM)).astype(np.float32)


# --------------------------------------------------------------------------- a minimal ONNX writer


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | int | str) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _value_info(name: str, elem_type: int, dims: list[int | str]) -> bytes:
    shape = b"".join(_field(1, _field(1, d) if isinstance(d, int) else _field(2, d)) for d in dims)
    tensor_type = _field(1, elem_type) + _field(2, shape)
    return _field(1, name) + _field(2, _field(1, tensor_type))


def _model(inputs: list[str], table: np.ndarray) -> bytes:
    """input_ids -> Gather(table) -> last_hidden_state (batch, tokens, dim); other inputs unused."""
    initializer = (
        b"".join(_field(1, d) for d in table.shape)
        + _field(2, 1)  # FLOAT
        + _field(8, "table")
        + _field(9, struct.pack(f"<{table.size}f", *table.ravel()))
    )
    node = _field(1, "table") + _field(1, "input_ids") + _field(2, "last_hidden_state")
    node += _field(4, "Gather") + _field(5, _field(1, "axis") + _field(3, 0) + _field(20, 2))
    graph = _field(1, node) + _field(2, "tiny") + _field(5, initializer)
    graph += b"".join(_field(11, _value_info(n, 7, ["batch", "sequence"])) for n in inputs)
    graph += _field(12, _value_info("last_hidden_state", 1, ["batch", "sequence", DIM]))
    opset = _field(1, "") + _field(2, 13)
    return _field(1, 8) + _field(2, "folio-test") + _field(7, graph) + _field(8, opset)


def _tokenizer(path: Path) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.save(str(path))
    return path


@pytest.fixture
def embedder_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-embedder"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(_model(["input_ids", "attention_mask"], TABLE))
    _tokenizer(folder / "tokenizer.json")
    return folder


def _expected(text: str, max_tokens: int = 256) -> np.ndarray:
    ids = [2] + [VOCAB.get(w, 1) for w in text.split()][: max_tokens - 2] + [3]
    vector = TABLE[ids].mean(axis=0)
    return vector / np.linalg.norm(vector)


def _embedder(folder: Path, **kwargs: object) -> OnnxEmbedder:
    return OnnxEmbedder(folder / "model.onnx", folder / "tokenizer.json", threads=1, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- behaviour


def test_vectors_are_mean_pooled_over_real_tokens_in_input_order(embedder_dir: Path) -> None:
    texts = [
        "apple banana cherry date elder fig grape",
        "fig",
        "banana banana",
        "",
        "grape honeydew apple",
        "cherry kiwi",  # unknown word
    ]
    embedder = _embedder(embedder_dir, batch_size=2)  # several batches, padded differently
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), DIM)
    expected = np.stack([_expected(t) for t in texts])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_a_text_embeds_the_same_alone_or_beside_longer_ones(embedder_dir: Path) -> None:
    embedder = _embedder(embedder_dir)
    alone = embedder.embed(["fig grape"])
    padded = embedder.embed(["apple banana cherry date elder fig grape honeydew", "fig grape"])
    np.testing.assert_allclose(alone[0], padded[1], atol=1e-6)


def test_long_texts_are_cut_to_max_tokens_but_counted_in_full(embedder_dir: Path) -> None:
    embedder = _embedder(embedder_dir, max_tokens=4)
    text = "apple banana cherry date elder fig"
    np.testing.assert_allclose(embedder.embed([text])[0], _expected(text, 4), atol=1e-6)
    assert embedder.count_tokens(text) == 8  # six words + [CLS] + [SEP]
    assert embedder.max_tokens == 4


def test_identity_dim_and_empty_input(embedder_dir: Path) -> None:
    embedder: Embedder = _embedder(embedder_dir)
    assert embedder.dim == DIM
    assert embedder.model_id.startswith("tiny-embedder:") and len(embedder.model_id) == 26
    assert embedder.embed([]).shape == (0, DIM)
    renamed = _embedder(embedder_dir, model_id="mine")
    assert renamed.model_id == "mine"


def test_open_embedder_reads_a_folder(embedder_dir: Path) -> None:
    embedder = open_embedder(str(embedder_dir), threads=1)
    np.testing.assert_allclose(embedder.embed(["date"])[0], _expected("date"), atol=1e-6)


# --------------------------------------------------------------------------- wrong files


def test_a_file_that_is_not_onnx_is_a_known_error_naming_it(embedder_dir: Path) -> None:
    (embedder_dir / "model.onnx").write_bytes(b"this is not a model")
    with pytest.raises(KnownError) as info:
        _embedder(embedder_dir)
    assert str(embedder_dir / "model.onnx") in info.value.message
    assert "folio models install" in info.value.hint


def test_an_onnx_model_that_is_not_an_embedder_is_refused(embedder_dir: Path) -> None:
    from onnxruntime.datasets import get_example

    sigmoid = Path(get_example("sigmoid.onnx"))
    (embedder_dir / "model.onnx").write_bytes(sigmoid.read_bytes())
    with pytest.raises(KnownError, match="is not a sentence embedder"):
        _embedder(embedder_dir)


def test_an_embedder_with_an_unknown_input_is_refused(embedder_dir: Path) -> None:
    model = _model(["input_ids", "attention_mask", "pixel_values"], TABLE)
    (embedder_dir / "model.onnx").write_bytes(model)
    with pytest.raises(KnownError, match="pixel_values"):
        _embedder(embedder_dir)


def test_a_broken_tokenizer_is_a_known_error(embedder_dir: Path) -> None:
    (embedder_dir / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(KnownError, match="not a readable tokenizer.json"):
        _embedder(embedder_dir)
