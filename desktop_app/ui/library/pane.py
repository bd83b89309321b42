"""The library pane: a filter box, a sort choice and the tree of opened folders, where each
document reads as its title over its file name, pages and status.

Right-click a document or folder to ask within it; double-click (or Enter) opens a
document. The pane's width, the sort and the opened folders are remembered by the window.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFontMetrics, QIcon, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui.library.tree_model import (
    DATE_KEY_ROLE,
    DETAIL_ROLE,
    FAILED_ROLE,
    FILTER_ROLE,
    FOLDER_ROLE,
    NAME_KEY_ROLE,
    PATH_ROLE,
    STATUS_KEY_ROLE,
    STATUS_WORDS_ROLE,
    LibraryModel,
)

logger = logging.getLogger(__name__)

SORTS = {"Name": NAME_KEY_ROLE, "Date": DATE_KEY_ROLE, "Status": STATUS_KEY_ROLE}
FAILED_COLOUR = "#c62828"
# What the pane says instead of a blank tree: no folder opened yet, or nothing matches.
EMPTY_HINT = ("No folder opened yet. Open a folder of documents (File ▸ Open Folder…, Ctrl+O) "
              "and Folio indexes it: PDF, scans, Word, OpenDocument, PowerPoint, HTML, EPUB, "
              "Markdown and text files. File ▸ Open Sample Folder shows how it works.")
NO_MATCH_HINT = "No document's title or file name holds every word of the filter."
PADDING = 4


class LibraryFilter(QSortFilterProxyModel):
    """Documents whose title or file name holds every word typed (folders stay while they
    hold a match); folders first, then by the chosen key (dates newest first)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setDynamicSortFilter(True)
        self.sort_role = NAME_KEY_ROLE
        self._words: list[str] = []

    def set_text(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt 6.10+ (invalidateFilter is deprecated)
            self.beginFilterChange()
            self._words = text.casefold().split()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # pragma: no cover - older Qt
            self._words = text.casefold().split()
            self.invalidateFilter()

    def set_sort(self, role: int) -> None:
        self.sort_role = role
        self.invalidate()
        self.sort(0, Qt.SortOrder.AscendingOrder)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802 (Qt override)
        if not self._words:
            return True
        index = self.sourceModel().index(row, 0, parent)
        haystack = str(index.data(FILTER_ROLE) or "")
        return bool(haystack) and all(word in haystack for word in self._words)

    def lessThan(self, left: QModelIndex | QPersistentModelIndex,  # noqa: N802 (Qt override)
                 right: QModelIndex | QPersistentModelIndex) -> bool:
        left_folder, right_folder = bool(left.data(FOLDER_ROLE)), bool(right.data(FOLDER_ROLE))
        if left_folder != right_folder:
            return left_folder
        names = (str(left.data(NAME_KEY_ROLE) or ""), str(right.data(NAME_KEY_ROLE) or ""))
        if self.sort_role == NAME_KEY_ROLE or left_folder:
            return names[0] < names[1]
        a, b = left.data(self.sort_role) or 0, right.data(self.sort_role) or 0
        if a == b:
            return names[0] < names[1]
        return bool(a > b) if self.sort_role == DATE_KEY_ROLE else bool(a < b)


class LibraryDelegate(QStyledItemDelegate):
    """A document as two lines: its title, then its file name, pages and status (muted;
    a status that failed in red). A folder as one line: its name and document count."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802 (Qt override)
        line = option.fontMetrics.lineSpacing()  # type: ignore[attr-defined]
        lines = 1 if index.data(FOLDER_ROLE) else 2
        return QSize(120, lines * line + 2 * PADDING + (lines - 1) * 2)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget  # type: ignore[attr-defined]
        style = widget.style() if widget is not None else None
        title, detail = str(opt.text), str(index.data(DETAIL_ROLE) or "")  # type: ignore[attr-defined]
        icon = QIcon(opt.icon)  # type: ignore[attr-defined]
        opt.text = ""  # type: ignore[attr-defined]
        opt.icon = QIcon()  # type: ignore[attr-defined]
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect: QRect = opt.rect.adjusted(PADDING, PADDING, -PADDING, -PADDING)  # type: ignore[attr-defined]
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        palette: QPalette = opt.palette  # type: ignore[attr-defined]
        text_colour = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        muted = text_colour if selected else palette.color(QPalette.ColorRole.PlaceholderText)
        metrics = opt.fontMetrics  # type: ignore[attr-defined]
        painter.save()
        painter.setFont(opt.font)  # type: ignore[attr-defined]
        if index.data(FOLDER_ROLE):
            icon_size = metrics.height()
            if not icon.isNull():
                icon.paint(painter, QRect(rect.left(), rect.top(), icon_size, icon_size))
            left = rect.left() + icon_size + PADDING
            name = metrics.elidedText(title, Qt.TextElideMode.ElideMiddle, max(0, rect.right() - left))
            painter.setPen(text_colour)
            painter.drawText(QRect(left, rect.top(), rect.right() - left, metrics.height()),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
            used = metrics.horizontalAdvance(name) + PADDING * 2
            painter.setPen(muted)
            painter.drawText(QRect(left + used, rect.top(), max(0, rect.right() - left - used), metrics.height()),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             metrics.elidedText(detail, Qt.TextElideMode.ElideRight, max(0, rect.right() - left - used)))
            painter.restore()
            return
        line = metrics.lineSpacing()
        painter.setPen(text_colour)
        painter.drawText(QRect(rect.left(), rect.top(), rect.width(), line),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         metrics.elidedText(title, Qt.TextElideMode.ElideRight, rect.width()))
        second = QRect(rect.left(), rect.top() + line + 2, rect.width(), line)
        words = str(index.data(STATUS_WORDS_ROLE) or "")
        failed = bool(index.data(FAILED_ROLE))
        if failed and words and detail.endswith(words):
            head = detail[: len(detail) - len(words)]
            room = max(0, rect.width() - metrics.horizontalAdvance(words))
            head = _elide_name(head, metrics, room)
            painter.setPen(muted)
            painter.drawText(second, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, head)
            painter.setPen(text_colour if selected else QColor(FAILED_COLOUR))
            tail = second.adjusted(metrics.horizontalAdvance(head), 0, 0, 0)
            painter.drawText(tail, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, words)
        else:
            painter.setPen(muted)
            painter.drawText(second, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             _elide_name(detail, metrics, rect.width()))
        painter.restore()


def _elide_name(detail: str, metrics: QFontMetrics, width: int) -> str:
    """"file name · 12 pages · indexed" fitted to ``width``: the name shortens in its
    middle first, so its pages and status stay whole."""
    name, sep, rest = detail.partition(" · ")
    tail = sep + rest
    room = width - metrics.horizontalAdvance(tail)
    if room < metrics.horizontalAdvance("w…w"):
        return metrics.elidedText(detail, Qt.TextElideMode.ElideRight, width)
    return metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, room) + tail


class LibraryPane(QWidget):
    """The filter box and sort choice above the library tree."""

    document_activated = Signal(str)  # a document's path: double-click or Enter
    ask_within = Signal(str)  # a document's or folder's path: "Ask about this …"
    hide_folder = Signal(str)  # a top folder's path: "Remove from the list"

    def __init__(self, model: LibraryModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.filter_box = QLineEdit(self)
        self.filter_box.setPlaceholderText("Filter by title or file name")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.setAccessibleName("Filter the library")
        for clear in self.filter_box.findChildren(QToolButton):  # Qt's own, unnamed otherwise
            clear.setAccessibleName("Clear the filter")
        self.sort_box = QComboBox(self)
        self.sort_box.addItems(list(SORTS))
        self.sort_box.setAccessibleName("Sort the library by")
        self.sort_box.setToolTip("Sort by title, by the file's date (newest first), or by status (problems first)")
        self.proxy = LibraryFilter(self)
        self.proxy.setSourceModel(model)
        self.view = QTreeView(self)
        self.view.setModel(self.proxy)
        self.view.setHeaderHidden(True)
        self.view.setIndentation(max(12, self.view.fontMetrics().horizontalAdvance("M")))
        self.view.setItemDelegate(LibraryDelegate(self.view))
        self.view.setAccessibleName("Library")
        self.view.setAccessibleDescription(
            "Opened folders and their documents; right-click one to ask within it, Enter opens a document"
        )
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setUniformRowHeights(False)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.setExpandsOnDoubleClick(True)
        self.view.activated.connect(self._activated)
        self.view.customContextMenuRequested.connect(self._show_menu)
        self.proxy.setSortRole(NAME_KEY_ROLE)
        self.proxy.sort(0, Qt.SortOrder.AscendingOrder)
        self.filter_box.textChanged.connect(self._filter)
        self.sort_box.currentTextChanged.connect(self.set_sort)
        model.rowsInserted.connect(self._expand_new_folders)
        tools = QHBoxLayout()
        tools.setContentsMargins(0, 0, 0, 0)
        tools.addWidget(self.filter_box, 1)
        tools.addWidget(self.sort_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(tools)
        layout.addWidget(self.view, 1)
        self.hint = QLabel(self)  # instead of a blank tree: what to do first, or why it is empty
        self.hint.setWordWrap(True)
        self.hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.hint.setContentsMargins(PADDING, PADDING * 2, PADDING, PADDING)
        self.hint.setAccessibleName("Library hint")
        layout.addWidget(self.hint)
        for signal in (self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.modelReset,
                       self.proxy.layoutChanged):
            signal.connect(self._show_hint)
        self._show_hint()
        self.menu: QMenu | None = None  # the last context menu shown (tests trigger its actions)
        self._expanded_before: set[str] | None = None  # open folders when filtering began

    def _show_hint(self, *_: object) -> None:
        """The hint above the tree while it shows no row: no folder yet, or a filter
        nothing matches."""
        empty = self.proxy.rowCount(QModelIndex()) == 0
        if empty:
            self.hint.setText(NO_MATCH_HINT if self.model.rowCount(QModelIndex()) else EMPTY_HINT)
        self.hint.setVisible(empty)

    # ------------------------------------------------------------------ lookup

    def index_of(self, path: str) -> QModelIndex:
        """The view's index of a document or folder (invalid when filtered out)."""
        return self.proxy.mapFromSource(self.model.index_of(path))

    def visible_paths(self) -> list[str]:
        """The paths shown, top to bottom (expanded folders' contents included)."""
        out: list[str] = []

        def walk(parent: QModelIndex) -> None:
            for row in range(self.proxy.rowCount(parent)):
                index = self.proxy.index(row, 0, parent)
                out.append(str(index.data(PATH_ROLE)))
                if self.view.isExpanded(index):
                    walk(index)

        walk(QModelIndex())
        return out

    # ------------------------------------------------------------------ filter and sort

    def _filter(self, text: str) -> None:
        """Filter; every folder opens to show the matches, and the folders open before the
        filter was typed are the ones open again once it is cleared."""
        filtering = bool(text.strip())
        if filtering and self._expanded_before is None:
            self._expanded_before = {p for p in self._folder_paths() if self.view.isExpanded(self.index_of(p))}
        self.proxy.set_text(text)
        if filtering:
            self.view.expandAll()
        elif self._expanded_before is not None:
            for path in self._folder_paths():
                self.view.setExpanded(self.index_of(path), path in self._expanded_before)
            self._expanded_before = None

    def _folder_paths(self) -> list[str]:
        out: list[str] = []

        def walk(parent: QModelIndex) -> None:
            for row in range(self.model.rowCount(parent)):
                index = self.model.index(row, 0, parent)
                if index.data(FOLDER_ROLE):
                    out.append(str(index.data(PATH_ROLE)))
                    walk(index)

        walk(QModelIndex())
        return out

    def set_sort(self, name: str) -> None:
        role = SORTS.get(name)
        if role is None:
            return
        if self.sort_box.currentText() != name:
            self.sort_box.setCurrentText(name)
        self.proxy.set_sort(role)

    def sort_name(self) -> str:
        return self.sort_box.currentText()

    def _expand_new_folders(self, parent: QModelIndex, first: int, last: int) -> None:
        for row in range(first, last + 1):
            source = self.model.index(row, 0, parent)
            if source.data(FOLDER_ROLE):
                self.view.expand(self.proxy.mapFromSource(source))

    # ------------------------------------------------------------------ actions

    def _activated(self, index: QModelIndex) -> None:
        if not index.data(FOLDER_ROLE):
            self.document_activated.emit(str(index.data(PATH_ROLE)))

    def menu_for(self, index: QModelIndex) -> QMenu | None:
        """The context menu of a row: ask within it; open a document; remove a top folder."""
        if not index.isValid():
            return None
        path = str(index.data(PATH_ROLE))
        folder = bool(index.data(FOLDER_ROLE))
        menu = QMenu(self)
        ask = menu.addAction("Ask about this folder" if folder else "Ask about this document")
        ask.triggered.connect(lambda: self.ask_within.emit(path))
        if not folder:
            open_action = menu.addAction("Open")
            open_action.triggered.connect(lambda: self.document_activated.emit(path))
        elif not index.parent().isValid():
            hide = menu.addAction("Remove from the list")
            hide.setToolTip("The folder stays in the library; open it again to list it")
            hide.triggered.connect(lambda: self.hide_folder.emit(path))
        self.menu = menu
        return menu

    def _show_menu(self, position: QPoint) -> None:
        index = self.view.indexAt(position)
        if not index.isValid():  # the Menu key or Shift+F10: the selected row
            index = self.view.currentIndex()
            position = self.view.visualRect(index).center()
        menu = self.menu_for(index)
        if menu is not None:
            menu.popup(self.view.viewport().mapToGlobal(position))  # not exec(): never blocks
