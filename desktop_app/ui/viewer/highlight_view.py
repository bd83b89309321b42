"""QPdfView with a highlight overlay painted on its viewport.

QPdfView has no API for custom highlights and exposes no page geometry, so this class
repeats the layout arithmetic of ``QPdfViewPrivate::calculateDocumentLayout`` (single-page
mode): page size from the point size, the screen's logical DPI and the zoom mode (Qt's
integer rounding included), centred horizontally inside the document margins, then moved
by the scroll bars. A test compares the result with the white page in a grab of the view.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPaintEvent, QPen
from PySide6.QtPdf import QPdfDocument, QPdfDocumentRenderOptions, QPdfPageRenderer
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtWidgets import QWidget

logger = logging.getLogger(__name__)

PASSAGE_FILL = QColor(255, 214, 0, 85)
PASSAGE_EDGE = QColor(230, 160, 0, 200)
SUPPORT_FILL = QColor(255, 120, 0, 95)
PADDING_PT = 1.5  # glyph boxes are tight: pad them a little in page points


def merge_line_rects(rects: list[QRectF]) -> list[QRectF]:
    """Join per-glyph rectangles into one rectangle per line (and per column): glyphs on
    the same row whose gap is under three line heights belong to one rectangle."""
    lines: list[QRectF] = []
    for rect in sorted((r for r in rects if not r.isEmpty()), key=lambda r: r.left()):
        for index, line in enumerate(lines):
            if _same_row(line, rect) and rect.left() - line.right() < 3 * max(line.height(), rect.height()):
                lines[index] = line.united(rect)
                break
        else:
            lines.append(QRectF(rect))
    merged = True
    while merged:  # rows that grew into each other
        merged = False
        for i in range(len(lines)):
            for j in range(i + 1, len(lines)):
                if _same_row(lines[i], lines[j]) and lines[i].intersects(lines[j]):
                    lines[i] = lines[i].united(lines.pop(j))
                    merged = True
                    break
            if merged:
                break
    return lines


def _same_row(a: QRectF, b: QRectF) -> bool:
    overlap = min(a.bottom(), b.bottom()) - max(a.top(), b.top())
    return overlap > 0.5 * min(a.height(), b.height())


class HighlightPdfView(QPdfView):
    """A single-page QPdfView that paints passage highlights and reports rendered pages."""

    page_rendered = Signal(int)  # 0-based page index whose image arrived

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPageMode(QPdfView.PageMode.SinglePage)
        self.setZoomMode(QPdfView.ZoomMode.FitToWidth)
        # Fit-to-width with an as-needed scroll bar can oscillate for ever when the page's
        # height is within a scroll bar's width of the viewport's: the bar appears, the
        # page narrows and fits, the bar hides, the page widens… (seen at 1400x900, the
        # window's default size: the GUI thread spun on the relayouts).
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        screen = QGuiApplication.primaryScreen()
        self._resolution = screen.logicalDotsPerInch() / 72.0 if screen else 96.0 / 72.0
        self._highlight_page = -1
        self._passage: list[QRectF] = []  # page points
        self._support: list[QRectF] = []
        self._follow = False  # keep scrolling the highlight into view until the user scrolls
        self._follow_timer = QTimer(self)
        self._follow_timer.setSingleShot(True)
        self._follow_timer.setInterval(0)
        self._follow_timer.timeout.connect(self.scroll_to_highlight)
        renderer = self.findChild(QPdfPageRenderer)
        if renderer is not None:
            renderer.pageRendered.connect(self._on_page_rendered)
        else:  # pragma: no cover - a Qt version that renders differently
            logger.warning("QPdfView has no QPdfPageRenderer child; render waits are skipped")
        self.verticalScrollBar().sliderPressed.connect(self._stop_following)
        self.horizontalScrollBar().sliderPressed.connect(self._stop_following)
        self.zoomFactorChanged.connect(self._schedule_follow)
        self.zoomModeChanged.connect(self._schedule_follow)

    # ------------------------------------------------------------------ geometry

    def current_page(self) -> int:
        return self.pageNavigator().currentPage()

    def page_size_px(self, page: int) -> QSize:
        document = self.document()
        if document is None or document.status() != QPdfDocument.Status.Ready:
            return QSize()
        points = document.pagePointSize(page)
        natural = (points * self._resolution).toSize()
        margins = self.documentMargins()
        viewport = self.viewport().size()
        mode = self.zoomMode()
        if mode == QPdfView.ZoomMode.FitToWidth:
            if natural.width() <= 0:
                return QSize()
            factor = (viewport.width() - margins.left() - margins.right()) / natural.width()
            return natural * factor
        if mode == QPdfView.ZoomMode.FitInView:
            available = QSize(
                viewport.width() - margins.left() - margins.right(),
                viewport.height() - self.pageSpacing(),
            )
            return natural.scaled(available, Qt.AspectRatioMode.KeepAspectRatio)
        return (points * self._resolution * self.zoomFactor()).toSize()

    def page_rect(self, page: int | None = None) -> QRectF:
        """The current page's rectangle in viewport coordinates (empty if not shown)."""
        page = self.current_page() if page is None else page
        if page != self.current_page():
            return QRectF()
        size = self.page_size_px(page)
        if size.isEmpty():
            return QRectF()
        margins = self.documentMargins()
        total_width = size.width() + margins.left() + margins.right()
        x = (max(total_width, self.viewport().width()) - size.width()) // 2
        content = QRect(QPoint(x, margins.top()), size)
        offset = QPoint(self.horizontalScrollBar().value(), self.verticalScrollBar().value())
        return QRectF(content.translated(-offset))

    def effective_zoom(self) -> float:
        """Pixels per point divided by the screen resolution (1.0 = actual size)."""
        document = self.document()
        rect = self.page_rect()
        if document is None or rect.isEmpty():
            return self.zoomFactor()
        points = document.pagePointSize(self.current_page())
        return rect.width() / (points.width() * self._resolution)

    def to_viewport(self, rect: QRectF, page_rect: QRectF | None = None) -> QRectF:
        """Map a rectangle in page points to viewport pixels."""
        document = self.document()
        page_rect = self.page_rect() if page_rect is None else page_rect
        if document is None or page_rect.isEmpty():
            return QRectF()
        points = document.pagePointSize(self.current_page())
        sx = page_rect.width() / points.width()
        sy = page_rect.height() / points.height()
        return QRectF(
            page_rect.left() + rect.left() * sx,
            page_rect.top() + rect.top() * sy,
            rect.width() * sx,
            rect.height() * sy,
        )

    # ------------------------------------------------------------------ highlight

    def set_highlight(self, page: int, passage: list[QRectF], support: list[QRectF]) -> None:
        pad = PADDING_PT
        self._highlight_page = page
        self._passage = [r.adjusted(-pad, -pad, pad, pad) for r in merge_line_rects(passage)]
        self._support = [r.adjusted(-pad, -pad, pad, pad) for r in merge_line_rects(support)]
        self._follow = bool(self._passage)
        self.viewport().update()
        self._schedule_follow()

    def clear_highlight(self) -> None:
        self._highlight_page = -1
        self._passage, self._support = [], []
        self._follow = False
        self.viewport().update()

    def has_highlight(self) -> bool:
        return bool(self._passage) and self._highlight_page == self.current_page()

    def highlight_rects(self) -> list[QRectF]:
        """The passage highlight in viewport coordinates (what the user sees)."""
        if not self.has_highlight():
            return []
        page_rect = self.page_rect()
        return [self.to_viewport(r, page_rect) for r in self._passage]

    def support_rects(self) -> list[QRectF]:
        if not self.has_highlight():
            return []
        page_rect = self.page_rect()
        return [self.to_viewport(r, page_rect) for r in self._support]

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        super().paintEvent(event)
        if not self.has_highlight():
            return
        page_rect = self.page_rect()
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(PASSAGE_EDGE, 1.0))
        painter.setBrush(PASSAGE_FILL)
        for rect in self._passage:
            painter.drawRoundedRect(self.to_viewport(rect, page_rect), 2.0, 2.0)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(SUPPORT_FILL)
        for rect in self._support:
            painter.drawRoundedRect(self.to_viewport(rect, page_rect), 2.0, 2.0)
        # A bar in the margin marks the passage even when it is tiny at this zoom.
        rects = [self.to_viewport(r, page_rect) for r in self._passage]
        top = min(r.top() for r in rects)
        bottom = max(r.bottom() for r in rects)
        painter.setBrush(PASSAGE_EDGE)
        painter.drawRect(QRectF(page_rect.left() + 2, top, 3, bottom - top))
        painter.end()

    # ------------------------------------------------------------------ scrolling

    def _stop_following(self) -> None:
        self._follow = False

    def wheelEvent(self, event):  # noqa: N802, ANN001 (Qt override)
        self._follow = False
        super().wheelEvent(event)

    def resizeEvent(self, event):  # noqa: N802, ANN001 (Qt override)
        super().resizeEvent(event)
        self._schedule_follow()

    def _schedule_follow(self) -> None:
        # QPdfView updates its layout and scroll ranges after a page change or zoom in
        # the same turn of the event loop; scroll once it has.
        self._follow_timer.start()

    def scroll_to_highlight(self) -> None:
        if not self._follow or not self.has_highlight():
            return
        rects = self.highlight_rects()
        if not rects:
            return
        union = rects[0]
        for rect in rects[1:]:
            union = union.united(rect)
        vbar, hbar = self.verticalScrollBar(), self.horizontalScrollBar()
        viewport = self.viewport().size()
        target_top = vbar.value() + union.top() - viewport.height() * 0.25
        if union.height() > viewport.height() * 0.7:
            target_top = vbar.value() + union.top() - 12
        vbar.setValue(int(max(vbar.minimum(), min(vbar.maximum(), target_top))))
        if union.width() < viewport.width():
            target_left = hbar.value() + union.center().x() - viewport.width() / 2
        else:
            target_left = hbar.value() + union.left() - 12
        hbar.setValue(int(max(hbar.minimum(), min(hbar.maximum(), target_left))))

    # ------------------------------------------------------------------ rendering

    def _on_page_rendered(
        self,
        page: int,
        size: QSize,
        image: QImage,
        options: QPdfDocumentRenderOptions,
        request_id: int,
    ) -> None:
        self.page_rendered.emit(page)

