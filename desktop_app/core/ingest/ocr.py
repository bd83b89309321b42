"""Read a scanned page with OCR: render it with PDFium, recognise its lines. Qt-free.

Runs inside a parse worker (:mod:`desktop_app.core.ingest.parse_pool`) for the pages the
extractor finds without a text layer (EMPTY) or with garbled text (GARBLED). The page is
rendered with ``pypdfium2`` at :data:`RENDER_DPI` (150 dpi; the page as viewers show it: crop box,
/Rotate applied), and ``rapidocr-onnxruntime`` (PP-OCRv4 detection, direction and
recognition, Chinese and English, on onnxruntime) finds and reads its lines.

The recogniser writes Latin words without spaces between them (``Loremipsumdolor``);
its CTC decoder knows where each character sat in the line, and a gap wider than a
character splits words (rapidocr's ``return_word_box``): Folio puts a space between two
Latin words there, none between Chinese characters. Each line becomes a
:class:`~desktop_app.core.types.TextRun` whose box is in the same coordinates as the
text runs of a text page (points, the unrotated page, origin bottom-left of the crop
box) and whose ``char_start``/``char_end`` index the page text, so chunking, citations
and the viewer's highlight work on it unchanged. The page keeps the mean confidence of
its lines.

A page whose OCR finds no line stays as it was (EMPTY, or GARBLED with its reason);
one whose lines are mostly unsure (mean confidence below :data:`MIN_CONFIDENCE`) too.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from desktop_app.core.types import OcrLine, PageQuality, PageText, TextRun

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pypdfium2
    from rapidocr_onnxruntime import RapidOCR

    Image = npt.NDArray[np.uint8]  # a rendered page: RGB, height × width × 3

logger = logging.getLogger(__name__)

# Pages are rendered at 150 dpi: a finer rendering reads the corpus scans no better and takes
# a third longer or more (bench/ocr.py; docs/evaluation.md, "OCR").
RENDER_DPI = 150
# A gap of more than this many CTC columns (of 8 pixels in a line scaled to 48) between two
# Latin characters is a space: within words gaps reach 5 (after an m), between them 7+.
WORD_GAP = int(os.environ.get("FOLIO_OCR_WORD_GAP", "5"))
# Below this mean line confidence a page's OCR text is not trusted (the page stays flagged).
MIN_CONFIDENCE = 0.6
# Lines below this confidence are dropped (specks, rules and pictures read as text).
MIN_LINE_CONFIDENCE = 0.5
# What a file's message says once OCR has tried its pages (an index run with OCR on reads
# again the scanned and garbled files whose message lacks it: they were read without OCR).
OCR_TRIED = ("OCR found no text", "OCR could not read")
# The pages of a file must not make a worker hold more than this many rendered pixels.
_MAX_PIXELS = 6_000_000

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class RecognisedLine:
    """One line as the recogniser gives it: text, confidence and the pixel box of the
    rendered image (left, top, right, bottom; origin top-left)."""

    text: str
    confidence: float
    box: Box


class LineReader(Protocol):
    """Reads the lines of a page image (an RGB ``numpy`` array, height × width × 3)."""

    def read(self, image: Image) -> list[RecognisedLine]: ...


class RapidOcrReader:
    """The real reader: rapidocr-onnxruntime, loaded on first use, one onnxruntime thread
    (the parse workers run side by side with the embedder on few cores)."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._engine: RapidOCR | None = None

    def _load(self) -> RapidOCR:
        if self._engine is None:
            logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            from rapidocr_onnxruntime import RapidOCR

            # No direction classifier: PDFium renders the page upright (its /Rotate
            # applied), and the classifier turns whole upright lines of RFC 6455 upside
            # down, which then read as nothing (bench/ocr.py).
            self._engine = RapidOCR(
                intra_op_num_threads=self.threads, inter_op_num_threads=1,
                max_side_len=4000, text_score=MIN_LINE_CONFIDENCE, use_cls=False,
            )
        return self._engine

    def read(self, image: Image) -> list[RecognisedLine]:
        engine = self._load()
        recogniser = engine.text_rec
        original = recogniser.postprocess_op

        def spaced(preds: object, return_word_box: bool = False, **kwargs: object) -> list[tuple[str, float]]:
            results = original(preds, True, **kwargs)
            out: list[tuple[str, float]] = []
            for item in results:
                text, confidence = item[0], item[1]
                if len(item) > 2 and item[2] and item[2][1]:
                    chars = [char for word in item[2][1] for char in word]
                    columns = [column for word in item[2][2] for column in word]
                    text = spaced_text(chars, columns)
                out.append((text, confidence))
            return out

        recogniser.postprocess_op = spaced  # the word groups, without rapidocr's word boxes
        try:
            result, _ = engine(image)
        finally:
            recogniser.postprocess_op = original
        lines: list[RecognisedLine] = []
        for box, text, confidence, *_ in result or []:
            xs = [float(point[0]) for point in box]
            ys = [float(point[1]) for point in box]
            lines.append(RecognisedLine(str(text).strip(), float(confidence),
                                        (min(xs), min(ys), max(xs), max(ys))))
        return lines


_READER: LineReader | None = None


def default_reader() -> LineReader:
    """One reader per process (the models load once per parse worker)."""
    global _READER
    if _READER is None:
        _READER = RapidOcrReader()
    return _READER


def is_cjk(char: str) -> bool:
    code = ord(char)
    return 0x3000 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0xFF00 <= code <= 0xFFEF


def spaced_text(chars: Sequence[str], columns: Sequence[int]) -> str:
    """A line's characters with a space where the recogniser left a gap of more than
    :data:`WORD_GAP` columns between two Latin characters (it writes few spaces itself)."""
    out = ""
    previous = -1
    for char, column in zip(chars, columns, strict=True):
        if out and previous >= 0 and column - previous > WORD_GAP and not out[-1].isspace() \
                and not char.isspace() and not (is_cjk(out[-1]) or is_cjk(char)):
            out += " "
        out += char
        previous = column
    return out


def render_page(pdf: pypdfium2.PdfDocument, index: int, dpi: int | None = None) -> tuple[Image, float]:
    """The page as an RGB array and the scale used (pixels per point); ``dpi``: default
    :data:`RENDER_DPI`."""
    page = pdf[index]
    width, height = page.get_size()
    scale = (dpi or RENDER_DPI) / 72.0
    if width * height * scale * scale > _MAX_PIXELS:  # a poster: fewer pixels, not a crash
        scale = (_MAX_PIXELS / max(1.0, width * height)) ** 0.5
    bitmap = page.render(scale=scale)
    image = bitmap.to_numpy()
    if image.ndim == 3 and image.shape[2] == 4:
        image = image[:, :, :3]
    return image[:, :, ::-1].copy() if bitmap.mode == "BGR" else image, scale


def to_page_box(pixel_box: Box, scale: float, width: float, height: float,
                rotation: int) -> Box:
    """A pixel box of the rendered (rotated) page → points on the unrotated page, origin
    bottom-left of the crop box (``width``/``height``: the unrotated crop box)."""
    left, top, right, bottom = (v / scale for v in pixel_box)
    corners = [(left, top), (right, bottom)]
    points = []
    for u, v in corners:
        if rotation == 90:
            points.append((v, u))
        elif rotation == 180:
            points.append((width - u, v))
        elif rotation == 270:
            points.append((width - v, height - u))
        else:
            points.append((u, height - v))
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return (min(xs), min(ys), max(xs), max(ys))


def to_view_box(box: Box, width: float, height: float, rotation: int) -> Box:
    """The inverse of :func:`to_page_box`: a page box → points on the page as viewers
    show it (rotation applied), origin top-left: ``(left, top, right, bottom)``."""
    x0, y0, x1, y1 = box
    points = []
    for x, y in ((x0, y0), (x1, y1)):
        if rotation == 90:
            points.append((y, x))
        elif rotation == 180:
            points.append((width - x, y))
        elif rotation == 270:
            points.append((height - y, width - x))
        else:
            points.append((x, height - y))
    us, vs = [p[0] for p in points], [p[1] for p in points]
    return (min(us), min(vs), max(us), max(vs))


def view_lines(store_lines: Sequence[tuple[int, int, Box]], width: float, height: float,
               rotation: int) -> list[OcrLine]:
    """Stored OCR lines (page boxes) as the viewer draws them (:func:`to_view_box`)."""
    return [OcrLine(start, end, *to_view_box(box, width, height, rotation))
            for start, end, box in store_lines]


def _reading_order(lines: list[RecognisedLine]) -> list[RecognisedLine]:
    """Top to bottom, left to right within a row (lines whose middles are within half a
    line height of each other share a row)."""
    ordered = sorted(lines, key=lambda line: (line.box[1], line.box[0]))
    rows: list[list[RecognisedLine]] = []
    for line in ordered:
        middle = (line.box[1] + line.box[3]) / 2
        if rows:
            last = rows[-1][0]
            last_middle = (last.box[1] + last.box[3]) / 2
            if abs(middle - last_middle) < (last.box[3] - last.box[1]) / 2:
                rows[-1].append(line)
                continue
        rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda item: item.box[0])]


def page_from_lines(page: PageText, lines: Sequence[RecognisedLine], scale: float) -> PageText:
    """``page`` with the OCR text of ``lines`` (one line of text each, in reading order)
    and a text run per line; unchanged when OCR found nothing it trusts."""
    from desktop_app.core.ingest.text_quality import assess_text

    kept = [line for line in lines if line.text and line.confidence >= MIN_LINE_CONFIDENCE]
    if not kept:
        return _unread(page, "OCR could not read it (no line of text found)")
    parts: list[str] = []
    runs: list[TextRun] = []
    offset = 0
    for line in _reading_order(kept):
        x0, y0, x1, y1 = to_page_box(line.box, scale, page.width, page.height, page.rotation)
        runs.append(TextRun(offset, offset + len(line.text), x0, y0, x1, y1, round(y1 - y0, 1)))
        parts.append(line.text)
        offset += len(line.text) + 1
    text = "\n".join(parts)
    confidence = sum(line.confidence * len(line.text) for line in kept) / sum(len(line.text) for line in kept)
    assessment = assess_text(text)
    if confidence < MIN_CONFIDENCE or assessment.quality != PageQuality.OK:
        return _unread(page, f"OCR could not read it (confidence {confidence:.2f})", always=True)
    return dataclasses.replace(page, text=text, quality=PageQuality.OK, runs=tuple(runs),
                               error="", ocr_confidence=round(confidence, 4))


def _unread(page: PageText, why: str, always: bool = False) -> PageText:
    """``page`` as it was, a garbled one saying that OCR tried (an EMPTY page found empty
    says nothing: the document's status speaks for it)."""
    if page.quality != PageQuality.GARBLED and not always:
        return page
    return dataclasses.replace(page, error=f"{page.error}; {why}" if page.error else why)


def ocr_pages(data: bytes, pages: list[PageText], password: str = "",
              reader: LineReader | None = None) -> list[PageText]:
    """``pages`` with every EMPTY or GARBLED page read by OCR where OCR reads it."""
    wanted = [i for i, p in enumerate(pages) if p.quality in (PageQuality.EMPTY, PageQuality.GARBLED)]
    if not wanted:
        return pages
    import pypdfium2 as pdfium

    reader = reader or default_reader()
    pdf = pdfium.PdfDocument(data, password=password or None)
    out = list(pages)
    try:
        for i in wanted:
            try:
                image, scale = render_page(pdf, pages[i].page - 1)
                out[i] = page_from_lines(pages[i], reader.read(image), scale)
            except MemoryError:
                raise
            except Exception as exc:  # noqa: BLE001 - one page OCR cannot read stays flagged
                logger.info("OCR failed on page %d: %r", pages[i].page, exc)
                out[i] = _unread(pages[i], f"OCR could not read it ({type(exc).__name__})")
    finally:
        pdf.close()
    return out
