"""Folio's main window: library | conversation | page viewer, menus, toolbar, status bar.

Every backend call goes through the async facade (``KnowledgeBaseAPI``) in tasks the
window keeps handles to, so Stop and closing the window can cancel them.

This module builds the window and holds its state, layout memory, Stop, the facade swap
and settings; the library side (folders, indexing, re-embedding) is window_library.py's,
the answer flow (asking, checking a text, citations, export) window_answers.py's, the
actions and menus window_actions.py's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import paths
from desktop_app.core.errors import KnownError
from desktop_app.core.settings import Settings
from desktop_app.core.types import IndexSummary
from desktop_app.services.api import KnowledgeBaseAPI
from desktop_app.ui.conversation.answer_turn import AnswerTurn
from desktop_app.ui.conversation.citation_cursor import CitationCursor
from desktop_app.ui.conversation.history_panel import HistoryPanel
from desktop_app.ui.conversation.pane import ConversationPane
from desktop_app.ui.library.banner import LibraryBanner
from desktop_app.ui.library.pane import LibraryPane
from desktop_app.ui.library.tree_model import LibraryModel
from desktop_app.ui.library.watcher import FolderWatcher
from desktop_app.ui.qt.async_bridge import TaskSet
from desktop_app.ui.qt.theme import icon
from desktop_app.ui.setup.first_run import FirstRunPanel
from desktop_app.ui.setup.model_setup import ModelSetup
from desktop_app.ui.setup.settings_dialog import SettingsDialog
from desktop_app.ui.viewer.page_viewer import PageViewer
from desktop_app.ui.window import dialogs
from desktop_app.ui.window.actions import build_actions, set_focus_order
from desktop_app.ui.window.answer_flow import AnswerMixin
from desktop_app.ui.window.index_progress import IndexProgressWidget
from desktop_app.ui.window.library_flow import LibraryMixin
from desktop_app.ui.window.menus import FolderDropMixin

logger = logging.getLogger(__name__)

DEFAULT_SIZE = QSize(1400, 900)
STOP_GRACE_S = 3.0  # after cancel(), how long the facade gets before the task is cancelled


def window_settings() -> QSettings:
    """Window geometry lives next to settings.toml (under FOLIO_HOME when set)."""
    return QSettings(str(paths.config_dir() / "window.ini"), QSettings.Format.IniFormat)


class MainWindow(FolderDropMixin, LibraryMixin, AnswerMixin, QMainWindow):
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
        self.asking_turn: AnswerTurn | None = None
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
        self.viewer.part_source = lambda document, page: self.kb.library.document_part(document, page)
        self.first_run = FirstRunPanel(self)
        self.library_banner = LibraryBanner(self)
        self.library_banner.repair_requested.connect(self.repair_library)
        self.library_banner.retry_requested.connect(self.check_library)
        self.setup = ModelSetup(self, self, self.first_run)
        self.kb_factory: Callable[[], KnowledgeBaseAPI] | None = None  # rebuilds the facade
        self.quote_only = self.setup.settings().quote_only  # find the passage only: no model
        self.citations = CitationCursor()
        middle = QWidget(self)
        column = QVBoxLayout(middle)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.library_banner)
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
        self.conversation.new_conversation_requested.connect(self.new_conversation)
        self.conversation.searched_editor.research_requested.connect(self.search_again)
        self.conversation.stop_requested.connect(self.stop)
        self.conversation.citation_clicked.connect(self._on_citation_clicked)
        self.conversation.quote_clicked.connect(self._on_quote_clicked)
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
        # While only the model's checks of a written answer run, the next question may come.
        can_ask = not asking or self.only_checking()
        self.commands.reindex_action.setEnabled(bool(self.folder) and not indexing)
        self.commands.stop_action.setEnabled(indexing or asking)
        self.commands.ask_action.setEnabled(can_ask)
        self.commands.export_action.setEnabled(self._exportable_turn() is not None)
        self.conversation.set_busy(asking, can_ask=can_ask)

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
        folders: list[object] = []
        if self.remember_layout:
            self.library_pane.set_sort(str(settings.value("library/sort", "Name")))
            saved = settings.value("library/folders", [])
            folders = [saved] if isinstance(saved, str) else list(saved or [])
        self.tasks.spawn(self._list_folders([str(f) for f in folders]), "the library's folders")

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

    # ------------------------------------------------------------------ stopping, the facade

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
        self.watch_answer_model(then="Settings applied.")

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

    def _busy(self) -> bool:
        return any(t is not None and not t.done() for t in (self.index_task, self.ask_task))

    # ------------------------------------------------------------------ settings, about

    def show_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self)
        dialog.saved.connect(self._settings_saved)
        dialog.open()
        return dialog

    def _settings_saved(self, settings: object, reembed: bool = False) -> None:
        self.show_status("Settings saved.")
        if isinstance(settings, Settings):
            self.quote_only = settings.quote_only
        self.settings_saved.emit(settings)
        self.tasks.spawn(self.setup.apply_settings(reembed), "apply settings")

    def show_about(self) -> QMessageBox:
        return dialogs.show_about(self)

    # ------------------------------------------------------------------ messages

    def watch_answer_model(self, then: str = "") -> None:
        """Say in the status bar when the answer model is loaded and its prompt head read
        (the facade starts both when the window opens), so the first question is quick;
        ``then`` is what the status bar says once it is (after new settings: that they apply)."""
        kb = self.kb
        self.show_status(f"{then} Loading the answer model…".strip())

        async def wait() -> None:
            try:
                cached = await kb.models.answer_model_ready()
            except Exception:  # reported when the first question is asked
                logger.exception("the answer model did not get ready")
                return
            if kb is self.kb and self.status_label.text().endswith("Loading the answer model…"):
                self.show_status(f"{then} Answer model ready.".strip() if cached else then)

        self.tasks.spawn(wait(), "answer-model-ready")

    def show_status(self, text: str) -> None:
        self.status_label.setText(text)
        logger.info("status: %s", text)

    def report(self, text: str, known: bool) -> None:
        dialogs.report(self, text, known)
