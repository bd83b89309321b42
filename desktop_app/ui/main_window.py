"""Folio's main window: library | conversation | page viewer, menus, toolbar, status bar.

Every backend call goes through the async facade (``KnowledgeBaseAPI``) in tasks the
window keeps handles to, so Stop and closing the window can cancel them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import paths
from desktop_app.core.errors import KnownError
from desktop_app.core.types import (
    AnswerFailed,
    DocStatus,
    FileIndexed,
    IndexProgress,
    IndexSummary,
    OcrLine,
    SourcePayload,
    SourceState,
)
from desktop_app.services.api import KnowledgeBaseAPI
from desktop_app.ui import check_dialog, dialogs
from desktop_app.ui.answer_model import AnswerTurn
from desktop_app.ui.answer_view import ConversationPane
from desktop_app.ui.async_qt import TaskSet
from desktop_app.ui.check_turn import check_turn
from desktop_app.ui.citation_nav import CitationCursor
from desktop_app.ui.export import turn_to_markdown
from desktop_app.ui.first_run import FirstRunPanel
from desktop_app.ui.history_panel import HistoryPanel
from desktop_app.ui.library_model import LibraryModel
from desktop_app.ui.library_pane import LibraryPane
from desktop_app.ui.model_setup import ModelSetup
from desktop_app.ui.pdf_view import PageViewer
from desktop_app.ui.progress import IndexProgressWidget, summary_text
from desktop_app.ui.settings_dialog import SettingsDialog
from desktop_app.ui.theme import icon
from desktop_app.ui.watcher import FolderWatcher
from desktop_app.ui.window_actions import build_actions, set_focus_order
from desktop_app.ui.window_parts import FolderDropMixin

logger = logging.getLogger(__name__)

DEFAULT_SIZE = QSize(1400, 900)
STOP_GRACE_S = 3.0  # after cancel(), how long the facade gets before the task is cancelled


def window_settings() -> QSettings:
    """Window geometry lives next to settings.toml (under FOLIO_HOME when set)."""
    return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)


class MainWindow(FolderDropMixin, QMainWindow):
    closed = Signal()
    settings_saved = Signal(object)  # the new Settings, after the dialog saved them

    def __init__(self, kb: KnowledgeBaseAPI, parent: QWidget | None = None, remember_layout: bool = True) -> None:
        """``remember_layout=False`` (screenshots) starts at the default size and saves nothing."""
        super().__init__(parent)
        self.kb = kb
        self.remember_layout = remember_layout
        self.folder = ""
        self.passwords: dict[str, str] = {}
        self.index_task: asyncio.Task[IndexSummary | None] | None = None
        self.ask_task: asyncio.Task[AnswerTurn] | None = None
        self.tasks = TaskSet()
        self.last_summary: IndexSummary | None = None
        self.setWindowTitle("Folio")
        self.setWindowIcon(icon("folio"))
        self.setAcceptDrops(True)
        self.library = LibraryModel(self)
        self.library_pane = LibraryPane(self.library, self)
        self.library_view = self.library_pane.view
        self.library_pane.document_activated.connect(self._on_library_activated)
        self.library_pane.ask_within.connect(self.ask_within)
        self.library_pane.hide_folder.connect(self.hide_folder)
        self.conversation = ConversationPane(self)
        self.viewer = PageViewer(self)
        self.first_run = FirstRunPanel(self)
        self.setup = ModelSetup(self, self, self.first_run)
        self.kb_factory: Callable[[], KnowledgeBaseAPI] | None = None  # rebuilds the facade
        self.citations = CitationCursor()
        middle = QWidget(self)
        column = QVBoxLayout(middle)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.first_run)
        column.addWidget(self.conversation, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        for pane in (self.library_pane, middle, self.viewer):
            self.splitter.addWidget(pane)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setStretchFactor(2, 4)
        self.setCentralWidget(self.splitter)
        self.history = HistoryPanel(lambda: self.kb, self)
        self.history_dock = QDockWidget("History", self)
        self.history_dock.setObjectName("history-dock")
        self.history_dock.setWidget(self.history)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.history_dock)
        self.history_dock.hide()
        self.history_dock.visibilityChanged.connect(self._on_history_visible)
        self.history.reopened.connect(self._on_reopened)
        self.progress = IndexProgressWidget(self)
        self.status_label = QLabel(self)
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.commands = build_actions(self)
        set_focus_order(self)
        self.conversation.ask_requested.connect(self.ask)
        self.conversation.stop_requested.connect(self.stop)
        self.conversation.citation_clicked.connect(self._on_citation_clicked)
        self.conversation.source_clicked.connect(self._on_citation_clicked)
        self.conversation.suggestion_clicked.connect(self._on_suggestion_clicked)
        self.progress.cancel_requested.connect(self.stop)
        self.watcher = FolderWatcher(self.reindex, lambda: self.index_task is not None and not self.index_task.done(), self)
        self.closed.connect(self.watcher.stop)
        self._restore_layout()
        self.update_actions()

    # ------------------------------------------------------------------ building

    def update_actions(self) -> None:
        indexing = self.index_task is not None and not self.index_task.done()
        asking = self.ask_task is not None and not self.ask_task.done()
        self.commands.reindex_action.setEnabled(bool(self.folder) and not indexing)
        self.commands.stop_action.setEnabled(indexing or asking)
        self.commands.ask_action.setEnabled(not asking)
        self.commands.export_action.setEnabled(self._exportable_turn() is not None)
        self.conversation.set_busy(asking)

    # ------------------------------------------------------------------ layout memory

    def _restore_layout(self) -> None:
        settings = window_settings()
        geometry = settings.value("geometry") if self.remember_layout else None
        if not (isinstance(geometry, QByteArray) and self.restoreGeometry(geometry)):
            self.resize(DEFAULT_SIZE)
        splitter = settings.value("splitter") if self.remember_layout else None
        if not (isinstance(splitter, QByteArray) and self.splitter.restoreState(splitter)):
            width = self.width()
            self.splitter.setSizes([int(width * 0.24), int(width * 0.38), int(width * 0.38)])
        if self.remember_layout:
            self.library_pane.set_sort(str(settings.value("library/sort", "Name")))
            folders = settings.value("library/folders", [])
            folders = [folders] if isinstance(folders, str) else list(folders or [])
            if folders:
                self.tasks.spawn(self._list_folders([str(f) for f in folders]), "remembered folders")

    def save_layout(self) -> None:
        if not self.remember_layout:
            return
        settings = window_settings()
        settings.setValue("geometry", self.saveGeometry())
        settings.setValue("splitter", self.splitter.saveState())
        settings.setValue("library/sort", self.library_pane.sort_name())
        settings.setValue("library/folders", self.library.folders())
        settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        self.save_layout()
        if self._busy():
            self.kb.cancel()
        self.setup.cancel()
        self.tasks.cancel_all()
        self.history.tasks.cancel_all()
        for task in (self.index_task, self.ask_task):
            if task is not None and not task.done():
                task.cancel()
        event.accept()
        self.closed.emit()

    # ------------------------------------------------------------------ indexing

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
                self.library.set_documents(await self.kb.documents(folder))
            except KnownError as error:
                logger.info("no earlier index for %s: %s", folder, error)
            async for event in self.kb.index(folder, passwords=passwords):
                self.library.apply(event)
                if isinstance(event, IndexProgress):
                    self.progress.update_progress(event)
                elif isinstance(event, FileIndexed) and event.status is DocStatus.NEEDS_PASSWORD:
                    self.passwords.pop(str(Path(event.path)), None)
                elif isinstance(event, IndexSummary):
                    summary = event
            self.library.set_documents(await self.kb.documents(folder))
        except KnownError as error:
            self.show_status(f"Indexing failed: {error}")
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

    def _on_library_activated(self, path: str) -> None:
        row = self.library.row(path)
        if row is None:
            return
        if row.status is DocStatus.NEEDS_PASSWORD:
            self.ask_password(row.path)
        else:
            self.viewer.open_document(row.path)

    async def _list_folders(self, folders: list[str]) -> None:
        """List the folders opened in earlier sessions (what the library holds of them)."""
        for folder in folders:
            self.library.add_folder(folder)
            try:
                self.library.set_documents(await self.kb.documents(folder))
            except KnownError as error:
                logger.info("cannot list %s: %s", folder, error)

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

    # ------------------------------------------------------------------ answering

    def ask_from_box(self) -> asyncio.Task[AnswerTurn] | None:
        """Edit ▸ Ask (Ctrl+Enter): ask what the question box holds."""
        question = self.conversation.question.toPlainText().strip()
        if not question:
            self.conversation.question.setFocus()
            self.show_status("Type a question first.")
            return None
        return self.ask(question)

    def ask(self, question: str) -> asyncio.Task[AnswerTurn] | None:
        if self.ask_task is not None and not self.ask_task.done():
            self.show_status("An answer is still running: stop it first (Esc).")
            return None
        scope = self.conversation.scope
        turn = self.conversation.start_turn(question, scope, self.conversation.scope_label)
        self.ask_task = asyncio.ensure_future(self._ask(question, turn, scope))
        self.ask_task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return self.ask_task

    async def _ask(self, question: str, turn: AnswerTurn, scope: tuple[str, ...] = ()) -> AnswerTurn:
        try:
            async for event in self.kb.ask(question, scope=scope):
                self.conversation.apply(event)
        except KnownError as error:
            self.conversation.apply(AnswerFailed(str(error), known=True))
        except asyncio.CancelledError:
            self.conversation.end_turn()
            raise
        except Exception as error:  # a bug
            logger.exception("answering %r failed", question)
            self.conversation.apply(AnswerFailed(f"{type(error).__name__}: {error}", known=False))
        self.conversation.end_turn()
        if self.history_dock.isVisible():
            self.history.refresh()
        return turn

    # ------------------------------------------------------------------ checking a text

    def check_text(self) -> check_dialog.CheckTextDialog:
        """File ▸ Check a Text…: paste or open a text; its sentences are checked."""
        return check_dialog.open_check_dialog(self, self.check_text_content)

    def check_text_content(self, text: str, name: str = "") -> asyncio.Task[AnswerTurn] | None:
        """Check each sentence of ``text`` against the library, shown as a turn whose chips
        open the supporting pages; runs as the answer task (Stop and Esc end it)."""
        if self.ask_task is not None and not self.ask_task.done():
            self.show_status("An answer is still running: stop it first (Esc).")
            return None
        turn = check_turn(name)
        self.conversation.add_turn(turn)
        self.ask_task = asyncio.ensure_future(check_dialog.run_check(self, turn, text, name))
        self.ask_task.add_done_callback(lambda _task: self.update_actions())
        self.update_actions()
        return self.ask_task

    # ------------------------------------------------------------------ history

    def _on_history_visible(self, visible: bool) -> None:
        if visible:
            self.history.refresh()

    def _on_reopened(self, turn: AnswerTurn) -> None:
        if turn.scope and not turn.scope_label:
            rows = [self.library.row(path) for path in turn.scope]
            if len(rows) == 1 and rows[0] is not None:
                turn.scope_label = rows[0].title
        self.conversation.add_turn(turn)
        stale = turn.stale_citations()
        note = f"; {len(stale)} cited source(s) changed or removed since" if stale else ""
        within = f" (asked within {turn.scope_label or ', '.join(Path(p).name for p in turn.scope)})" if turn.scope else ""
        self.show_status(f"Reopened the answer to “{turn.question}”{within}{note}.")

    def stop(self) -> None:
        """Ask the facade to stop; cancel the tasks if it has not within a grace period."""
        if not self._busy():
            return
        self.kb.cancel()
        self.progress.stopping()
        self.show_status("Stopping…")
        QTimer.singleShot(int(STOP_GRACE_S * 1000), self._force_stop)

    def _force_stop(self) -> None:
        for task in (self.index_task, self.ask_task):
            if task is not None and not task.done():
                logger.warning("facade did not stop within %.0f s: cancelling %s", STOP_GRACE_S, task)
                task.cancel()

    async def replace_knowledge_base(self, make: Callable[[], KnowledgeBaseAPI]) -> None:
        """Swap in a facade built with new settings once the running work has ended."""
        running = {t for t in (self.index_task, self.ask_task) if t is not None and not t.done()}
        if running:
            self.show_status("New settings apply once the current work ends…")
            await asyncio.wait(running)
        old, self.kb = self.kb, make()
        await old.close()
        self.show_status("Settings applied.")

    async def rebuild_knowledge_base(self) -> bool:
        """Swap in a facade built from the saved settings (``kb_factory``); False when
        there is no factory (the new settings then apply at the next start) or it fails."""
        if self.kb_factory is None:
            logger.info("no facade factory: the new settings apply at the next start")
            return False
        try:
            await self.replace_knowledge_base(self.kb_factory)
        except KnownError as error:
            self.show_status(f"Settings not applied: {error}")
            self.report(str(error), known=True)
            return False
        return True

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
            async for event in self.kb.reindex():
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

    def _busy(self) -> bool:
        return any(t is not None and not t.done() for t in (self.index_task, self.ask_task))

    # ------------------------------------------------------------------ citations

    def _on_citation_clicked(self, turn_index: int, cid: str) -> None:
        turn = self.conversation.turns[turn_index]
        source = turn.source(cid)
        if source is None:
            self.show_status(f"[{cid}] is not among the sources given to the model.")
            return
        self.citations.clicked(self.conversation.turns, turn_index, cid)  # F8 goes on from here
        self.tasks.spawn(self.show_citation(source, turn.support_spans(cid)), f"cite {cid}")

    def step_citation(self, direction: int) -> SourcePayload | None:
        """F8 / Shift+F8: open the next (+1) or previous (-1) cited passage of the answer."""
        turns = self.conversation.turns
        step = self.citations.step(turns, direction)
        if step is None:
            self.show_status("No answer with citations yet.")
            return None
        turn = turns[step.turn_index]
        self.show_status(step.describe(turn))
        self.tasks.spawn(self.show_citation(step.source, turn.support_spans(step.cid)), f"cite {step.cid}")
        return step.source

    def _on_suggestion_clicked(self, turn_index: int, chunk_id: str) -> None:
        source = self.conversation.turns[turn_index].source_by_chunk(chunk_id)
        if source is not None:
            self.tasks.spawn(self.show_citation(source, []), f"suggest {chunk_id}")

    async def show_citation(self, source: SourcePayload, support: list[tuple[int, int]]) -> bool:
        """Open the cited page now; highlight once the facade confirms the file is unchanged."""
        token = self.viewer.show_source(source, support)
        try:
            state = await self.kb.source_state(source.chunk_id, source.doc_id)
        except KnownError as error:
            logger.info("source state of %s unknown: %s", source.chunk_id, error)
            state = SourceState.REMOVED if not Path(source.doc_path).is_file() else SourceState.CURRENT
        lines: list[OcrLine] = []
        if state is SourceState.CURRENT:
            try:  # a page read by OCR is highlighted from its line boxes
                lines = await self.kb.ocr_lines(source.doc_id, source.page, source.char_start, source.char_end)
            except KnownError as error:
                logger.info("OCR lines of %s unknown: %s", source.chunk_id, error)
        return self.viewer.apply_source_state(token, state, lines)

    # ------------------------------------------------------------------ export, settings, about

    def _exportable_turn(self) -> AnswerTurn | None:
        for turn in reversed(self.conversation.turns):
            if not turn.state.running and (turn.text or turn.no_basis):
                return turn
        return None

    def export_markdown(self, path: str | Path) -> Path:
        turn = self._exportable_turn()
        if turn is None:
            raise KnownError("There is no finished answer to export yet.")
        target = Path(path)
        target.write_text(turn_to_markdown(turn), encoding="utf-8")
        self.show_status(f"Answer exported to {target}")
        return target

    def choose_export(self) -> None:
        turn = self._exportable_turn()
        if turn is not None:
            dialogs.choose_export_file(self, turn.question, self._export_to)

    def _export_to(self, path: str) -> None:
        try:
            self.export_markdown(path)
        except (OSError, KnownError) as error:
            self.report(f"Could not export the answer: {error}", known=True)

    def show_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self)
        dialog.saved.connect(self._settings_saved)
        dialog.open()
        return dialog

    def _settings_saved(self, settings: object, reembed: bool = False) -> None:
        self.show_status("Settings saved.")
        self.settings_saved.emit(settings)
        self.tasks.spawn(self.setup.apply_settings(reembed), "apply settings")

    def show_about(self) -> QMessageBox:
        return dialogs.show_about(self)

    # ------------------------------------------------------------------ messages

    def show_status(self, text: str) -> None:
        self.status_label.setText(text)
        logger.info("status: %s", text)

    def report(self, text: str, known: bool) -> None:
        dialogs.report(self, text, known)
