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
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop_app.core import paths
from desktop_app.core import settings as settings_store
from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.settings import Settings
from desktop_app.services import model_install
from desktop_app.services.model_install import Installer, ModelCheck, ModelInstall, write_samples
from desktop_app.ui.setup.first_run import FirstRunPanel, InstallDialog

logger = logging.getLogger(__name__)

SAMPLES_FOLDER = "samples"


def data_folder(settings: Settings) -> Path:
    """Where the library and the samples live: the settings' data folder, else the default."""
    return paths.library_dir(settings.data_dir)


class SetupHost(Protocol):
    """What the first-run flow asks of its window. The window keeps its own state (the
    facade, the open folder, the indexing task, the progress bar); the flow only asks."""

    folder: str
    tasks: Any  # async_qt.TaskSet

    def show_status(self, text: str) -> None: ...
    def report(self, message: str, known: bool) -> None: ...
    async def rebuild_knowledge_base(self) -> bool: ...
    def reembed_library(self) -> asyncio.Task[None] | None: ...
    def reindex(self) -> Any: ...
    def open_folder(self, folder: str) -> Any: ...
    def list_unindexed(self, folder: Path, files: list[Path]) -> None: ...
    def show_document(self, path: str) -> None: ...


class ModelSetup(QObject):
    """Owns the first-run panel and the install flow of one window."""

    checked = Signal(object)  # ModelCheck
    install_finished = Signal(bool)  # True when the models were installed

    def __init__(self, host: SetupHost, parent: QWidget, panel: FirstRunPanel,
                 settings_path: Path | None = None) -> None:
        super().__init__(parent)
        self.window = host
        self.parent_widget = parent  # dialogs open over it
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
        check = model_install.check_models(self.settings())
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
        self.dialog = InstallDialog(check.install_set, self.parent_widget)
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

    async def apply_settings(self, reembed: bool) -> None:
        """After the settings dialog saved: new facade, models re-checked, and the library
        re-embedded if the embedder changed and the user agreed."""
        rebuilt = await self.window.rebuild_knowledge_base()
        self.check()
        if reembed and rebuilt:
            self.window.reembed_library()

    async def models_changed(self) -> None:
        """Rebuild the facade for the new models, re-check, and index the open folder."""
        await self.window.rebuild_knowledge_base()
        check = self.check()
        if check.ready and self.window.folder:
            self.window.reindex()

    # ------------------------------------------------------------------ a GGUF file

    def choose_gguf(self) -> QFileDialog:
        dialog = QFileDialog(self.parent_widget, "Choose a GGUF model", str(Path.home()), "GGUF models (*.gguf)")
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
            self.window.list_unindexed(folder, files)
            self.window.show_status(
                f"Sample PDFs are in {folder}. Install the models to search them and ask questions."
            )
        else:
            self.window.open_folder(str(folder))
            self.window.show_document(str(files[0]))
        return folder
