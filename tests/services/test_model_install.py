"""What the window asks about models: is anything missing, what is a model file, and
installing on a worker thread with progress on the event loop and a working Cancel."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from desktop_app.core.errors import Cancelled
from desktop_app.core.models import catalog as models
from desktop_app.core.models.catalog import InstallProgress, InstallStep
from desktop_app.core.settings import Settings
from desktop_app.services import model_install
from desktop_app.services.model_install import ModelInstall, check_models
from tests.ggufgen import write_gguf
from tests.ui.fakes import FakeInstaller


@pytest.fixture
def empty_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "models"
    monkeypatch.setenv("FOLIO_MODELS_DIR", str(folder))
    return folder


def test_nothing_installed_names_both_models_and_the_default_set(empty_models: Path) -> None:
    check = check_models(Settings())
    assert not check.ready
    assert [p.role for p in check.problems] == ["answer model", "embedder"]
    assert "is not installed" in check.problems[0].message
    assert check.install_set == "default" and check.fixable_by_install
    assert check.install_bytes == sum(s.size for s in models.select(models.load_manifest(), "default"))
    assert check_models(Settings(answer_model="small")).install_set == "small"


def test_after_installing_nothing_is_missing(empty_models: Path) -> None:
    FakeInstaller()("small")
    check = check_models(Settings(answer_model="small"))
    assert check.ready and check.install_bytes == 0
    # A GGUF of the user's own and the installed embedder: ready too.
    own = write_gguf(empty_models.parent / "own.gguf")
    assert check_models(Settings(answer_model=str(own))).ready


def test_a_missing_own_model_is_not_fixed_by_installing(empty_models: Path) -> None:
    FakeInstaller()("small")
    check = check_models(Settings(answer_model=str(empty_models / "gone.gguf")))
    assert check.missing("answer model") and not check.missing("embedder")
    assert not check.fixable_by_install


def test_describing_a_gguf_file_gives_size_and_context(empty_models: Path) -> None:
    own = write_gguf(empty_models.parent / "own.gguf", "qwen2", 32768)
    info = asyncio.run(model_install.describe_answer_model(str(own)))
    assert info.installed and info.gguf is not None and info.gguf.context_length == 32768
    assert "context 32,768 tokens" in info.summary and "own.gguf" in info.summary
    missing = asyncio.run(model_install.describe_answer_model("default"))
    assert not missing.installed and "not installed" in missing.summary and "1.1 GB" in missing.summary
    junk = empty_models.parent / "junk.gguf"
    junk.write_text("not a model")
    assert "not a GGUF model" in asyncio.run(model_install.describe_answer_model(str(junk))).problem
    embedder = asyncio.run(model_install.describe_embedder(str(empty_models.parent)))
    assert not embedder.installed and "model.onnx" in embedder.problem


def test_install_runs_off_the_event_loop_thread_and_reports_progress(empty_models: Path) -> None:
    installer = FakeInstaller()
    seen: list[tuple[InstallProgress, str]] = []

    async def run() -> list[Path]:
        job = ModelInstall("small", installer)
        return await job.run(lambda event: seen.append((event, threading.current_thread().name)))

    paths = asyncio.run(run())
    assert installer.threads and installer.threads[0].startswith("folio-install")
    assert {thread for _, thread in seen} == {threading.main_thread().name}  # handed to the loop
    assert seen[-1][0].step is InstallStep.INSTALLED and seen[-1][0].models_done == 5  # 1 GGUF, 2 embedders
    assert all(p.is_file() for p in paths)


def test_cancel_stops_the_installer(empty_models: Path) -> None:
    installer = FakeInstaller(hold=True)

    async def run() -> None:
        job = ModelInstall("default", installer)
        task = asyncio.ensure_future(job.run(lambda _event: None))
        while not installer.halfway.is_set():
            await asyncio.sleep(0.005)
        job.cancel()
        await task

    with pytest.raises(Cancelled):
        asyncio.run(run())
    assert not any(m.installed for m in models.list_models("default"))


def test_the_real_installer_is_the_default() -> None:
    assert ModelInstall().installer is models.install  # its real run: tests/e2e/test_models_install_real.py
