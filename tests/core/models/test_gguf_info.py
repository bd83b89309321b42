"""Reading a GGUF header without llama.cpp: size, context length, architecture."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.models.gguf_info import NotGgufError, is_gguf, read_info
from tests.ggufgen import gguf_bytes, write_gguf


@pytest.mark.parametrize("version", [1, 2, 3])
def test_context_length_and_architecture_of_each_version(tmp_path: Path, version: int) -> None:
    path = write_gguf(tmp_path / "m.gguf", "qwen2", 32768, "Qwen Tiny", version=version, padding=1000)
    info = read_info(path)
    assert (info.architecture, info.context_length, info.name) == ("qwen2", 32768, "Qwen Tiny")
    assert info.version == version and info.size == path.stat().st_size
    assert info.file_type == "Q4_K_M"
    assert "context 32,768 tokens" in info.describe() and "qwen2" in info.describe()


def test_big_endian_files_are_read(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "be.gguf", "llama", 4096, big_endian=True)
    assert read_info(path).context_length == 4096


def test_keys_after_long_arrays_are_still_found(tmp_path: Path) -> None:
    metadata = {
        "general.architecture": "phi3",
        "tokenizer.ggml.scores": list(range(5000)),
        "tokenizer.ggml.tokens": [f"tok{i}" for i in range(5000)],
        "phi3.context_length": 131072,
    }
    path = tmp_path / "late.gguf"
    path.write_bytes(gguf_bytes(metadata))
    assert read_info(path).context_length == 131072


def test_a_model_without_context_length_says_so(tmp_path: Path) -> None:
    path = tmp_path / "bare.gguf"
    path.write_bytes(gguf_bytes({"general.architecture": "gpt2"}))
    info = read_info(path)
    assert info.context_length is None and "context length not stated" in info.describe()


def test_files_that_are_not_gguf_are_refused_with_the_reason(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"PK\x03\x04 this is a zip file")
    assert not is_gguf(fake)
    with pytest.raises(NotGgufError, match="GGUF magic bytes"):
        read_info(fake)
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(gguf_bytes({"general.architecture": "llama"})[:20])
    assert is_gguf(truncated)
    with pytest.raises(NotGgufError, match="ends early"):
        read_info(truncated)
    with pytest.raises(Exception, match="Cannot read"):
        read_info(tmp_path / "missing.gguf")


def test_the_installed_small_model(small_model_path: Path) -> None:
    info = read_info(small_model_path)
    assert (info.architecture, info.context_length) == ("llama", 8192)
