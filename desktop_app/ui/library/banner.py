"""What the window shows when the library file cannot be used: a banner above the
conversation that says why and offers the one way forward.

- damaged, or not a library at all: "Move aside and rebuild" (the facade's ``repair``:
  the file is renamed, never deleted; the index is rebuilt from the folders; the saved
  answers, kept in their own file, stay);
- held by another process (named): "Try again" once it is done;
- a full disk, a folder Folio may not write, a newer Folio: the message and "Try again".

A plain view: the main window (window_library.py) decides what it shows and does the work.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop_app.core.errors import (
    KnownError,
    LibraryBusyError,
    LibraryDamagedError,
    NotALibraryError,
)
from desktop_app.ui.qt.rich_text import esc


class LibraryBanner(QFrame):
    """"This library cannot be read": why, and Move aside and rebuild / Try again."""

    repair_requested = Signal()
    retry_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("library-banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#library-banner { border: 1px solid #c62828; border-radius: 6px; background: palette(alternate-base); }"
        )
        self.setAccessibleName("Library problem")
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.repair_button = QPushButton("Move aside and rebuild", self)
        self.repair_button.setDefault(True)
        self.repair_button.setAccessibleDescription(
            "Rename the library file (it is kept), rebuild the index from your folders; saved answers stay")
        self.retry_button = QPushButton("Try again", self)
        self.repair_button.clicked.connect(self.repair_requested)
        self.retry_button.clicked.connect(self.retry_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.repair_button)
        buttons.addWidget(self.retry_button)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.addWidget(self.title)
        column.addWidget(self.details)
        column.addLayout(buttons)
        self.problem: KnownError | None = None
        self.hide()

    def show_problem(self, problem: KnownError | None) -> None:
        """Show ``problem`` (None: hide the banner)."""
        self.problem = problem
        if problem is None:
            self.hide()
            return
        if isinstance(problem, LibraryDamagedError | NotALibraryError):
            title = "This library cannot be read"
        elif isinstance(problem, LibraryBusyError):
            title = "This library is in use by another program"
        else:
            title = "Folio cannot use this library"
        self.title.setText(f"<b>{esc(title)}</b>")
        if isinstance(problem, LibraryDamagedError | NotALibraryError):
            name = Path(problem.path).name or "the file"
            self.details.setText(f"{problem.message} Move aside and rebuild keeps it as {name}.damaged-<time> "
                                 "(nothing is deleted), rebuilds the index from your folders, and your saved "
                                 "answers stay: they are kept in their own file.")
        else:
            self.details.setText(str(problem))
        self.repair_button.setVisible(isinstance(problem, LibraryDamagedError | NotALibraryError))
        self.repair_button.setEnabled(True)
        self.retry_button.setEnabled(True)
        self.show()

    def set_working(self, text: str) -> None:
        """While the repair runs: say what it does; the buttons wait."""
        self.details.setText(text)
        self.repair_button.setEnabled(False)
        self.retry_button.setEnabled(False)
