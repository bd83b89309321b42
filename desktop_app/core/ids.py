"""Deterministic identifiers. Qt-free.

``doc_id`` is the sha256 of the file's bytes; ``chunk_id`` is
``f"{doc_id[:16]}:{page}:{index}"``, so re-ingesting the same bytes gives the same ids.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

_BLOCK = 1 << 20


def sha256_file(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chunk_id(doc_id: str, page: int, index: int) -> str:
    """``page`` is the 1-based physical page, ``index`` the chunk's position on that page."""
    return f"{doc_id[:16]}:{page}:{index}"
