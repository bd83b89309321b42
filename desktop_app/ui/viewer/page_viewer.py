"""The page viewer: a cited page with its passage highlighted, a header naming where it
is, page navigation and zoom. A citation into a reflowable document (HTML, EPUB, DOCX,
ODT, PPTX, Markdown, text) opens the document view (ui/document_view.py) in the same
place, with the same header, part navigation, find and zoom.

Opening a citation is two steps so that hashing a big file never blocks the GUI thread:
:meth:`PageViewer.show_source` opens the page at once and says it is checking the file;
:meth:`PageViewer.apply_source_state` (after the facade's async ``source_state``) either
highlights the passage or says the source changed or was removed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtPdf import QPdfDocument
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.types import (
    DOCUMENT_SUFFIXES,
    DocumentPart,
    OcrLine,
    SourcePayload,
    SourceState,
    Span,
)
from desktop_app.ui.qt.rich_text import elide, esc
from desktop_app.ui.qt.theme import tool_button
from desktop_app.ui.viewer.document_view import DocumentView
from desktop_app.ui.viewer.find_bar import FindBar
from desktop_app.ui.viewer.highlight_view import HighlightPdfView
from desktop_app.ui.viewer.passage_align import align_passage

logger = logging.getLogger(__name__)

ZOOM_STEP = 1.25
PartSource = Callable[[str, int], Awaitable[DocumentPart | None]]


def reflowable_path(path: str) -> bool:
    suffix = Path(path).suffix.lower()
    return suffix in DOCUMENT_SUFFIXES and suffix != ".pdf"


def ocr_rects(lines: list[OcrLine], start: int, end: int) -> list[QRectF]:
    """The parts of OCR lines that hold characters ``start:end`` of the page text (a
    line's box is shared out evenly among its characters)."""
    rects: list[QRectF] = []
    for line in lines:
        first, last = max(start, line.char_start), min(end, line.char_end)
        if first >= last:
            continue
        share = (line.right - line.left) / max(1, line.char_end - line.char_start)
        left = line.left + share * (first - line.char_start)
        right = line.left + share * (last - line.char_start)
        rects.append(QRectF(left, line.top, right - left, line.bottom - line.top))
    return rects


class PageViewer(QWidget):
    """Right-hand pane. ``settled`` fires once a requested page is rendered and its
    highlight decided (True when a highlight is shown)."""

    settled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document = QPdfDocument(self)
        self.view = HighlightPdfView(self)
        self.view.setDocument(self.document)
        self.view.setAccessibleName("Page viewer")
        self.view.setAccessibleDescription("The cited page, with the passage highlighted")
        self.find_bar = FindBar(self.view, self)
        self.document_view = DocumentView(self)
        self.part: DocumentPart | None = None
        self.part_source: PartSource | None = None  # the facade's document_part, set by the window
        self._part_task: asyncio.Future[None] | None = None
        self.header = QLabel(self)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setContentsMargins(6, 4, 6, 4)
        self.header.setAccessibleName("Shown document")
        self.note = ""
        self.path = ""
        self._source: SourcePayload | None = None
        self._support: list[Span] = []
        self._request = 0
        self._awaiting_render = False
        self._decided = False
        self._rendered: set[int] = set()
        self._passwords: dict[str, str] = {}
        self.last_alignment_ms = 0.0
        self._build_toolbar()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.header)
        layout.addWidget(self.toolbar)
        self.pdf_pane = QWidget(self)
        pdf_layout = QVBoxLayout(self.pdf_pane)
        pdf_layout.setContentsMargins(0, 0, 0, 0)
        pdf_layout.setSpacing(0)
        pdf_layout.addWidget(self.find_bar)
        pdf_layout.addWidget(self.view, 1)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.pdf_pane)
        self.stack.addWidget(self.document_view)
        layout.addWidget(self.stack, 1)
        self.view.pageNavigator().currentPageChanged.connect(self._on_page_changed)
        self.view.page_rendered.connect(self._on_rendered)
        self.view.zoomFactorChanged.connect(lambda *_: self._rendered.clear())
        self.view.zoomModeChanged.connect(lambda *_: self._rendered.clear())
        self._show_header()

    def _build_toolbar(self) -> None:
        self.toolbar = QWidget(self)
        row = QHBoxLayout(self.toolbar)
        row.setContentsMargins(4, 0, 4, 2)
        self.prev_button = self._tool("prev", "Previous page (Ctrl+PgUp)", lambda: self.go_to(self.page() - 1))
        self.page_box = QSpinBox(self.toolbar)
        self.page_box.setAccessibleName("Page number")
        self.page_box.setMinimum(1)
        self.page_box.setKeyboardTracking(False)
        self.page_box.valueChanged.connect(lambda value: self.go_to(value))
        self.page_count_label = QLabel("/ 0", self.toolbar)
        self.next_button = self._tool("next", "Next page (Ctrl+PgDown)", lambda: self.go_to(self.page() + 1))
        self.find_button = self._tool("", "Find in this document (Ctrl+F)", self.open_find)
        self.find_button.setText("Find")
        self.find_edit = QLineEdit(self.toolbar)  # the document view's find (a PDF has its bar)
        self.find_edit.setPlaceholderText("Find in this part")
        self.find_edit.setAccessibleName("Find in this part of the document")
        self.find_edit.setClearButtonEnabled(True)
        for clear in self.find_edit.findChildren(QToolButton):  # Qt's own, unnamed otherwise
            clear.setAccessibleName("Clear the search")
        self.find_edit.returnPressed.connect(lambda: self.document_view.find(self.find_edit.text(), 1))
        self.find_edit.hide()
        self.zoom_out_button = self._tool("zoom-out", "Zoom out (Ctrl+-)", self.zoom_out)
        self.zoom_in_button = self._tool("zoom-in", "Zoom in (Ctrl+=)", self.zoom_in)
        self.fit_width_button = self._tool("fit-width", "Fit width (Ctrl+0)", self.fit_width)
        self.fit_page_button = self._tool("fit-page", "Fit page (Ctrl+9)", self.fit_page)
        for widget in (self.prev_button, self.page_box, self.page_count_label, self.next_button):
            row.addWidget(widget)
        row.addStretch(1)
        row.addWidget(self.find_edit)
        for widget in (self.find_button, self.zoom_out_button, self.zoom_in_button, self.fit_width_button, self.fit_page_button):
            row.addWidget(widget)

    def _tool(self, name: str, tip: str, slot: Callable[[], object]) -> QToolButton:
        return tool_button(self.toolbar, name, tip, slot)

    # ------------------------------------------------------------------ navigation

    @property
    def reflowing(self) -> bool:
        """Whether the document view (not the PDF page) is shown."""
        return self.stack.currentWidget() is self.document_view

    @property
    def passage_span(self) -> Span | None:
        """Where the passage last asked for lies in its page's text (what a highlight marks:
        a cited chunk, or a quote's sentence alone); None before any."""
        return (self._source.char_start, self._source.char_end) if self._source is not None else None

    def page(self) -> int:
        """The 1-based page (or part of a reflowable document) shown."""
        if self.reflowing:
            return self.part.page if self.part is not None else 0
        return self.view.current_page() + 1

    def page_count(self) -> int:
        if self.reflowing:
            return self.part.parts if self.part is not None else 0
        return self.document.pageCount() if self.document.status() == QPdfDocument.Status.Ready else 0

    def go_to(self, page: int) -> None:
        if not 1 <= page <= self.page_count() or page == self.page():
            return
        if self.reflowing and self.part is not None:
            self._load_part(self.part.doc_id, page)
            return
        self.view.pageNavigator().jump(page - 1, QPointF(), self.view.zoomFactor())

    def open_find(self) -> None:
        if self.reflowing:
            self.find_edit.show()
            self.find_edit.setFocus()
            self.find_edit.selectAll()
        else:
            self.find_bar.open_bar()

    def zoom_by(self, factor: float) -> None:
        if self.reflowing:
            self.document_view.zoom(1 if factor > 1 else -1)
            return
        zoom = self.view.effective_zoom() * factor
        self.view.setZoomMode(QPdfView.ZoomMode.Custom)
        self.view.setZoomFactor(max(0.2, min(8.0, zoom)))

    def zoom_in(self) -> None:
        self.zoom_by(ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom_by(1 / ZOOM_STEP)

    def fit_width(self) -> None:
        if self.reflowing:
            return  # the document view always fits its width
        self.view.setZoomMode(QPdfView.ZoomMode.FitToWidth)

    def fit_page(self) -> None:
        if self.reflowing:
            return
        self.view.setZoomMode(QPdfView.ZoomMode.FitInView)

    def set_password(self, path: str, password: str) -> None:
        self._passwords[str(Path(path))] = password

    # ------------------------------------------------------------------ opening

    def open_document(self, path: str, page: int = 1) -> bool:
        """Show ``path`` at ``page`` without a highlight (library double-click)."""
        self._request += 1
        self._source = None
        self.note = ""
        if reflowable_path(path):
            self._reflow(True)
            self.path = str(Path(path))
            self._load_part(self.path, page)
            self._show_header()
            return True
        self._reflow(False)
        ok = self._load(path)
        if ok:
            self._jump(page)
            self._decided = True
            self._maybe_settle()
        self._show_header()
        return ok

    def show_source(self, source: SourcePayload, support: list[Span] | None = None) -> int:
        """Open the cited page; returns a token for :meth:`apply_source_state`."""
        self._request += 1
        self._source = source
        self._support = list(support or [])
        self._decided = False
        self.view.clear_highlight()
        self._reflow(source.reflowable)
        if not Path(source.doc_path).is_file():
            self._unload()
            self.note = f"Source removed: {source.doc_path} no longer exists."
            self._decided = True
            self._show_header()
            self.settled.emit(False)
            return self._request
        if source.reflowable:
            self.path = str(Path(source.doc_path))
            self.note = "Checking that the file has not changed since it was indexed…"
        elif self._load(source.doc_path):
            self._jump(source.page)
            self.note = "Checking that the file has not changed since it was indexed…"
        self._show_header()
        return self._request

    def apply_source_state(self, token: int, state: SourceState,
                           ocr_lines: list[OcrLine] | None = None,
                           part: DocumentPart | None = None) -> bool:
        """Highlight the passage if the file is as indexed; returns True if highlighted.
        ``ocr_lines``: the lines OCR read on a scanned page that hold the passage (the
        highlight is drawn from their boxes instead of PDFium's text). ``part``: the
        stored part a reflowable document's citation points into."""
        if token != self._request or self._source is None:
            return False  # the user has clicked something else meanwhile
        source = self._source
        if source.reflowable:
            return self._apply_part(source, state, part)
        highlighted = False
        if state is SourceState.REMOVED:
            self.note = "Source removed: the file is no longer in the library."
        elif state is SourceState.CHANGED:
            self.note = (
                "Source changed since this answer: the file now holds other content, "
                "so the passage is not highlighted. Re-ask to cite the current version."
            )
        elif self.page_count() == 0:
            pass  # the load failure is already in the note
        elif ocr_lines:
            highlighted = self._highlight_ocr(source, ocr_lines)
        else:
            highlighted = self._highlight(source)
        self._decided = True
        self._show_header()
        if self.page_count() == 0:
            self._awaiting_render = False
            self.settled.emit(False)  # nothing to render
        else:
            self._maybe_settle()
        return highlighted

    # ------------------------------------------------------------------ reflowable documents

    def _reflow(self, on: bool) -> None:
        self.stack.setCurrentWidget(self.document_view if on else self.pdf_pane)
        self.fit_width_button.setVisible(not on)
        self.fit_page_button.setVisible(not on)
        if not on:
            self.find_edit.hide()
            self.part = None
        else:
            self.find_bar.close_bar()

    def _apply_part(self, source: SourcePayload, state: SourceState, part: DocumentPart | None) -> bool:
        highlighted = False
        if state is SourceState.REMOVED:
            self.note = "Source removed: the file is no longer in the library."
        elif state is SourceState.CHANGED:
            self.note = ("Source changed since this answer: the file now holds other content, "
                         "so the passage is not highlighted. Re-ask to cite the current version.")
        elif part is None:
            self.note = f"Section {source.page_label} of this document is not in the library."
        else:
            self._show_part(part)
            support = [(source.char_start + a, source.char_start + b) for a, b in self._support]
            highlighted = self.document_view.set_highlight(source.char_start, source.char_end, support)
            self.note = "" if highlighted else "The passage could not be located in this section."
        self._decided = True
        self._show_header()
        self.settled.emit(highlighted)
        return highlighted

    def _show_part(self, part: DocumentPart) -> None:
        self.part = part
        self.document_view.show_part(part)
        self.page_box.blockSignals(True)
        self.page_box.setMaximum(max(1, part.parts))
        self.page_box.setValue(part.page)
        self.page_box.blockSignals(False)
        self.page_count_label.setText(f"/ {part.parts}")
        self.prev_button.setEnabled(part.page > 1)
        self.next_button.setEnabled(part.page < part.parts)

    def _load_part(self, document: str, page: int) -> None:
        """Show part ``page`` of ``document`` (doc_id or path) when the facade has it."""
        if self.part_source is None:
            self.note = "The document view has no library to read from."
            return
        request = self._request
        source = self.part_source

        async def load() -> None:
            part = await source(document, page)
            if request != self._request:
                return
            if part is None:
                self.note = "This document is not in the library (yet)."
            else:
                self.note = ""
                self._show_part(part)
            self._show_header()
            self.settled.emit(False)

        self._part_task = asyncio.ensure_future(load())

    def _load(self, path: str) -> bool:
        key = str(Path(path))
        if self.path == key and self.document.status() == QPdfDocument.Status.Ready:
            return True
        self._unload()
        password = self._passwords.get(key)
        if password:
            self.document.setPassword(password)
        error = self.document.load(key)
        if error != QPdfDocument.Error.None_:
            words = {
                QPdfDocument.Error.IncorrectPassword: "needs a password (give it in the library)",
                QPdfDocument.Error.FileNotFound: "was not found",
                QPdfDocument.Error.InvalidFileFormat: "is not a readable PDF",
                QPdfDocument.Error.UnsupportedSecurityScheme: "uses unsupported encryption",
            }.get(error, f"could not be opened ({error.name})")
            self.note = f"{Path(key).name} {words}."
            logger.info("viewer could not open %s: %s", key, error)
            self.path = ""
            return False
        self.path = key
        self.page_box.setMaximum(max(1, self.document.pageCount()))
        self.page_count_label.setText(f"/ {self.document.pageCount()}")
        return True

    def _unload(self) -> None:
        self.view.clear_highlight()
        self._rendered.clear()
        if self.document.status() != QPdfDocument.Status.Null:
            self.document.close()
        self.document.setPassword("")
        self.path = ""
        self.page_count_label.setText("/ 0")

    def _jump(self, page: int) -> None:
        page = max(1, min(page, self.document.pageCount()))
        self._awaiting_render = True
        if page != self.page():
            self.view.pageNavigator().jump(page - 1, QPointF(), self.view.zoomFactor())
        self.view.viewport().update()

    def _highlight(self, source: SourcePayload) -> bool:
        page = source.page - 1
        if not 0 <= page < self.document.pageCount():
            self.note = f"The document has no page {source.page} any more."
            return False
        started = time.perf_counter()
        page_text = self.document.getAllText(page).text()
        alignment = align_passage(page_text, source.text, hint=source.char_start)
        self.last_alignment_ms = (time.perf_counter() - started) * 1000.0
        if alignment is None:
            self.note = "The passage could not be located in this page's text; showing the page."
            return False
        passage = self._rects(page, alignment.segments)
        support: list[QRectF] = []
        for start, end in self._support:
            support += self._rects(page, alignment.map_span(start, end))
        if not passage:
            self.note = "The passage has no position on this page; showing the page."
            return False
        self.view.set_highlight(page, passage, support)
        self.note = "" if alignment.coverage > 0.9 else "Highlight approximate: the page text differs slightly."
        return True

    def _highlight_ocr(self, source: SourcePayload, lines: list[OcrLine]) -> bool:
        page = source.page - 1
        if not 0 <= page < self.document.pageCount():
            self.note = f"The document has no page {source.page} any more."
            return False
        passage = ocr_rects(lines, source.char_start, source.char_end)
        support: list[QRectF] = []
        for start, end in self._support:
            support += ocr_rects(lines, source.char_start + start, source.char_start + end)
        if not passage:
            return False
        self.view.set_highlight(page, passage, support)
        self.note = "This page was read by OCR: the highlight marks the lines it read."
        return True

    def _rects(self, page: int, segments: tuple[Span, ...] | list[Span]) -> list[QRectF]:
        rects: list[QRectF] = []
        for start, end in segments:
            selection = self.document.getSelectionAtIndex(page, start, end - start)
            if selection.isValid():
                rects += [polygon.boundingRect() for polygon in selection.bounds()]
        return rects

    # ------------------------------------------------------------------ state

    def _on_page_changed(self, page: int) -> None:
        self._rendered.clear()  # QPdfView drops its page images on a page change
        self.page_box.blockSignals(True)
        self.page_box.setValue(page + 1)
        self.page_box.blockSignals(False)
        self.prev_button.setEnabled(page > 0)
        self.next_button.setEnabled(page + 1 < self.page_count())
        self._show_header()

    def _on_rendered(self, page: int) -> None:
        self._rendered.add(page)
        self._maybe_settle()

    def _maybe_settle(self) -> None:
        if self._awaiting_render and self._decided and self.view.current_page() in self._rendered:
            self._awaiting_render = False
            self.settled.emit(self.view.has_highlight())

    def _show_header(self) -> None:
        parts: list[str] = []
        if self._source is not None:
            source = self._source
            parts.append(f"<b>{esc(source.doc_title or Path(source.doc_path).name)}</b>")
        elif self.path:
            parts.append(f"<b>{esc(Path(self.path).name)}</b>")
        else:
            parts.append("<i>Click a citation to see its page here.</i>")
        if self.reflowing and self.part is not None:
            unit = "slide" if self.path.lower().endswith(".pptx") else "section"
            parts.append(f"{unit} {esc(self.part.label)} (part {self.part.page} of {self.part.parts})")
        elif self.page_count():
            index = self.view.current_page()
            label = self.document.pageLabel(index) or str(index + 1)
            where = f"p. {esc(label)}"
            if label != str(index + 1):
                where += f" (page {index + 1} of {self.page_count()})"
            else:
                where += f" of {self.page_count()}"
            parts.append(where)
        if self._source is not None and self._source.section:
            parts.append(esc(elide(self._source.section, 70)))
        text = " · ".join(parts)
        if self.note:
            text += f"<br/><span style='color:#b26a00;'>{esc(self.note)}</span>"
        self.header.setText(text)
        tip = self.path
        if self._source is not None and self._source.section:
            tip += f"\n{self._source.section}"
        self.header.setToolTip(tip)
