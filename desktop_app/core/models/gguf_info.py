"""What a GGUF model file says about itself, read from its header without llama.cpp. Qt-free.

A GGUF file starts with the magic ``GGUF``, a version (1, 2 or 3), the tensor and
key-value counts, then the key-value metadata: ``general.architecture`` names the
architecture (``qwen2``, ``llama``…) and ``<arch>.context_length`` the context window the
model was trained for. Version 1 counts and string lengths are 32-bit, later ones 64-bit;
version 3 may be big-endian. Reading stops as soon as the wanted keys are found, so even a
multi-gigabyte model is described after reading a few kilobytes.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from desktop_app.core.errors import KnownError

logger = logging.getLogger(__name__)

MAGIC = b"GGUF"
_MAX_KEYS = 1 << 20
_MAX_STRING = 1 << 24  # metadata strings (chat templates included) stay far below this

# value type -> struct format of one scalar (8 = string and 9 = array are handled apart)
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9

# general.file_type values llama.cpp writes (LLAMA_FTYPE_*), for the settings dialog
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 32: "BF16",
}  # fmt: skip


# A metadata value as read: a scalar, a string, or None for an array (skipped).
MetadataValue = int | float | str | None


class NotGgufError(KnownError):
    """The file is not a GGUF model (wrong magic bytes, or a damaged header)."""


@dataclass(frozen=True)
class GgufInfo:
    path: Path
    size: int  # bytes on disk
    version: int
    architecture: str  # "" when the header does not say
    context_length: int | None  # tokens the model was trained for; None when not stated
    name: str = ""  # general.name, when present
    file_type: str = ""  # quantisation, e.g. "Q4_K_M", when present

    def describe(self) -> str:
        """One line for people: size, context window, architecture and quantisation."""
        parts = [human_size(self.size)]
        if self.context_length:
            parts.append(f"context {self.context_length:,} tokens")
        else:
            parts.append("context length not stated")
        detail = " ".join(p for p in (self.architecture, self.file_type) if p)
        if detail:
            parts.append(detail)
        return " · ".join(parts)


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit in ("bytes", "KB") else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{size:,} bytes"  # pragma: no cover - the loop always returns


def is_gguf(path: str | Path) -> bool:
    """True when ``path`` is a readable file that starts with the GGUF magic bytes."""
    try:
        with Path(path).open("rb") as handle:
            return handle.read(4) == MAGIC
    except OSError:
        return False


def read_info(path: str | Path) -> GgufInfo:
    """Read the header of ``path``; raises :class:`NotGgufError` if it is not a GGUF model
    and ``KnownError`` if it cannot be read."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with path.open("rb", buffering=1 << 16) as handle:
            return _Reader(handle, path, size).read()
    except OSError as error:
        raise KnownError(f"Cannot read {path}: {error.strerror or error}.", "Pick another model file.") from error


class _Reader:
    def __init__(self, handle: IO[bytes], path: Path, size: int) -> None:
        self.handle = handle
        self.path = path
        self.size = size
        self.order = "<"
        self.wide = True  # 64-bit counts and lengths (version 2 and later)

    def fail(self, why: str) -> NotGgufError:
        return NotGgufError(f"{self.path.name} is not a GGUF model file ({why}).", "Pick a .gguf model file.")

    def take(self, count: int) -> bytes:
        data = self.handle.read(count)
        if len(data) != count:
            raise self.fail("the header ends early")
        return data

    def unpack(self, fmt: str) -> int | float:
        """One scalar of struct format ``fmt`` (bools are ints)."""
        fmt = self.order + fmt
        scalar: int | float = struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        return scalar

    def count(self) -> int:
        return int(self.unpack("Q" if self.wide else "I"))

    def string(self) -> str:
        length = self.count()
        if length > _MAX_STRING or length > self.size:
            raise self.fail("a metadata string is implausibly long")
        return self.take(length).decode("utf-8", errors="replace")

    def read(self) -> GgufInfo:
        if self.take(4) != MAGIC:
            raise self.fail("it does not start with the GGUF magic bytes")
        raw = self.take(4)
        version = struct.unpack("<I", raw)[0]
        if version > 0xFFFF and struct.unpack(">I", raw)[0] in (2, 3):
            self.order, version = ">", struct.unpack(">I", raw)[0]
        if version not in (1, 2, 3):
            raise self.fail(f"unknown GGUF version {version}")
        self.wide = version >= 2
        self.count()  # tensor count
        keys = self.count()
        if keys > _MAX_KEYS:
            raise self.fail("implausible number of metadata keys")
        found: dict[str, MetadataValue] = {}
        for _ in range(keys):
            key = self.string()
            kind = int(self.unpack("I"))
            wanted = key in ("general.architecture", "general.name", "general.file_type") or key.endswith(
                ".context_length"
            )
            value = self.value(kind, keep=wanted)
            if wanted:
                found[key] = value
            architecture = found.get("general.architecture")
            if architecture and f"{architecture}.context_length" in found:
                # the tokenizer's long arrays follow the model keys: stop before them
                if key.startswith("tokenizer.") or {"general.name", "general.file_type"} <= found.keys():
                    break
        architecture = str(found.get("general.architecture", ""))
        context = found.get(f"{architecture}.context_length") if architecture else None
        file_type = found.get("general.file_type")
        return GgufInfo(
            path=self.path,
            size=self.size,
            version=version,
            architecture=architecture,
            context_length=int(context) if isinstance(context, int) and context > 0 else None,
            name=str(found.get("general.name", "")),
            file_type=FILE_TYPES.get(file_type, "") if isinstance(file_type, int) else "",
        )

    def value(self, kind: int, keep: bool) -> MetadataValue:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind = int(self.unpack("I"))
            length = self.count()
            if length > self.size:
                raise self.fail("an array is implausibly long")
            if item_kind in _SCALARS:  # skip fixed-size items in one seek
                self.handle.seek(length * struct.calcsize(_SCALARS[item_kind]), 1)
            else:
                for _ in range(length):
                    self.value(item_kind, keep=False)
            return None
        raise self.fail(f"unknown metadata type {kind}")
