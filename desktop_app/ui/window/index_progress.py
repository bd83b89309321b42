"""The indexing progress shown in the status bar: files and pages done, ETA, Cancel."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from desktop_app.core.types import IndexProgress, IndexSummary


def format_duration(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return "estimating…"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def progress_text(event: IndexProgress) -> str:
    if event.files_total == 0 and event.chunks_done:  # re-embedding: passages, not files
        return f"{event.chunks_done:,} passages embedded"
    text = f"{event.files_done}/{event.files_total} files · {event.pages_done} pages"
    if event.files_done < event.files_total:
        text += f" · about {format_duration(event.eta_seconds)} left"
    return text


def summary_text(summary: IndexSummary) -> str:
    if summary.cancelled:
        head = "Indexing stopped"
    else:
        head = f"Indexed {summary.documents} documents, {summary.pages} pages"
    parts = [head]
    if summary.unchanged:
        parts.append(f"{summary.unchanged} unchanged")
    if summary.failed:
        needs_password = sum(1 for f in summary.failed if f.status == "needs_password")
        others = len(summary.failed) - needs_password
        if needs_password:
            parts.append(f"{needs_password} need a password (double-click to give it)")
        if others:
            parts.append(f"{others} could not be indexed (see the library)")
    if summary.removed:
        parts.append(f"{len(summary.removed)} removed")
    return " · ".join(parts) + f" — {format_duration(summary.seconds)}"


class IndexProgressWidget(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.current = QLabel(self)
        self.current.setMaximumWidth(320)
        self.bar = QProgressBar(self)
        self.bar.setMinimumWidth(260)
        self.bar.setTextVisible(True)
        self.bar.setAccessibleName("Indexing progress")
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop indexing; what is done so far stays searchable")
        self.cancel_button.setAccessibleName("Cancel indexing")
        self.cancel_button.clicked.connect(self.cancel_requested)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.current)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        self.hide()

    def start(self, folder: str) -> None:
        self.bar.setRange(0, 0)  # busy until the first progress event names a total
        self.bar.setFormat("Scanning…")
        self.current.setText(Path(folder).name)
        self.cancel_button.setEnabled(True)
        self.show()

    def update_progress(self, event: IndexProgress) -> None:
        if event.files_total > 0:
            self.bar.setRange(0, event.files_total)
            self.bar.setValue(event.files_done)
        self.bar.setFormat(progress_text(event))
        if event.current_file:
            name = Path(event.current_file).name
            self.current.setText(name)
            self.current.setToolTip(event.current_file)

    def stopping(self) -> None:
        self.cancel_button.setEnabled(False)
        self.bar.setFormat("Stopping…")

    def finish(self) -> None:
        self.hide()
