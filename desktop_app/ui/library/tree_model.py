"""The library pane's model: a tree of the opened folders (each a top node), their
subfolders and documents, fed from ``documents()`` and from the index events as they arrive.

A document shows its title, and under it its file name, pages and status in words; the
tooltip has the full title and path. The pane (library_pane.py) filters and sorts it
through a proxy, by the roles below.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QApplication, QStyle

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
    DocStatus.DRM_PROTECTED: "DRM-protected",
    DocStatus.REMOVED: "removed",
}

_EXPLAIN = {
    DocStatus.INDEXED_PARTIALLY: "Some pages could not be read and are not searchable.",
    DocStatus.NEEDS_PASSWORD: "Encrypted. Double-click to give the password and index it.",
    DocStatus.NO_TEXT_LAYER: "Scanned images without text that OCR could read (or OCR is off in Settings).",
    DocStatus.GARBLED_TEXT: "The text layer is not readable language (broken font encoding).",
    DocStatus.UNREADABLE: "The file is damaged, or not what its name says it is.",
    DocStatus.TIMED_OUT: "Parsing took too long and was stopped.",
    DocStatus.DRM_PROTECTED: "The EPUB's text is encrypted (DRM): Folio cannot read it.",
    DocStatus.REMOVED: "The file is gone from the folder.",
}

PATH_ROLE = Qt.ItemDataRole.UserRole  # the document's or folder's path
DETAIL_ROLE = Qt.ItemDataRole.UserRole + 1  # the second line: "file.pdf · 12 pages · indexed"
FOLDER_ROLE = Qt.ItemDataRole.UserRole + 2  # True for a folder
FAILED_ROLE = Qt.ItemDataRole.UserRole + 3  # True when the document could not be indexed
FILTER_ROLE = Qt.ItemDataRole.UserRole + 4  # what the filter box matches: title and file name
NAME_KEY_ROLE = Qt.ItemDataRole.UserRole + 5
DATE_KEY_ROLE = Qt.ItemDataRole.UserRole + 6  # the file's modification time
STATUS_KEY_ROLE = Qt.ItemDataRole.UserRole + 7  # problems first, then work under way, then done
STATUS_WORDS_ROLE = Qt.ItemDataRole.UserRole + 8

_STATUS_ORDER = {
    DocStatus.NEEDS_PASSWORD: 0, DocStatus.UNREADABLE: 0, DocStatus.GARBLED_TEXT: 0,
    DocStatus.NO_TEXT_LAYER: 0, DocStatus.TIMED_OUT: 0, DocStatus.DRM_PROTECTED: 0,
    DocStatus.INDEXED_PARTIALLY: 1,
    DocStatus.REMOVED: 3, DocStatus.INDEXED: 4,
}


def status_words(status: DocStatus | None, unchanged: bool = False, ocr_pages: int = 0) -> str:
    if status is None:
        return WAITING
    if unchanged and status.searchable:
        return "unchanged"
    words = _WORDS.get(status, str(status))
    if ocr_pages and status.searchable:
        words += f", {ocr_pages} page{'s' if ocr_pages != 1 else ''} by OCR"
    return words


@dataclass(frozen=True)
class LibraryRow:
    path: str
    title: str
    pages: int = 0
    status: DocStatus | None = None
    words: str = WAITING
    error: str = ""
    bad_pages: tuple[int, ...] = ()
    mtime: float = 0.0  # the file's modification time when the library last saw it
    ocr_pages: int = 0  # pages whose text OCR read

    @property
    def failed(self) -> bool:
        return self.status is not None and not self.status.searchable

    @property
    def name(self) -> str:
        return Path(self.path).name

    def detail(self) -> str:
        """The second line: file name, pages and status."""
        parts = [self.name]
        if self.pages:
            suffix = Path(self.path).suffix.lower()
            unit = "page" if suffix == ".pdf" else "slide" if suffix == ".pptx" else "section"
            parts.append(f"{self.pages} {unit}{'s' if self.pages != 1 else ''}")
        parts.append(self.words)
        return " · ".join(parts)


class _Node:
    """A folder (``row`` None) or a document in the tree."""

    __slots__ = ("path", "parent", "children", "row", "position", "documents")

    def __init__(self, path: str, parent: _Node | None, position: int, row: LibraryRow | None = None) -> None:
        self.path = path
        self.parent = parent
        self.children: list[_Node] = []
        self.row = row
        self.position = position  # among the parent's children
        self.documents = 0  # documents below a folder

    @property
    def folder(self) -> bool:
        return self.row is None


class LibraryModel(QAbstractItemModel):
    """Opened folders as top nodes, subfolders and documents below them (one column)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._root = _Node("", None, 0)
        self._nodes: dict[str, _Node] = {}  # path key -> node (folders and documents)
        self._finished: set[str] = set()

    # ------------------------------------------------------------------ Qt model

    def _node(self, index: QModelIndex | QPersistentModelIndex) -> _Node:
        if not index.isValid():
            return self._root
        node = index.internalPointer()
        assert isinstance(node, _Node)
        return node

    def index(self, row: int, column: int = 0,
              parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        node = self._node(parent)
        if column != 0 or not 0 <= row < len(node.children):
            return QModelIndex()
        return self.createIndex(row, 0, node.children[row])

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        up = self._node(index).parent
        if up is None or up is self._root:
            return QModelIndex()
        return self.createIndex(up.position, 0, up)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 1

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: ANN201
        if not index.isValid():
            return None
        node = self._node(index)
        if node.row is None:
            return self._folder_data(node, role)
        row = node.row
        if role in (Qt.ItemDataRole.DisplayRole, NAME_KEY_ROLE):
            return row.title if role == Qt.ItemDataRole.DisplayRole else row.title.casefold()
        if role in (DETAIL_ROLE, Qt.ItemDataRole.AccessibleDescriptionRole):
            return row.detail()
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row)
        if role == PATH_ROLE:
            return row.path
        if role == FOLDER_ROLE:
            return False
        if role == FAILED_ROLE:
            return row.failed
        if role == STATUS_WORDS_ROLE:
            return row.words
        if role == FILTER_ROLE:
            return f"{row.title} {row.name}".casefold()
        if role == DATE_KEY_ROLE:
            return row.mtime
        if role == STATUS_KEY_ROLE:
            if row.words in (INDEXING, WAITING, STOPPED, "not indexed"):
                return 2
            return _STATUS_ORDER.get(row.status, 4) if row.status is not None else 2
        return None

    def _folder_data(self, node: _Node, role: int):  # noqa: ANN202
        name = Path(node.path).name or node.path
        if role in (Qt.ItemDataRole.DisplayRole, NAME_KEY_ROLE):
            return name if role == Qt.ItemDataRole.DisplayRole else name.casefold()
        count = f"{node.documents} document{'s' if node.documents != 1 else ''}"
        if role in (DETAIL_ROLE, Qt.ItemDataRole.AccessibleDescriptionRole):
            return count
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{node.path}\n{count}"
        if role == PATH_ROLE:
            return node.path
        if role == Qt.ItemDataRole.DecorationRole:
            return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_DirIcon)
        if role == FOLDER_ROLE:
            return True
        if role == FAILED_ROLE:
            return False
        if role == FILTER_ROLE:
            return ""
        if role in (DATE_KEY_ROLE, STATUS_KEY_ROLE):
            return 0
        return None

    @staticmethod
    def _tooltip(row: LibraryRow) -> str:
        lines = [row.title, row.path, f"Status: {row.words}"]
        if row.status in _EXPLAIN:
            lines.append(_EXPLAIN[row.status])  # type: ignore[index]
        if row.error:
            lines.append(row.error)
        if row.bad_pages:
            shown = ", ".join(str(p) for p in row.bad_pages[:20])
            lines.append(f"Unreadable pages: {shown}{'…' if len(row.bad_pages) > 20 else ''}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ reading

    def rows(self) -> list[LibraryRow]:
        """Every document, folder by folder in the order they were added."""
        out: list[LibraryRow] = []
        stack = list(reversed(self._root.children))
        while stack:
            node = stack.pop()
            if node.row is not None:
                out.append(node.row)
            stack.extend(reversed(node.children))
        return out

    def row(self, path: str) -> LibraryRow | None:
        node = self._nodes.get(_key(path))
        return None if node is None else node.row

    def folders(self) -> list[str]:
        """The top folders, in the order they were opened."""
        return [node.path for node in self._root.children]

    def index_of(self, path: str) -> QModelIndex:
        """The model index of a document or folder (invalid when not listed)."""
        node = self._nodes.get(_key(path))
        return QModelIndex() if node is None else self.createIndex(node.position, 0, node)

    # ------------------------------------------------------------------ updates

    def clear(self) -> None:
        self.beginResetModel()
        self._root = _Node("", None, 0)
        self._nodes = {}
        self.endResetModel()

    def add_folder(self, folder: str) -> None:
        """List ``folder`` as a top node (its documents come with ``set_documents``)."""
        key = _key(folder)
        if key in self._nodes and self._nodes[key].parent is self._root:
            return
        if key in self._nodes:  # a subfolder of an opened folder stays where it is
            return
        self._insert(self._root, _Node(key, self._root, len(self._root.children)))

    def remove_folder(self, folder: str) -> bool:
        """Stop listing a top folder and what is under it."""
        node = self._nodes.get(_key(folder))
        if node is None or node.parent is not self._root:
            return False
        self.beginRemoveRows(QModelIndex(), node.position, node.position)
        del self._root.children[node.position]
        for position, sibling in enumerate(self._root.children):
            sibling.position = position
        stack = [node]
        while stack:
            gone = stack.pop()
            self._nodes.pop(_key(gone.path), None)
            stack.extend(gone.children)
        self.endRemoveRows()
        return True

    def set_documents(self, documents: list[DocumentInfo]) -> None:
        """Merge the facade's view of the library (titles, pages, final status)."""
        for info in documents:
            self._upsert(
                LibraryRow(
                    path=info.path,
                    title=info.title or Path(info.path).stem,
                    pages=info.pages,
                    status=info.status,
                    words=status_words(info.status, ocr_pages=info.ocr_pages),
                    error=info.error,
                    bad_pages=tuple(info.bad_pages),
                    mtime=info.mtime,
                    ocr_pages=info.ocr_pages,
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
            for row in self._indexing():
                if _key(row.path) != key:
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
                words=status_words(event.status, event.unchanged, event.ocr_pages),
                error=event.error,
                bad_pages=tuple(event.bad_pages),
                ocr_pages=event.ocr_pages,
            )
        elif isinstance(event, IndexSummary):
            for row in self._indexing():
                self._upsert(row, words=self._settled_words(row, event.cancelled))
            for path in event.removed:
                current = self.row(path)
                if current is not None:
                    self._upsert(current, status=DocStatus.REMOVED, words=status_words(DocStatus.REMOVED))

    def _indexing(self) -> list[LibraryRow]:
        return [node.row for node in self._nodes.values() if node.row is not None and node.row.words == INDEXING]

    @staticmethod
    def _settled_words(row: LibraryRow, cancelled: bool) -> str:
        if row.status is not None:
            return status_words(row.status, ocr_pages=row.ocr_pages)
        return STOPPED if cancelled else WAITING

    @staticmethod
    def _base(path: str, current: LibraryRow | None) -> LibraryRow:
        return current if current is not None else LibraryRow(path=path, title=Path(path).stem)

    def _upsert(self, row: LibraryRow, **changes: object) -> None:
        row = replace(row, **changes) if changes else row  # type: ignore[arg-type]
        key = _key(row.path)
        node = self._nodes.get(key)
        if node is None:
            parent = self._folder_for(key)
            self._insert(parent, _Node(key, parent, len(parent.children), row))
            return
        if node.row == row:
            return
        node.row = row
        index = self.createIndex(node.position, 0, node)
        self.dataChanged.emit(index, index)

    def _insert(self, parent: _Node, node: _Node) -> None:
        parent_index = QModelIndex() if parent is self._root else self.createIndex(parent.position, 0, parent)
        self.beginInsertRows(parent_index, node.position, node.position)
        parent.children.append(node)
        self._nodes[_key(node.path)] = node
        self.endInsertRows()
        if node.row is not None:
            up: _Node | None = parent
            while up is not None and up is not self._root:
                up.documents += 1
                changed = self.createIndex(up.position, 0, up)
                self.dataChanged.emit(changed, changed)
                up = up.parent

    def _folder_for(self, key: str) -> _Node:
        """The folder node a document at ``key`` goes under, made as needed: below the
        opened folder that holds it, else a top node for its own folder."""
        holders = [n for n in self._root.children if key.startswith(n.path.rstrip(os.sep) + os.sep)]
        if not holders:
            folder = str(Path(key).parent)
            self.add_folder(folder)
            return self._nodes[_key(folder)]
        node = max(holders, key=lambda n: len(n.path))
        for part in Path(key).parent.relative_to(node.path).parts:
            path = _key(str(Path(node.path) / part))
            child = self._nodes.get(path)
            if child is None:
                child = _Node(path, node, len(node.children))
                self._insert(node, child)
            node = child
        return node


def _key(path: str) -> str:
    return str(Path(path))


def top_folders(paths: Iterable[str]) -> list[str]:
    """The folders that hold ``paths`` (files), none listed inside another listed one."""
    tops: list[str] = []
    for folder in sorted({_key(str(Path(p).parent)) for p in paths}, key=len):
        if not any(folder == top or folder.startswith(top.rstrip(os.sep) + os.sep) for top in tops):
            tops.append(folder)
    return sorted(tops)
