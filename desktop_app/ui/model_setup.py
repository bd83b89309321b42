"""The first-run flow: notice missing models, install them, use a GGUF file, or open the
sample folder.

:meth:`ModelSetup.check` runs when the window starts (and after every change of models):
it asks the services which models the settings need and shows the panel if any is
missing. The installation runs on a worker thread through ``ModelInstall``; its progress
dialog never blocks the event loop. After a successful install or a new GGUF file the
window rebuilds its facade, and a folder that is open gets indexed.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from desktop_app.core import paths
from desktop_app.core import settings as settings_store
from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.samples.pdfs import write_samples
from desktop_app.core.settings import Settings
from desktop_app.core.types import IndexProgress
from desktop_app.services import models_service
from desktop_app.services.models_service import Installer, ModelCheck, ModelInstall
from desktop_app.ui.first_run import FirstRunPanel, InstallDialog

if TYPE_CHECKING:
    from desktop_app.ui.main_window import MainWindow

logger = logging.getLogger(__name__)

SAMPLES_FOLDER = "samples"


def data_folder(settings: Settings) -> Path:
    """Where the library and the samples live: the settings' data folder, else the default."""
    return paths.library_dir(settings.data_dir)


class ModelSetup(QObject):
    """Owns the first-run panel and the install flow of one window."""

    checked = Signal(object)  # ModelCheck
    install_finished = Signal(bool)  # True when the models were installed

    def __init__(self, window: MainWindow, panel: FirstRunPanel, settings_path: Path | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.panel = panel
        self.settings_path = settings_path
        self.installer: Installer | None = None  # None: the real installer (tests inject one)
        self.last_check: ModelCheck | None = None
        self.job: ModelInstall | None = None
        self.task: asyncio.Task[bool] | None = None
        self.dialog: InstallDialog | None = None
        panel.install_requested.connect(self.install)
        panel.choose_gguf_requested.connect(self.choose_gguf)
        panel.samples_requested.connect(self.open_samples)

    def settings(self) -> Settings:
        return settings_store.load(self.settings_path)

    # ------------------------------------------------------------------ checking

    def check(self) -> ModelCheck:
        """Show the panel if a model the settings name is missing; hide it otherwise."""
        check = models_service.check_models(self.settings())
        self.last_check = check
        if check.ready:
            self.panel.hide()
        else:
            logger.info("models missing: %s", "; ".join(p.message for p in check.problems))
            self.panel.show_check(check)
        self.checked.emit(check)
        return check

    def show_setup(self) -> ModelCheck:
        """Help ▸ Set Up Models: the panel, or a word that all is in place."""
        check = self.check()
        if check.ready:
            self.window.show_status("All models are installed.")
        return check

    # ------------------------------------------------------------------ installing

    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def cancel(self) -> None:
        """Stop a running installation (the window is closing): its worker thread must
        end, or the interpreter would wait for it at exit."""
        if self.job is not None and self.busy():
            self.job.cancel()

    def install(self) -> asyncio.Task[bool] | None:
        if self.busy():
            return self.task
        check = self.last_check or self.check()
        self.job = ModelInstall(check.install_set, self.installer)
        self.dialog = InstallDialog(check.install_set, self.window)
        self.dialog.cancel_requested.connect(self.job.cancel)
        self.dialog.open()
        self.task = asyncio.ensure_future(self._install(self.job, self.dialog))
        return self.task

    async def _install(self, job: ModelInstall, dialog: InstallDialog) -> bool:
        self.window.show_status(f"Installing the {job.which} models…")
        try:
            await job.run(dialog.show_progress)
        except Cancelled:
            dialog.show_cancelled()
            self.window.show_status("Model installation cancelled.")
            self.install_finished.emit(False)
            return False
        except KnownError as error:  # offline, checksum, disk full: with its fix
            logger.warning("model install failed: %s", error)
            dialog.show_failure(error.message, error.hint)
            self.panel.show_error(str(error))
            self.window.show_status("Model installation failed.")
            self.install_finished.emit(False)
            return False
        except asyncio.CancelledError:
            job.cancel()
            raise
        except Exception as error:  # a bug: the traceback goes to the log
            logger.exception("model install failed")
            dialog.show_failure(f"The installation failed unexpectedly: {error}", "This is a bug; details are in the log.")
            self.install_finished.emit(False)
            return False
        dialog.show_done()
        self.window.show_status("Models installed.")
        await self.models_changed()
        self.install_finished.emit(True)
        return True

    async def rebuild_knowledge_base(self) -> bool:
        """Swap in a facade built from the saved settings (``window.kb_factory``)."""
        window = self.window
        if window.kb_factory is None:
            logger.info("no facade factory: the new settings apply at the next start")
            return False
        try:
            await window.replace_knowledge_base(window.kb_factory)
        except KnownError as error:
            window.show_status(f"Settings not applied: {error}")
            window.report(str(error), known=True)
            return False
        return True

    def reembed(self) -> asyncio.Task[None] | None:
        """Rebuild the vectors of every stored passage with the current embedder (the
        facade's ``reindex``), as the window's indexing task: Stop and Esc cancel it."""
        window = self.window
        if window.index_task is not None and not window.index_task.done():
            window.show_status("Re-embedding waits until indexing ends: use Settings again then.")
            return None
        task: asyncio.Task[None] = asyncio.ensure_future(self._reembed())
        window.index_task = task  # type: ignore[assignment]
        task.add_done_callback(lambda _task: window.update_actions())
        window.update_actions()
        return task

    async def _reembed(self) -> None:
        window = self.window
        window.progress.start("Re-embedding the library")
        window.show_status("Re-embedding the library with the new embedder…")
        try:
            async for event in window.kb.reindex():
                if isinstance(event, IndexProgress):
                    window.progress.update_progress(event)
            window.show_status("The library is re-embedded with the new embedder.")
        except KnownError as error:
            window.show_status(f"Re-embedding failed: {error}")
            window.report(str(error), known=True)
        except asyncio.CancelledError:
            window.show_status("Re-embedding stopped; choose the embedder again in Settings to resume.")
            raise
        finally:
            window.progress.finish()

    async def apply_settings(self, reembed: bool) -> None:
        """After the settings dialog saved: new facade, models re-checked, and the library
        re-embedded if the embedder changed and the user agreed."""
        rebuilt = await self.rebuild_knowledge_base()
        self.check()
        if reembed and rebuilt:
            self.reembed()

    async def models_changed(self) -> None:
        """Rebuild the facade for the new models, re-check, and index the open folder."""
        await self.rebuild_knowledge_base()
        check = self.check()
        if check.ready and self.window.folder:
            self.window.reindex()

    # ------------------------------------------------------------------ a GGUF file

    def choose_gguf(self) -> QFileDialog:
        dialog = QFileDialog(self.window, "Choose a GGUF model", str(Path.home()), "GGUF models (*.gguf)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.use_gguf)
        dialog.open()
        return dialog

    def use_gguf(self, path: str) -> bool:
        """Save ``path`` as the answer model; a file that is not a GGUF model is refused."""
        chosen = self.settings().replace(answer_model=str(Path(path).expanduser()))
        try:
            settings_store.save(chosen, self.settings_path)
        except KnownError as error:
            self.panel.show_error(str(error))
            self.window.show_status(f"Not used: {error.message}")
            return False
        except OSError as error:
            self.panel.show_error(f"Could not save the settings: {error}")
            return False
        self.window.show_status(f"Answer model: {Path(path).name}")
        self.window.tasks.spawn(self.models_changed(), "use GGUF")
        return True

    # ------------------------------------------------------------------ samples

    def open_samples(self) -> Path:
        """Write the sample PDFs into the data folder and open them.

        Without the embedder they cannot be indexed yet: the library lists them and the
        viewer shows the first; installing the models then indexes the folder."""
        folder = data_folder(self.settings()) / SAMPLES_FOLDER
        try:
            files = write_samples(folder)
        except OSError as error:
            self.panel.show_error(f"Could not write the sample folder {folder}: {error}")
            return folder
        check = self.last_check or self.check()
        if check.missing("embedder"):
            self.show_unindexed(folder, files)
            self.window.show_status(
                f"Sample PDFs are in {folder}. Install the models to search them and ask questions."
            )
        else:
            self.window.open_folder(str(folder))
            self.window.viewer.open_document(str(files[0]))
        return folder

    def show_unindexed(self, folder: Path, files: list[Path]) -> None:
        """List ``files`` without indexing them (no embedder yet) and show the first;
        installing the models then indexes ``folder`` (see :meth:`models_changed`)."""
        window = self.window
        window.folder = str(folder.resolve())
        window.setWindowTitle(f"{folder.name} — Folio")
        window.library.clear()
        window.library.list_files([str(f) for f in files])
        if files:
            window.viewer.open_document(str(files[0]))
        window.update_actions()
