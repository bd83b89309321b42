"""Shared fixtures: every test gets its own FOLIO_HOME; real models come from the one
install that `make test` made (FOLIO_MODELS_DIR)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# `folio ask` keeps its model loaded after the command (core/models/keep_alive.py): tests that run
# the command keep none behind them, and those of the kept model set their own (short) time.
os.environ["FOLIO_KEEP_ALIVE"] = "0"


def strict() -> bool:
    """In CI and under `make test` (FOLIO_REQUIRE_MODELS) a missing model, font, shared file
    or native library fails the run instead of skipping the test."""
    return bool(os.environ.get("FOLIO_REQUIRE_MODELS") or os.environ.get("CI"))


def require(available: bool, message: str) -> None:
    """Skip with ``message`` when ``available`` is false; fail instead under :func:`strict`."""
    if available:
        return
    if strict():
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(autouse=True)
def folio_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("folio-home")
    monkeypatch.setenv("FOLIO_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    require(SHARED.is_dir(), f"{SHARED} is absent: the shared corpus is needed for this test")
    return SHARED


def _need_model(path: Path, what: str) -> Path:
    if path.exists():
        return path
    require(False, f"{what} is not installed at {path}: run `make test` (it runs `folio models install --small`)")
    return path  # not reached


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
