"""Shared fixtures: every test gets its own FOLIO_HOME; real models come from the one
install that `make test` made (FOLIO_MODELS_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def folio_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("folio-home")
    monkeypatch.setenv("FOLIO_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the shared corpus is needed for this test")
    return SHARED


def _need_model(path: Path, what: str) -> Path:
    if path.exists():
        return path
    message = f"{what} is not installed at {path}: run `make test` (it runs `folio models install --small`)"
    if os.environ.get("FOLIO_REQUIRE_MODELS"):
        pytest.fail(message)
    pytest.skip(message)


def _models_dir() -> Path:
    override = os.environ.get("FOLIO_MODELS_DIR")
    if override:
        return Path(override)
    return REPO / ".folio-test-home" / "data" / "models"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return _models_dir()


@pytest.fixture(scope="session")
def small_model_path(models_dir: Path) -> Path:
    return _need_model(models_dir / "SmolLM2-135M-Instruct.Q4_1.gguf", "The small GGUF model")


@pytest.fixture(scope="session")
def embedder_dir(models_dir: Path) -> Path:
    folder = models_dir / "all-MiniLM-L6-v2-int8"
    _need_model(folder / "model.onnx", "The ONNX embedder")
    _need_model(folder / "tokenizer.json", "The embedder's tokenizer")
    return folder


@pytest.fixture(scope="session")
def real_embedder(embedder_dir: Path):  # type: ignore[no-untyped-def]
    from desktop_app.core.models.embed import OnnxEmbedder

    return OnnxEmbedder(embedder_dir / "model.onnx", embedder_dir / "tokenizer.json")
