"""File ▸ Check a Text…: pick a Markdown or text file (or paste), then every sentence is
checked against the library off the GUI thread (``kb.checking.check_text``) and shown in
the answers pane as a turn (check_turn.py) whose chips open the supporting page."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import KnownError
from desktop_app.core.types import AnswerFailed, SentenceCheck
from desktop_app.ui.conversation.answer_turn import AnswerTurn, TurnState
from desktop_app.ui.conversation.check_turn import CheckedTurn

logger = logging.getLogger(__name__)

TEXT_FILES = "Text (*.md *.markdown *.txt);;All files (*)"
FRAME_S = 0.05  # the checked text is re-rendered at most this often while it runs
MAX_BYTES = 2_000_000  # a longer "text" is not a draft to check sentence by sentence


class CheckTextDialog(QDialog):
    """Paste a text or open a .md/.txt file; Check emits ``check_requested(text, name)``."""

    check_requested = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Check a Text")
        self.name = ""
        intro = QLabel(
            "Paste a text, or open a Markdown or text file (an answer exported by Folio, or your "
            "own draft). Each sentence is checked against the library: its best supporting "
            "passage, the page, and a verdict.", self)
        intro.setWordWrap(True)
        self.edit = QPlainTextEdit(self)
        self.edit.setAccessibleName("Text to check")
        self.edit.setPlaceholderText("Paste the text to check here…")
        self.edit.textChanged.connect(self._update)
        self.open_button = QPushButton("&Open File…", self)
        self.open_button.setToolTip("Load a .md or .txt file")
        self.open_button.clicked.connect(self.choose_file)
        self.note = QLabel(self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.check_button = buttons.addButton("&Check", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.open_button)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.resize(640, 420)
        self._update()

    def _update(self) -> None:
        self.check_button.setEnabled(bool(self.edit.toPlainText().strip()))

    def choose_file(self) -> QFileDialog:
        dialog = QFileDialog(self, "Open a text to check", str(Path.home()), TEXT_FILES)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.load_file)
        dialog.open()
        return dialog

    def load_file(self, path: str) -> bool:
        """Put the file's text in the box; False (and a note) if it cannot be read."""
        file = Path(path)
        try:
            if file.stat().st_size > MAX_BYTES:
                raise KnownError(f"{file.name} is larger than {MAX_BYTES // 1_000_000} MB.")
            text = file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError, KnownError) as error:
            words = "is not UTF-8 text" if isinstance(error, UnicodeDecodeError) else str(error)
            self.note.setText(f"Could not open {file.name}: {words}")
            return False
        self.edit.setPlainText(text)
        self.name = file.name
        self.note.setText(f"Loaded {file.name}.")
        return True

    def _check(self) -> None:
        text = self.edit.toPlainText()
        if text.strip():
            self.check_requested.emit(text, self.name or "pasted text")
            self.accept()


def open_check_dialog(parent: QWidget, check: Callable[[str, str], Any]) -> CheckTextDialog:
    dialog = CheckTextDialog(parent)
    dialog.check_requested.connect(check)
    dialog.open()
    return dialog


async def run_check(window: Any, turn: AnswerTurn, text: str, name: str) -> AnswerTurn:
    """Stream the checks of ``text`` into ``turn``, re-rendering the pane as each arrives
    and saying how far it got in the status bar."""
    builder = CheckedTurn(turn)
    pane = window.conversation
    loop = asyncio.get_running_loop()
    shown = 0.0

    def show() -> None:
        nonlocal shown
        builder.rebuild()
        pane.render_now()
        window.show_status(builder.progress())
        shown = loop.time()

    try:
        async for event in window.kb.checking.check_text(text, name):
            builder.apply(event)
            # A long text: rebuilding and rendering it on every sentence would cost
            # the GUI thread time quadratic in its length; at most once a frame.
            if loop.time() - shown >= FRAME_S or not isinstance(event, SentenceCheck):
                show()
    except KnownError as error:
        turn.apply(AnswerFailed(str(error), known=True))
        window.show_status(f"Checking failed: {error}")
    except asyncio.CancelledError:
        builder.rebuild()  # what was checked stays shown
        turn.state = TurnState.CANCELLED
        window.show_status("Checking stopped.")
        pane.end_turn()
        raise
    except Exception as error:  # a bug: logged with its traceback
        logger.exception("checking %s failed", name)
        turn.apply(AnswerFailed(f"{type(error).__name__}: {error}", known=False))
    else:
        if builder.dirty:
            show()
    if builder.dirty:  # failed midway: what was checked stays shown
        builder.rebuild()
    pane.end_turn()
    return turn
