"""Pieces of the main window that are only construction: actions, menus and the toolbar;
and opening a folder dropped on the window. (The library pane is library_pane.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QWidget

from desktop_app.ui.qt.theme import icon


def make_action(
    parent: QWidget,
    icon_name: str,
    text: str,
    slot: Callable[..., Any],
    shortcut: str | QKeySequence.StandardKey | None = None,
    tip: str = "",
) -> QAction:
    action = QAction(icon(icon_name), text, parent) if icon_name else QAction(text, parent)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    words = tip or text.replace("&", "").replace("…", "")
    action.setToolTip(words)
    action.setStatusTip(words)
    action.triggered.connect(lambda _checked=False: slot())
    return action


def install_menus(window: QMainWindow, menus: dict[str, list[QAction | None]], toolbar: list[QAction | None]) -> None:
    """Menus by title (None = separator) and one toolbar with text beside the icons."""
    bar = window.menuBar()
    for title, actions in menus.items():
        menu = bar.addMenu(title)
        for action in actions:
            if action is None:
                menu.addSeparator()
            else:
                menu.addAction(action)
    tools = window.addToolBar("Main")
    tools.setObjectName("main-toolbar")
    tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for action in toolbar:
        if action is None:
            tools.addSeparator()
        else:
            tools.addAction(action)


class FolderDropMixin:
    """Drop a folder on the window to open it (needs ``setAcceptDrops(True)`` and an
    ``open_folder(path)`` method on the window)."""

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if dropped_folder(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt override)
        folder = dropped_folder(event)
        if folder is not None:
            event.acceptProposedAction()
            self.open_folder(folder)  # type: ignore[attr-defined]


def dropped_folder(event: QDragEnterEvent | QDropEvent) -> str | None:
    mime = event.mimeData()
    if not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile() and Path(url.toLocalFile()).is_dir():
            return url.toLocalFile()
    return None
