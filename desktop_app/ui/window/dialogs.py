"""The window's small dialogs. All open window-modal with ``open()`` and report through
signals: none runs a nested event loop (``exec``) inside the asyncio loop."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QMessageBox, QWidget

import desktop_app
from desktop_app.ui.qt.theme import icon


def choose_folder(parent: QWidget, start: str, chosen: Callable[[str], None]) -> QFileDialog:
    dialog = QFileDialog(parent, "Open a folder of documents", start or str(Path.home()))
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    dialog.fileSelected.connect(chosen)
    dialog.open()
    return dialog


def choose_export_file(parent: QWidget, question: str, chosen: Callable[[str], None]) -> QFileDialog:
    name = "".join(c if c.isalnum() else "-" for c in question[:40]).strip("-") or "answer"
    dialog = QFileDialog(parent, "Export answer as Markdown", str(Path.home() / f"{name}.md"), "Markdown (*.md)")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setDefaultSuffix("md")
    dialog.fileSelected.connect(chosen)
    dialog.open()
    return dialog


def ask_password(parent: QWidget, path: str, given: Callable[[str], None]) -> QInputDialog:
    dialog = QInputDialog(parent)
    dialog.setWindowTitle("Password needed")
    dialog.setLabelText(f"{Path(path).name} is encrypted.\nEnter its password to index it:")
    dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
    dialog.textValueSelected.connect(given)
    dialog.open()
    return dialog


def show_about(parent: QWidget) -> QMessageBox:
    box = QMessageBox(parent)
    box.setWindowTitle("About Folio")
    box.setIconPixmap(icon("folio").pixmap(64, 64))
    box.setText(
        f"<b>Folio {desktop_app.__version__}</b><br/>An offline reader for your PDFs: ask a "
        "question, get an answer whose citations open the page with the passage highlighted."
        "<br/><br/>Nothing leaves this machine."
    )
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.open()
    return box


def report(parent: QWidget, text: str, known: bool) -> QMessageBox:
    """A failure: the environment's (``known``, with its message) or a bug (see the log)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning if known else QMessageBox.Icon.Critical)
    box.setWindowTitle("Folio")
    box.setText(text if known else f"{text}\n\nThis is a bug; details are in the log.")
    box.open()
    return box
