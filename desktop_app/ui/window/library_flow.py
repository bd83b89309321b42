"""The main window's library side: opening and indexing folders (the indexing task),
the library pane's commands (open a document, hide a folder, ask within it, a
password), re-embedding the library, and listing files before the models are installed.

A mixin of :class:`~desktop_app.ui.window.main_window.MainWindow`, which builds the widgets
named below and provides ``show_status``, ``report`` and ``update_actions``.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog

from desktop_app.core.errors import DiskFullError, KnownError, LibraryError
from desktop_app.core.types import (
    DocStatus,
    FileIndexed,
    IndexProgress,
    IndexSummary,
    LibraryMovedAside,
)
from desktop_app.services.api import KnowledgeBaseAPI
from desktop_app.ui.conversation.history_panel import HistoryPanel
from desktop_app.ui.conversation.pane import ConversationPane
from desktop_app.ui.library.banner import LibraryBanner
from desktop_app.ui.library.tree_model import LibraryModel, top_folders
from desktop_app.ui.library.watcher import FolderWatcher
from desktop_app.ui.qt.async_bridge import TaskSet
from desktop_app.ui.viewer.page_viewer import PageViewer
from desktop_app.ui.window import dialogs
from desktop_app.ui.window.index_progress import IndexProgressWidget, summary_text

logger = logging.getLogger(__name__)


class LibraryMixin:
    """Folders, indexing and the library pane's commands of the main window."""

    kb: KnowledgeBaseAPI
    folder: str
    passwords: dict[str, str]
    index_task: asyncio.Task[IndexSummary | None] | None
    last_summary: IndexSummary | None
    library: LibraryModel
    conversation: ConversationPane
    viewer: PageViewer
    progress: IndexProgressWidget
    watcher: FolderWatcher
    library_banner: LibraryBanner
    tasks: TaskSet
    history: HistoryPanel

    def choose_folder(self) -> QFileDialog:
        return dialogs.choose_folder(self, self.folder, self.open_folder)

    def open_folder(self, folder: str, passwords: dict[str, str] | None = None) -> asyncio.Task[IndexSummary | None]:
        """Show ``folder``'s documents and index it; the task returns the summary."""
        folder = str(Path(folder).expanduser().resolve())
        previous = self.index_task if self.index_task is not None and not self.index_task.done() else None
        if previous is not None:
            self.kb.cancel()
        self.library.add_folder(folder)  # each opened folder is a top node of the library
        self.folder = folder
        self.watcher.watch(folder)
        self.setWindowTitle(f"{Path(folder).name} — Folio")
        self.index_task = asyncio.ensure_future(self._index(folder, passwords, previous))
        self.index_task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return self.index_task

    def reindex(self) -> None:
        if self.folder:
            self.open_folder(self.folder)

    async def _index(self, folder: str, passwords: dict[str, str] | None, previous: asyncio.Task | None) -> IndexSummary | None:
        if previous is not None:
            await asyncio.wait({previous})
        summary: IndexSummary | None = None
        self.library.begin_run()
        self.progress.start(folder)
        self.show_status(f"Indexing {folder}…")
        try:
            try:
                self.library.set_documents(await self.kb.library.documents(folder))
            except KnownError as error:
                logger.info("no earlier index for %s: %s", folder, error)
            async for event in self.kb.library.index(folder, passwords=passwords):
                self.library.apply(event)
                if isinstance(event, IndexProgress):
                    self.progress.update_progress(event)
                elif isinstance(event, FileIndexed) and event.status is DocStatus.NEEDS_PASSWORD:
                    self.passwords.pop(str(Path(event.path)), None)
                elif isinstance(event, IndexSummary):
                    summary = event
            self.library.set_documents(await self.kb.library.documents(folder))
        except KnownError as error:
            self.show_status(f"Indexing failed: {error}")
            if isinstance(error, LibraryError | DiskFullError):
                self.library_banner.show_problem(error)  # with its way forward, in the window
            else:
                self.report(str(error), known=True)
        except asyncio.CancelledError:
            self.show_status("Indexing stopped.")
            raise
        except Exception as error:  # a bug: log it with its traceback and say so
            logger.exception("indexing %s failed", folder)
            self.show_status(f"Indexing failed: {type(error).__name__}: {error}")
            self.report(f"Indexing failed unexpectedly: {error}", known=False)
        finally:
            self.progress.finish()
        if summary is not None:
            self.last_summary = summary
            self.show_status(summary_text(summary))
        return summary

    # ------------------------------------------------------------------ a library that cannot be used

    def check_library(self) -> asyncio.Task[None]:
        """Open the library and show what keeps it from opening (the banner), if anything."""
        return self.tasks.spawn(self._check_library(), "checking the library")

    async def _check_library(self) -> None:
        try:
            problem = await self.kb.library.problem()
        except KnownError as error:
            problem = error
        had = self.library_banner.problem is not None
        self.library_banner.show_problem(problem)
        if problem is not None:
            self.show_status(str(problem))
        elif had:
            self.show_status("The library opens again.")
            await self._list_folders(self.library.folders())

    def repair_library(self) -> asyncio.Task[None] | None:
        """The banner's Move aside and rebuild: the facade's ``repair`` as the indexing
        task (Stop cancels it; what was rebuilt so far stays)."""
        if self.index_task is not None and not self.index_task.done():
            self.show_status("The rebuild waits until indexing ends.")
            return None
        task: asyncio.Task[None] = asyncio.ensure_future(self._repair())
        self.index_task = task  # type: ignore[assignment]
        task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return task

    async def _repair(self) -> None:
        self.progress.start("Rebuilding the library")
        self.library_banner.set_working("Moving the library aside and rebuilding it from your folders…")
        self.library.begin_run()
        try:
            async for event in self.kb.library.repair(self.library.folders()):
                if isinstance(event, LibraryMovedAside):
                    self.show_status(f"The library was kept as {Path(event.moved_to).name}; rebuilding it from "
                                     f"{len(event.folders)} folder(s). {event.answers} saved answers are kept.")
                    for folder in event.folders:
                        self.library.add_folder(folder)
                else:
                    self.library.apply(event)
                    if isinstance(event, IndexProgress):
                        self.progress.update_progress(event)
            self.library_banner.show_problem(None)
            self.show_status("The library is rebuilt from your documents; your saved answers are kept.")
            await self._list_folders(self.library.folders())
            if self.history.isVisible():
                self.history.refresh()
        except KnownError as error:
            self.library_banner.show_problem(error)
            self.show_status(f"The rebuild stopped: {error}")
        except asyncio.CancelledError:
            self.show_status("The rebuild stopped; choose Move aside and rebuild again to go on.")
            raise
        finally:
            self.progress.finish()

    def _on_library_activated(self, path: str) -> None:
        row = self.library.row(path)
        if row is None:
            return
        if row.status is DocStatus.NEEDS_PASSWORD:
            self.ask_password(row.path)
        else:
            self.viewer.open_document(row.path)

    async def _list_folders(self, folders: list[str]) -> None:
        """List the folders opened in earlier sessions (what the library holds of them). When
        none of them holds a document of this library (the first start, ``--db`` with another
        library, the screenshot automation), list the library's own documents by folder."""
        listed = 0
        for folder in folders:
            self.library.add_folder(folder)
            try:
                documents = await self.kb.library.documents(folder)
            except KnownError as error:
                logger.info("cannot list %s: %s", folder, error)
                continue
            self.library.set_documents(documents)
            listed += len(documents)
        if listed:
            return
        try:
            documents = await self.kb.library.documents()
        except KnownError as error:
            logger.info("cannot list the library: %s", error)
            return
        for folder in top_folders(d.path for d in documents):
            self.library.add_folder(folder)
        self.library.set_documents(documents)

    def hide_folder(self, folder: str) -> None:
        """Stop listing an opened folder (the library keeps its documents)."""
        if self.library.remove_folder(folder):
            self.show_status(f"{Path(folder).name} is no longer listed; open it again to list it.")

    def ask_within(self, path: str) -> None:
        """Library ▸ Ask about this document/folder: the next questions search only it."""
        row = self.library.row(path)
        if row is not None:
            label = row.title
        else:  # not listed in the pane (e.g. `folio --in FILE` with no folder open)
            label = f"{Path(path).name} (folder)" if Path(path).is_dir() else Path(path).name
        self.conversation.set_scope((path,), label)
        self.conversation.question.setFocus()
        self.show_status(f"Questions now search only {label}. Remove the chip above the question box to search everything.")

    def ask_password(self, path: str) -> QInputDialog:
        return dialogs.ask_password(self, path, lambda password: self._password_given(path, password))

    def _password_given(self, path: str, password: str) -> None:
        if not password:
            return
        key = str(Path(path))
        self.passwords[key] = password
        self.viewer.set_password(key, password)
        self.open_folder(self.folder or str(Path(path).parent), passwords={key: password})

    def reembed_library(self) -> asyncio.Task[None] | None:
        """Rebuild the vectors of every stored passage with the current embedder (the
        facade's ``reindex``) as the indexing task: Stop and Esc cancel it."""
        if self.index_task is not None and not self.index_task.done():
            self.show_status("Re-embedding waits until indexing ends: use Settings again then.")
            return None
        task: asyncio.Task[None] = asyncio.ensure_future(self._reembed())
        self.index_task = task  # type: ignore[assignment]
        task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return task

    async def _reembed(self) -> None:
        self.progress.start("Re-embedding the library")
        self.show_status("Re-embedding the library with the new embedder…")
        try:
            async for event in self.kb.library.reindex():
                if isinstance(event, IndexProgress):
                    self.progress.update_progress(event)
            self.show_status("The library is re-embedded with the new embedder.")
        except KnownError as error:
            self.show_status(f"Re-embedding failed: {error}")
            self.report(str(error), known=True)
        except asyncio.CancelledError:
            self.show_status("Re-embedding stopped; choose the embedder again in Settings to resume.")
            raise
        finally:
            self.progress.finish()

    def list_unindexed(self, folder: Path, files: list[Path]) -> None:
        """List ``files`` without indexing them (no embedder yet) and show the first;
        installing the models then indexes ``folder`` (ModelSetup.models_changed)."""
        self.folder = str(folder.resolve())
        self.setWindowTitle(f"{folder.name} — Folio")
        self.library.clear()
        self.library.add_folder(self.folder)
        self.library.list_files([str(f) for f in files])
        if files:
            self.show_document(str(files[0]))
        self.update_actions()

    def show_document(self, path: str) -> None:
        self.viewer.open_document(path)
