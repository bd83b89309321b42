"""The document view: a part of a reflowable document (HTML, EPUB, DOCX, ODT, PPTX,
Markdown, text) rendered readably, the cited characters highlighted and scrolled into view.

The part's blocks are written into a ``QTextDocument`` with a cursor (headings, paragraphs,
lists, tables, code), and each block's (or table cell's) position in the document is
recorded as it is written, so that a character offset of the part's text (a citation's
span) maps exactly onto the document: the highlight is an ``ExtraSelection`` over those
characters. One part is shown at a time (a long document opens as fast as a short one);
the previous and next parts are a click away.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from PySide6.QtGui import (
    QColor,
    QFont,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrameFormat,
    QTextListFormat,
    QTextTableFormat,
)
from PySide6.QtWidgets import QTextBrowser, QTextEdit, QWidget

from desktop_app.core.types import TABLE_CELL_SEPARATOR, BlockKind, DocumentPart, Span, TextBlock

PASSAGE_COLOUR = QColor(255, 214, 0, 110)
SUPPORT_COLOUR = QColor(255, 150, 0, 150)
FIND_COLOUR = QColor(80, 160, 255, 110)
_HEADING_SIZES = {1: 1.6, 2: 1.35, 3: 1.2, 4: 1.1, 5: 1.0, 6: 1.0}


@dataclass(frozen=True)
class _Piece:
    """Characters ``start:end`` of the part's text sit at ``position`` in the document."""

    start: int
    end: int
    position: int


class PartRenderer:
    """Writes a part into a QTextDocument and maps its text offsets to positions."""

    def __init__(self, document: QTextDocument, base_size: float) -> None:
        self.document = document
        self.base_size = base_size
        self.pieces: list[_Piece] = []

    def render(self, part: DocumentPart) -> None:
        self.document.clear()
        self.pieces = []
        cursor = QTextCursor(self.document)
        fresh = True  # the cursor sits in an empty block that the next block may take
        blocks = part.blocks
        index = 0
        while index < len(blocks):
            block = blocks[index]
            if block.kind is BlockKind.TABLE_ROW:
                rows = []
                while index < len(blocks) and blocks[index].kind is BlockKind.TABLE_ROW:
                    rows.append(blocks[index])
                    index += 1
                if not fresh:
                    cursor.insertBlock()
                    self._block(cursor, BlockKind.PARAGRAPH, 0, "")
                self._table(cursor, part.text, rows)
                fresh = True
                continue
            if not fresh:
                cursor.insertBlock()
            fresh = False
            text = part.text[block.char_start:block.char_end]
            self._block(cursor, block.kind, block.level, text)
            self._insert(cursor, text, block.char_start, self._char_format(block.kind, block.level))
            index += 1

    def _char_format(self, kind: BlockKind, level: int) -> QTextCharFormat:
        fmt = QTextCharFormat()
        if kind is BlockKind.HEADING:
            fmt.setFontWeight(QFont.Weight.Bold)
            fmt.setFontPointSize(self.base_size * _HEADING_SIZES.get(level, 1.0))
        elif kind is BlockKind.CODE:
            fmt.setFontFamilies(["monospace"])
            fmt.setFontFixedPitch(True)
            fmt.setFontPointSize(self.base_size * 0.9)
        else:
            fmt.setFontPointSize(self.base_size)
        return fmt

    def _block(self, cursor: QTextCursor, kind: BlockKind, level: int, text: str) -> None:
        current = cursor.currentList()
        if current is not None:  # a new block stays in the list above it unless taken out
            current.remove(cursor.block())
        fmt = QTextBlockFormat()
        fmt.setIndent(0)
        fmt.setBottomMargin(6)
        if kind is BlockKind.HEADING:
            fmt.setTopMargin(10)
            fmt.setHeadingLevel(level)
        elif kind is BlockKind.CODE:
            fmt.setBackground(QColor(240, 240, 240))
            fmt.setNonBreakableLines(True)
        cursor.setBlockFormat(fmt)
        if kind is BlockKind.LIST_ITEM:
            style = QTextListFormat()
            style.setStyle(QTextListFormat.Style.ListDisc if level % 2 else QTextListFormat.Style.ListCircle)
            style.setIndent(max(1, level))
            cursor.createList(style)

    def _insert(self, cursor: QTextCursor, text: str, start: int, fmt: QTextCharFormat) -> None:
        """Insert ``text`` (part offsets from ``start``); a newline inside code becomes a
        line separator so that one part character stays one document position."""
        self.pieces.append(_Piece(start, start + len(text), cursor.position()))
        cursor.insertText(text.replace("\n", "\u2028"), fmt)

    def _table(self, cursor: QTextCursor, text: str, rows: list[TextBlock]) -> None:
        cells = [self._cells(text, row.char_start, row.char_end) for row in rows]
        columns = max(len(c) for c in cells)
        fmt = QTextTableFormat()
        fmt.setCellPadding(3)
        fmt.setCellSpacing(0)
        fmt.setBorder(0.5)
        fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
        table = cursor.insertTable(len(rows), columns, fmt)
        plain = self._char_format(BlockKind.PARAGRAPH, 0)
        for r, row_cells in enumerate(cells):
            for c, (start, end) in enumerate(row_cells):
                cell_cursor = table.cellAt(r, c).firstCursorPosition()
                self._insert(cell_cursor, text[start:end], start, plain)
        cursor.movePosition(QTextCursor.MoveOperation.End)

    @staticmethod
    def _cells(text: str, start: int, end: int) -> list[Span]:
        spans: list[Span] = []
        position = start
        while True:
            found = text.find(TABLE_CELL_SEPARATOR, position, end)
            if found < 0:
                spans.append((position, end))
                return spans
            spans.append((position, found))
            position = found + len(TABLE_CELL_SEPARATOR)

    def positions(self, start: int, end: int) -> list[Span]:
        """Document ranges holding part characters ``start:end`` (one per block or cell
        it touches; the separators between blocks are not characters of any)."""
        ranges: list[Span] = []
        index = max(0, bisect_right([p.start for p in self.pieces], start) - 1)
        for piece in self.pieces[index:]:  # written in the part's order
            if piece.start >= end:
                break
            low, high = max(start, piece.start), min(end, piece.end)
            if low < high:
                ranges.append((piece.position + low - piece.start, piece.position + high - piece.start))
        return ranges

    def selected_text(self, start: int, end: int) -> str:
        """The document's characters over part offsets ``start:end``, as the part text has
        them (line separators back to newlines), joined without the block separators."""
        out: list[str] = []
        for low, high in self.positions(start, end):
            cursor = QTextCursor(self.document)
            cursor.setPosition(low)
            cursor.setPosition(high, QTextCursor.MoveMode.KeepAnchor)
            out.append(cursor.selectedText().replace("\u2028", "\n"))
        return "".join(out)


class DocumentView(QTextBrowser):
    """A read-only view of one part, with the citation's characters highlighted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName("Document view")
        self.setAccessibleDescription("The cited part of the document, with the passage highlighted")
        self.base_size = max(9.0, self.font().pointSizeF())
        self.renderer = PartRenderer(self.document(), self.base_size)
        self.part: DocumentPart | None = None
        self.highlight: Span | None = None
        self.support: list[Span] = []
        self.find_hits: list[Span] = []

    def show_part(self, part: DocumentPart) -> None:
        self.part = part
        self.highlight = None
        self.support = []
        self.find_hits = []
        self.renderer.render(part)
        self.setExtraSelections([])
        self.verticalScrollBar().setValue(0)

    def set_highlight(self, start: int, end: int, support: list[Span]) -> bool:
        """Highlight part characters ``start:end`` (and ``support``, offsets into the same
        text, brighter) and scroll them into view; False when nothing maps."""
        ranges = self.renderer.positions(start, end)
        if not ranges:
            return False
        self.highlight = (start, end)
        self.support = list(support)
        self._paint()
        self._scroll_to(ranges[0][0])
        return True

    def _selection(self, low: int, high: int, colour: QColor) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.document())
        cursor.setPosition(low)
        cursor.setPosition(high, QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor  # type: ignore[misc]
        fmt = QTextCharFormat()
        fmt.setBackground(colour)
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, False)
        selection.format = fmt  # type: ignore[misc]
        return selection

    def _paint(self) -> None:
        selections = []
        if self.highlight is not None:
            for low, high in self.renderer.positions(*self.highlight):
                selections.append(self._selection(low, high, PASSAGE_COLOUR))
        for start, end in self.support:
            for low, high in self.renderer.positions(start, end):
                selections.append(self._selection(low, high, SUPPORT_COLOUR))
        for low, high in self.find_hits:
            selections.append(self._selection(low, high, FIND_COLOUR))
        self.setExtraSelections(selections)

    def _scroll_to(self, position: int) -> None:
        """Put document ``position`` about a fifth of the way down the view."""
        self.document().adjustSize()
        cursor = QTextCursor(self.document())
        cursor.setPosition(position)
        self.setTextCursor(cursor)
        top = self.cursorRect(cursor).top() + self.verticalScrollBar().value()
        self.verticalScrollBar().setValue(max(0, top - self.viewport().height() // 5))

    def highlighted_text(self) -> str:
        """The characters the passage highlight covers, as the part text has them."""
        if self.highlight is None:
            return ""
        return self.renderer.selected_text(*self.highlight)

    def highlight_visible(self) -> bool:
        """Whether the start of the highlight is inside the viewport."""
        if self.highlight is None:
            return False
        ranges = self.renderer.positions(*self.highlight)
        if not ranges:
            return False
        cursor = QTextCursor(self.document())
        cursor.setPosition(ranges[0][0])
        rect = self.cursorRect(cursor)
        return self.viewport().rect().intersects(rect)

    def find(self, text: str, direction: int = 1) -> bool:  # type: ignore[override]
        """Mark every match of ``text`` in the part and move to the next (+1) or previous
        (-1) one from the cursor; False when there is none."""
        self.find_hits = []
        if text:
            cursor = QTextCursor(self.document())
            while True:
                cursor = self.document().find(text, cursor)
                if cursor.isNull():
                    break
                self.find_hits.append((cursor.selectionStart(), cursor.selectionEnd()))
        self._paint()
        if not self.find_hits:
            return False
        here = self.textCursor().position()
        if direction > 0:
            target = next((h for h in self.find_hits if h[0] > here), self.find_hits[0])
        else:
            target = next((h for h in reversed(self.find_hits) if h[0] < here), self.find_hits[-1])
        self._scroll_to(target[0])
        return True

    def zoom(self, steps: int) -> None:
        if steps > 0:
            self.zoomIn(steps)
        elif steps < 0:
            self.zoomOut(-steps)
