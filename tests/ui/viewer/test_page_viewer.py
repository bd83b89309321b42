"""The page viewer on its own: page geometry, highlight placement under zoom and scroll,
navigation, missing files."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage

from desktop_app.core.types import SourcePayload, SourceState
from desktop_app.ui.qt.async_bridge import SignalWaiter
from desktop_app.ui.viewer.page_viewer import PageViewer
from tests.timing import within
from tests.ui.conftest import until
from tests.ui.fakes import payload, pypdf_passage


@pytest.fixture
def viewer(qtbot, qloop):  # noqa: ANN001, ANN201
    widget = PageViewer()
    qtbot.addWidget(widget)
    widget.resize(520, 720)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def open_passage(viewer: PageViewer, run, source, state=SourceState.CURRENT) -> bool:  # noqa: ANN001
    async def go() -> bool:
        waiter = SignalWaiter(viewer.settled)
        token = viewer.show_source(source)
        highlighted = viewer.apply_source_state(token, state)
        await waiter.wait(10)
        return highlighted

    return run(go())


def white_extent(image: QImage) -> tuple[int, int]:
    row = image.height() // 2
    xs = [x for x in range(image.width()) if QColor(image.pixel(x, row)).lightness() > 250]
    return min(xs), max(xs)


def glyph_rects(viewer: PageViewer, needle: str) -> list[QRectF]:
    page = viewer.view.current_page()
    text = viewer.document.getAllText(page).text()
    selection = viewer.document.getSelectionAtIndex(page, text.index(needle), len(needle))
    page_rect = viewer.view.page_rect()
    return [viewer.view.to_viewport(p.boundingRect(), page_rect) for p in selection.bounds()]


def covers(highlight: list[QRectF], boxes: list[QRectF]) -> bool:
    return bool(boxes) and all(any(h.intersects(b) for h in highlight) for b in boxes)


def manual_source(library):  # noqa: ANN001, ANN201
    manual = library["manual"].path
    passage = pypdf_passage(manual, 2, "The warranty period", "regional")
    return payload("1", manual, 2, passage, section="4.2 Warranty", title="Pump Manual")


def test_supporting_sentence_is_highlighted_more_strongly(viewer, library, run) -> None:  # noqa: ANN001
    source = manual_source(library)
    start = source.text.index("Claims")
    end = source.text.index("regional") + len("regional")

    async def go() -> None:
        waiter = SignalWaiter(viewer.settled)
        token = viewer.show_source(source, [(start, end)])
        viewer.apply_source_state(token, SourceState.CURRENT)
        await waiter.wait(10)

    run(go())
    strong = viewer.view.support_rects()
    assert covers(strong, glyph_rects(viewer, "handled by the regional"))
    assert not any(s.intersects(b) for s in strong for b in glyph_rects(viewer, "thirty days"))


def test_page_rect_matches_the_painted_page(viewer, library, run) -> None:  # noqa: ANN001
    assert open_passage(viewer, run, manual_source(library))
    image = viewer.view.viewport().grab().toImage()
    left, right = white_extent(image)
    rect = viewer.view.page_rect()
    assert abs(left - rect.left()) <= 1 and abs(right + 1 - rect.right()) <= 1
    # The highlight is painted where the passage is: yellowish, not white.
    target = viewer.view.highlight_rects()[0]
    middle = QColor(image.pixel(int(target.left()) + 3, int(target.center().y())))
    assert middle.blue() < middle.red() - 20


def test_highlight_follows_zoom_and_stays_in_view(viewer, library, run) -> None:  # noqa: ANN001
    def alignment_seconds() -> float:
        assert open_passage(viewer, run, manual_source(library))
        return viewer.last_alignment_ms / 1000.0

    within(alignment_seconds, 0.05)  # under 50 ms, up to 3 tries on a busy machine
    for step in ("zoom_in", "zoom_in", "zoom_in", "fit_page", "zoom_out", "fit_width"):
        getattr(viewer, step)() if step.startswith("fit") else viewer.zoom_by(
            1.25 if step == "zoom_in" else 0.8
        )
        # The highlight is laid out again at the new zoom (on the event loop, however slow).
        run(until(lambda: covers(viewer.view.highlight_rects(), glyph_rects(viewer, "thirty days")),
                  timeout=30, what=f"the highlight after {step}"), timeout=40)
        highlight = viewer.view.highlight_rects()
        assert covers(highlight, glyph_rects(viewer, "thirty days")), step
        assert not any(
            h.intersects(b) for h in highlight for b in glyph_rects(viewer, "Unrelated opening")
        ), step
        visible = QRectF(viewer.view.viewport().rect())
        assert any(visible.contains(h.center()) for h in highlight), step


def test_navigation_hides_and_restores_the_highlight(viewer, library, run) -> None:  # noqa: ANN001
    assert open_passage(viewer, run, manual_source(library))
    assert viewer.page() == 2 and "p. 2 of 3" in viewer.header.text()
    viewer.next_button.click()
    assert viewer.page() == 3 and not viewer.view.has_highlight()
    viewer.page_box.setValue(2)
    assert viewer.page() == 2 and viewer.view.has_highlight()


def test_a_removed_file_is_said_not_shown(viewer, library, run, tmp_path) -> None:  # noqa: ANN001
    copy = tmp_path / "gone.pdf"
    shutil.copy(library["manual"].path, copy)
    source = payload("1", copy, 2, "The warranty period for the pump")
    copy.unlink()
    assert not open_passage(viewer, run, source)
    assert "Source removed" in viewer.header.text()
    assert viewer.page_count() == 0


def test_chinese_passage_is_highlighted(viewer, library, run) -> None:  # noqa: ANN001
    pdf = library["chinese"].path
    # pypdf breaks this line into "第\n8.3.2\n条\n\t\n…" and both extractors give the
    # Kangxi radical "⼗" (U+2F17) for "十": the alignment must see through both.
    passage = pypdf_passage(pdf, 1, "第", "计算")
    assert "\n8.3.2\n" in passage
    source = payload("1", pdf, 1, passage, title="质保说明")
    assert open_passage(viewer, run, source)
    highlight = viewer.view.highlight_rects()
    assert covers(highlight, glyph_rects(viewer, "保修期为三"))
    assert covers(highlight, glyph_rects(viewer, "8.3.2"))
    assert not any(h.intersects(b) for h in highlight for b in glyph_rects(viewer, "质保说明"))


def test_an_unreadable_file_settles_with_a_reason(viewer, run, tmp_path) -> None:  # noqa: ANN001
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\nnot really a pdf\n")
    source = SourcePayload("1", "x:1:0", "x", str(broken), "Broken", 1, "1", "", "anything", 0, 8)
    assert not open_passage(viewer, run, source)
    assert "not a readable PDF" in viewer.header.text()


def test_a_page_read_by_ocr_is_highlighted_from_its_line_boxes(viewer, run, tmp_path, shared_dir) -> None:  # noqa: ANN001
    from desktop_app.core.ids import chunk_id, sha256_file
    from desktop_app.core.types import OcrLine

    scan = tmp_path / "scan.pdf"  # an image without a text layer: PDFium has no text for it
    shutil.copy(shared_dir / "hostile" / "scan_image_only.pdf", scan)
    text = "Docling bundles PDF document conversion to\nJSON and Markdown in an easy self contained"
    doc_id = sha256_file(scan)
    source = SourcePayload(id="1", chunk_id=chunk_id(doc_id, 1, 0), doc_id=doc_id, doc_path=str(scan),
                           doc_title="Scan", page=1, page_label="1", section="", text=text,
                           char_start=0, char_end=len(text))
    lines = [OcrLine(0, 42, 73.4, 76.4, 505.1, 96.2), OcrLine(43, 86, 72.0, 103.0, 505.4, 123.6)]

    async def go() -> bool:
        waiter = SignalWaiter(viewer.settled)
        token = viewer.show_source(source, [(43, 86)])
        highlighted = viewer.apply_source_state(token, SourceState.CURRENT, lines)
        await waiter.wait(10)
        return highlighted

    assert run(go())
    page_rect = viewer.view.page_rect()
    first, second = (viewer.view.to_viewport(QRectF(line.left, line.top, line.right - line.left,
                                                    line.bottom - line.top), page_rect) for line in lines)
    assert covers(viewer.view.highlight_rects(), [first, second])
    assert covers(viewer.view.support_rects(), [second])
    assert not any(s.intersects(first.adjusted(0, 0, 0, -4)) for s in viewer.view.support_rects())
    assert "read by OCR" in viewer.note
