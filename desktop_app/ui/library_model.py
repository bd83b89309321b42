"""The library pane's model: the open folder's documents, their pages and status in words,
fed from ``documents()`` and from the index events as they arrive."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from desktop_app.core.types import (
    DocStatus,
    DocumentInfo,
    FileIndexed,
    IndexEvent,
    IndexProgress,
    IndexSummary,
)

logger = logging.getLogger(__name__)

INDEXING = "indexing"
WAITING = "waiting"
STOPPED = "stopped"

_WORDS = {
    DocStatus.INDEXED: "indexed",
    DocStatus.INDEXED_PARTIALLY: "partially indexed",
    DocStatus.NEEDS_PASSWORD: "needs password",
    DocStatus.NO_TEXT_LAYER: "no text layer",
    DocStatus.GARBLED_TEXT: "garbled text",
    DocStatus.UNREADABLE: "unreadable",
    DocStatus.TIMED_OUT: "timed out",
    DocStatus.REMOVED: "removed",
}

_EXPLAIN = {
    DocStatus.INDEXED_PARTIALLY: "Some pages could not be read and are not searchable.",
    DocStatus.NEEDS_PASSWORD: "Encrypted. Double-click to give the password and index it.",
    DocStatus.NO_TEXT_LAYER: "Scanned images without text: Folio cannot search it (no OCR yet).",
    DocStatus.GARBLED_TEXT: "The text layer is not readable language (broken font encoding).",
    DocStatus.UNREADABLE: "The file is damaged or not a PDF.",
    DocStatus.TIMED_OUT: "Parsing took too long and was stopped.",
    DocStatus.REMOVED: "The file is gone from the folder.",
}

COLUMNS = ("Title", "Pages", "Status")


def status_words(status: DocStatus | None, unchanged: bool = False) -> str:
    if status is None:
        return WAITING
    if unchanged and status.searchable:
        return "unchanged"
    return _WORDS.get(status, str(status))


@dataclass(frozen=True)
class LibraryRow:
    path: str
    title: str
    pages: int = 0
    status: DocStatus | None = None
    words: str = WAITING
    error: str = ""
    bad_pages: tuple[int, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status is not None and not self.status.searchable


class LibraryModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[LibraryRow] = []
        self._index: dict[str, int] = {}
        self._finished: set[str] = set()

    # ------------------------------------------------------------------ Qt model

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802, ANN201
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: ANN201
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return row.title
            if column == 1:
                return str(row.pages) if row.pages else ""
            return row.words
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row)
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            if row.failed:
                return QColor("#c62828")
            if row.words in (INDEXING, WAITING, STOPPED):
                return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole:
            return row.path
        return None

    @staticmethod
    def _tooltip(row: LibraryRow) -> str:
        lines = [row.path, f"Status: {row.words}"]
        if row.status in _EXPLAIN:
            lines.append(_EXPLAIN[row.status])  # type: ignore[index]
        if row.error:
            lines.append(row.error)
        if row.bad_pages:
            shown = ", ".join(str(p) for p in row.bad_pages[:20])
            lines.append(f"Unreadable pages: {shown}{'…' if len(row.bad_pages) > 20 else ''}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ updates

    def rows(self) -> list[LibraryRow]:
        return list(self._rows)

    def row(self, path: str) -> LibraryRow | None:
        position = self._index.get(_key(path))
        return None if position is None else self._rows[position]

    def row_at(self, position: int) -> LibraryRow | None:
        return self._rows[position] if 0 <= position < len(self._rows) else None

    def clear(self) -> None:
        self.beginResetModel()
        self._rows, self._index = [], {}
        self.endResetModel()

    def set_documents(self, documents: list[DocumentInfo]) -> None:
        """Merge the facade's view of the library (titles, pages, final status)."""
        for info in documents:
            self._upsert(
                LibraryRow(
                    path=info.path,
                    title=info.title or Path(info.path).stem,
                    pages=info.pages,
                    status=info.status,
                    words=status_words(info.status),
                    error=info.error,
                    bad_pages=tuple(info.bad_pages),
                )
            )

    def list_files(self, paths: list[str], words: str = "not indexed") -> None:
        """Show files that are not indexed (yet): title from the name, no status."""
        for path in paths:
            self._upsert(self._base(path, self.row(path)), words=words)

    def begin_run(self) -> None:
        """An index run starts: every file may be reported again."""
        self._finished.clear()

    def apply(self, event: IndexEvent) -> None:
        if isinstance(event, IndexProgress):
            key = _key(event.current_file) if event.current_file else ""
            for row in list(self._rows):
                if row.words == INDEXING and _key(row.path) != key:
                    self._upsert(row, words=self._settled_words(row, cancelled=False))
            if key and key not in self._finished:
                self._upsert(self._base(event.current_file, self.row(event.current_file)), words=INDEXING)
        elif isinstance(event, FileIndexed):
            current = self.row(event.path)
            self._finished.add(_key(event.path))
            self._upsert(
                self._base(event.path, current),
                pages=event.pages or (current.pages if current else 0),
                status=event.status,
                words=status_words(event.status, event.unchanged),
                error=event.error,
                bad_pages=tuple(event.bad_pages),
            )
        elif isinstance(event, IndexSummary):
            for row in list(self._rows):
                if row.words == INDEXING:
                    self._upsert(row, words=self._settled_words(row, event.cancelled))
            for path in event.removed:
                current = self.row(path)
                if current is not None:
                    self._upsert(current, status=DocStatus.REMOVED, words=status_words(DocStatus.REMOVED))

    @staticmethod
    def _settled_words(row: LibraryRow, cancelled: bool) -> str:
        if row.status is not None:
            return status_words(row.status)
        return STOPPED if cancelled else WAITING

    @staticmethod
    def _base(path: str, current: LibraryRow | None) -> LibraryRow:
        return current if current is not None else LibraryRow(path=path, title=Path(path).stem)

    def _upsert(self, row: LibraryRow, **changes: object) -> None:
        row = replace(row, **changes) if changes else row  # type: ignore[arg-type]
        key = _key(row.path)
        position = self._index.get(key)
        if position is None:
            position = len(self._rows)
            self.beginInsertRows(QModelIndex(), position, position)
            self._rows.append(row)
            self._index[key] = position
            self.endInsertRows()
            return
        if self._rows[position] == row:
            return
        self._rows[position] = row
        self.dataChanged.emit(self.index(position, 0), self.index(position, len(COLUMNS) - 1))


def _key(path: str) -> str:
    return str(Path(path))
