"""Find in page: a small bar above the page viewer that searches the open document.

QtPdf's ``QPdfSearchModel`` searches page by page on a timer (results arrive while the
user reads); ``QPdfView`` paints every hit on the shown page and marks the current one.
Enter / F3 go to the next hit, Shift+Enter / Shift+F3 to the previous one, Esc closes the
bar. The view does not move by itself, so each step jumps to the hit's page and place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtPdf import QPdfSearchModel
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from desktop_app.ui.qt.theme import tool_button

logger = logging.getLogger(__name__)

TYPING_PAUSE_MS = 250  # search once the user pauses typing


class FindEdit(QLineEdit):
    """Keeps Enter and Esc for itself, even when a window action has them as shortcuts."""

    step = Signal(int)  # +1 next hit, -1 previous hit
    dismissed = Signal()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Escape, Qt.Key.Key_Return, Qt.Key.Key_Enter):
                event.accept()
                return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.step.emit(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)
            event.accept()
        elif key == Qt.Key.Key_Escape:
            self.dismissed.emit()
            event.accept()
        else:
            super().keyPressEvent(event)


class FindBar(QWidget):
    """``current`` is the 0-based index of the hit shown (-1: none yet)."""

    moved = Signal(int)  # the hit now shown

    def __init__(self, view: QPdfView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.model = QPdfSearchModel(self)
        self.model.setDocument(view.document())
        view.setSearchModel(self.model)
        self.current = -1
        self.edit = FindEdit(self)
        self.edit.setPlaceholderText("Find in this document")
        self.edit.setAccessibleName("Find in document")
        self.edit.setAccessibleDescription("Enter: next match, Shift+Enter: previous match, Esc: close")
        self.edit.setClearButtonEnabled(True)
        for clear in self.edit.findChildren(QToolButton):  # Qt's own, unnamed otherwise
            clear.setAccessibleName("Clear the search")
        self.edit.textChanged.connect(self._schedule)
        self.edit.step.connect(self.step)
        self.edit.dismissed.connect(self.close_bar)
        self.count_label = QLabel("", self)
        self.count_label.setMinimumWidth(self.fontMetrics().horizontalAdvance("999 of 999"))
        self.previous_button = self._button("prev", "Previous match (Shift+F3)", lambda: self.step(-1))
        self.next_button = self._button("next", "Next match (F3)", lambda: self.step(1))
        self.close_button = self._button("", "Close the find bar (Esc)", self.close_bar)
        self.close_button.setText("✕")
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        row.addWidget(self.edit, 1)
        row.addWidget(self.count_label)
        for button in (self.previous_button, self.next_button, self.close_button):
            row.addWidget(button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.search_now)
        self.model.countChanged.connect(self._on_count_changed)
        self.model.statusChanged.connect(self._show_count)
        view.document().statusChanged.connect(self._on_document_changed)
        self.hide()

    def _button(self, name: str, tip: str, slot: Callable[[], None]) -> QToolButton:
        return tool_button(self, name, tip, slot)

    # ------------------------------------------------------------------ opening

    def open_bar(self) -> None:
        """Show the bar with the field focused and its text selected (Ctrl+F)."""
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()

    def close_bar(self) -> None:
        self._timer.stop()
        self.model.setSearchString("")
        self.current = -1
        self.view.setCurrentSearchResultIndex(-1)
        self.hide()
        self.view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_document_changed(self, *_: object) -> None:
        # The same QPdfDocument is reloaded with another file: search it afresh.
        self.current = -1
        if self.isVisible() and self.edit.text():
            self._schedule()

    # ------------------------------------------------------------------ searching

    def find(self, text: str) -> None:
        """Search for ``text`` now (what typing does after a pause)."""
        self.edit.setText(text)
        self.search_now()

    def _schedule(self, *_: object) -> None:
        self._timer.start()

    def search_now(self) -> None:
        self._timer.stop()
        self.current = -1
        self.view.setCurrentSearchResultIndex(-1)
        self.model.setSearchString(self.edit.text().strip())
        self._show_count()

    def count(self) -> int:
        return int(self.model.count())

    def step(self, direction: int) -> None:
        """Show the next (+1) or previous (-1) hit, wrapping around the document."""
        if self._timer.isActive():
            self.search_now()
        total = self.count()
        if total == 0:
            self._show_count()
            return
        if self.current < 0:
            self.current = self._first_from_page() if direction > 0 else self._first_from_page() - 1
        else:
            self.current += direction
        self.go_to(self.current % total)

    def find_step(self, direction: int) -> None:
        """F3 / Shift+F3: the next or previous match; opens the bar if there is no search."""
        if not self.isVisible() or not self.edit.text().strip():
            self.open_bar()
        else:
            self.step(direction)

    def _first_from_page(self) -> int:
        """The first hit on or after the page shown (so F3 starts where the reader is)."""
        page = self.view.pageNavigator().currentPage()
        for index in range(self.count()):
            if self.model.resultAtIndex(index).page() >= page:
                return index
        return 0

    def go_to(self, index: int) -> None:
        link = self.model.resultAtIndex(index)
        if not link.isValid():
            return
        self.current = index
        self.view.setCurrentSearchResultIndex(index)
        self.view.pageNavigator().jump(link.page(), link.location(), self.view.zoomFactor())
        self._show_count()
        self.moved.emit(index)

    def _on_count_changed(self) -> None:
        # The first hits arrive while the search goes on: show the first one at once.
        if self.current < 0 and self.count() > 0 and self.isVisible():
            self.go_to(self._first_from_page())
        self._show_count()

    def _show_count(self, *_: object) -> None:
        text = self.edit.text().strip()
        total = self.count()
        if not text:
            words = ""
        elif total == 0:
            searching = self.model.status() == QPdfSearchModel.Status.Searching
            words = "Searching…" if searching else "No matches"
        elif self.current >= 0:
            words = f"{self.current % total + 1} of {total}"
        else:
            words = f"{total} matches"
        self.count_label.setText(words)
        self.count_label.setAccessibleName(words or "No search")
