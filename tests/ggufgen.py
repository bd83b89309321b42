"""Tiny GGUF files for tests: a header with chosen metadata and no tensors."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any


def _string(text: str, order: str, wide: bool) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack(order + ("Q" if wide else "I"), len(raw)) + raw


def _value(value: Any, order: str, wide: bool) -> tuple[int, bytes]:
    if isinstance(value, bool):
        return 7, struct.pack(order + "?", value)
    if isinstance(value, int):
        return 4, struct.pack(order + "I", value)
    if isinstance(value, float):
        return 6, struct.pack(order + "f", value)
    if isinstance(value, str):
        return 8, _string(value, order, wide)
    if isinstance(value, list):  # arrays of strings or of uint32
        if all(isinstance(v, str) for v in value):
            body = b"".join(_string(v, order, wide) for v in value)
            kind = 8
        else:
            body = b"".join(struct.pack(order + "I", v) for v in value)
            kind = 4
        count = struct.pack(order + ("Q" if wide else "I"), len(value))
        return 9, struct.pack(order + "I", kind) + count + body
    raise TypeError(value)


def gguf_bytes(metadata: dict[str, Any], version: int = 3, big_endian: bool = False, padding: int = 0) -> bytes:
    order = ">" if big_endian else "<"
    wide = version >= 2
    count = "Q" if wide else "I"
    out = b"GGUF" + struct.pack(order + "I", version)
    out += struct.pack(order + count, 0) + struct.pack(order + count, len(metadata))
    for key, value in metadata.items():
        kind, body = _value(value, order, wide)
        out += _string(key, order, wide) + struct.pack(order + "I", kind) + body
    return out + b"\0" * padding


def write_gguf(
    path: Path,
    architecture: str = "llama",
    context_length: int = 2048,
    name: str = "Tiny Test Model",
    **options: Any,
) -> Path:
    metadata: dict[str, Any] = {
        "general.architecture": architecture,
        "general.name": name,
        f"{architecture}.context_length": context_length,
        "general.file_type": 15,
        "tokenizer.ggml.tokens": ["<s>", "</s>", "hello"],
    }
    path.write_bytes(gguf_bytes(metadata, **options))
    return path
