"""OCR with a fake line reader: scanned and garbled pages become page text with a box per
line, a status that says how many pages OCR read, and a page OCR cannot read stays
flagged; the store keeps the line boxes the viewer highlights with; a scanned file read
without OCR is read again once OCR is on, one OCR has tried is not."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.ingest import ocr
from desktop_app.core.ingest.changes import awaits_ocr
from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.ingest.ocr import RecognisedLine, page_from_lines, spaced_text
from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.types import DocStatus, PageQuality, PageText
from tests.fakes import FakeEmbedder
from tests.pdfgen import write_pdf


class FakeReader:
    """Reads the same lines off every page; counts the pages it was shown."""

    def __init__(self, lines: list[RecognisedLine]) -> None:
        self.lines = lines
        self.pages = 0
        self.sizes: list[tuple[int, int]] = []

    def read(self, image: Any) -> list[RecognisedLine]:
        self.pages += 1
        self.sizes.append((int(image.shape[1]), int(image.shape[0])))
        return list(self.lines)


SCALE = ocr.RENDER_DPI / 72.0
LINES = [  # pixel boxes at RENDER_DPI, given out of reading order on purpose
    RecognisedLine("the second line about the centrifugal pump", 0.97, (200, 400, 1000, 440)),
    RecognisedLine("Inspection of the impeller housing", 0.95, (200, 300, 900, 340)),
]


def _blank_page(quality: PageQuality = PageQuality.EMPTY, error: str = "") -> PageText:
    return PageText(1, "1", 595.0, 842.0, 0, "", quality, (), error)


def test_lines_become_page_text_in_reading_order_with_a_box_per_line() -> None:
    page = page_from_lines(_blank_page(), LINES, SCALE)
    assert page.quality == PageQuality.OK and page.ocr
    assert page.text == ("Inspection of the impeller housing\n"
                         "the second line about the centrifugal pump")
    first, second = page.runs
    assert page.text[first.char_start:first.char_end] == "Inspection of the impeller housing"
    assert page.text[second.char_start:second.char_end].startswith("the second line")
    # 300 px from the top at 200 dpi is 108 pt down an 842 pt page (origin bottom-left)
    assert first.x0 == pytest.approx(200 / SCALE) and first.y1 == pytest.approx(842 - 300 / SCALE)
    assert first.y0 == pytest.approx(842 - 340 / SCALE)
    assert 0.95 < page.ocr_confidence < 0.97


def test_a_page_ocr_cannot_read_stays_flagged() -> None:
    garbled = _blank_page(PageQuality.GARBLED, "garbled text: glyph names instead of text")
    unsure = [RecognisedLine("qz xv", 0.55, (10, 10, 100, 30))] * 3
    page = page_from_lines(garbled, unsure, SCALE)
    assert page.quality == PageQuality.GARBLED and not page.ocr
    assert page.error.startswith("garbled text: glyph names") and "OCR could not read it" in page.error
    assert page_from_lines(_blank_page(), [], SCALE) == _blank_page()  # nothing found: as it was
    nothing = page_from_lines(garbled, [], SCALE)  # a garbled page says OCR tried (not read again)
    assert nothing.quality == PageQuality.GARBLED and "OCR could not read it" in nothing.error


def test_latin_words_get_spaces_where_the_recogniser_left_a_gap() -> None:
    chars = list("Loremipsum,dolor")
    columns = [1, 4, 7, 9, 13, 20, 22, 25, 28, 32, 33, 40, 43, 45, 47, 50]
    assert spaced_text(chars, columns) == "Lorem ipsum, dolor"
    assert spaced_text(list("文本识别"), [1, 4, 12, 15]) == "文本识别"  # no spaces in Chinese


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_boxes_map_to_the_page_and_back_to_the_view(rotation: int) -> None:
    width, height = 595.0, 842.0
    view_w, view_h = (height, width) if rotation in (90, 270) else (width, height)
    pixel = (100.0, 50.0, 300.0, 90.0)
    box = ocr.to_page_box(pixel, SCALE, width, height, rotation)
    assert 0 <= box[0] < box[2] <= width and 0 <= box[1] < box[3] <= height
    back = ocr.to_view_box(box, width, height, rotation)
    assert back == pytest.approx(tuple(v / SCALE for v in pixel))
    assert back[2] <= view_w and back[3] <= view_h


def test_a_scanned_pdf_is_indexed_through_ocr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = FakeReader(LINES)
    monkeypatch.setattr(ocr, "_READER", reader)
    path = write_pdf(tmp_path / "scan.pdf", [[], []])
    told: list[int] = []
    doc = extract_document(str(path), ocr=True, on_ocr=told.append)
    assert told == [2] and reader.pages == 2
    assert doc.status == DocStatus.INDEXED and doc.ocr_pages == 2 and doc.bad_pages == []
    assert "impeller housing" in doc.pages[1].text
    width, height = doc.pages[0].width, doc.pages[0].height  # rendered at RENDER_DPI
    assert reader.sizes[0] == pytest.approx((round(width * SCALE), round(height * SCALE)), abs=2)
    # without OCR the same file has no text layer, and says how to get one
    plain = extract_document(str(path))
    assert plain.status == DocStatus.NO_TEXT_LAYER and "OCR is switched off" in plain.error


def test_a_scan_ocr_finds_nothing_on_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "_READER", FakeReader([]))
    doc = extract_document(str(write_pdf(tmp_path / "blank.pdf", [[]])), ocr=True)
    assert doc.status == DocStatus.NO_TEXT_LAYER and doc.ocr_pages == 0
    assert "OCR found no text" in doc.error


def test_ocr_pages_are_stored_with_their_line_boxes_and_found_by_search(tmp_path: Path) -> None:
    from desktop_app.core.ingest import chunking
    from desktop_app.core.text import words as termlib
    from desktop_app.core.types import ExtractedDocument

    page = page_from_lines(_blank_page(), LINES, SCALE)
    doc = ExtractedDocument(path=str(tmp_path / "scan.pdf"), doc_id="d" * 64, size=1, mtime=1.0,
                            title="Scan", status=DocStatus.INDEXED, page_count=1, pages=(page,))
    embedder = FakeEmbedder()
    chunks = chunking.chunk_document(doc, max_tokens=200)
    with closing(Store(tmp_path / "lib.duckdb")) as store:
        store.write_document(doc, chunks, [dict(termlib.term_counts(c.text)) for c in chunks],
                             embedder.embed([c.text for c in chunks]), embedder.model_id, 1)
        assert store.documents()[0].ocr_pages == 1
        assert store.document_ocr_pages(doc.doc_id) == 1
        hit = Retriever(store, embedder).search("impeller housing", k=3).passages[0]
        assert hit.page == 1
        start = page.text.index("centrifugal")
        boxes = store.ocr_line_boxes(doc.doc_id, 1, start, start + 5)
        assert boxes == [pytest.approx((page.runs[1].x0, page.runs[1].y0, page.runs[1].x1, page.runs[1].y1))]
        assert len(store.ocr_line_boxes(doc.doc_id, 1, hit.char_start, hit.char_end)) == 2
        assert store.page_geometry(doc.doc_id, 1) == (595.0, 842.0, 0)


def test_a_scan_read_without_ocr_is_read_again_once_ocr_is_on() -> None:
    before = "This PDF has no text layer: its pages are images (a scan?). Folio cannot read them because OCR is not available."
    assert awaits_ocr(True, DocStatus.NO_TEXT_LAYER, before)
    assert not awaits_ocr(False, DocStatus.NO_TEXT_LAYER, before)
    assert awaits_ocr(True, DocStatus.GARBLED_TEXT, "The text of this PDF is garbled (glyph names)")
    partly = "Pages 2–22 could not be read (glyph names instead of text); the other pages are indexed."
    assert awaits_ocr(True, DocStatus.INDEXED_PARTIALLY, partly)
    assert not awaits_ocr(True, DocStatus.INDEXED_PARTIALLY, "Page 3 could not be read (KeyError: 1)")
    tried = "This PDF has no text layer, and OCR found no text it could read on its pages"
    assert not awaits_ocr(True, DocStatus.NO_TEXT_LAYER, tried)
    assert not awaits_ocr(True, DocStatus.INDEXED, "")
