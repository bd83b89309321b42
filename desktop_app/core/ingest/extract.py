"""Extract one PDF: per-page text, label, page size, rotation and text runs. Qt-free.

pypdf's plain extraction (content-stream order) gives each page's text, and
:mod:`desktop_app.core.ingest.text_runs` turns its callbacks into runs with boxes. Text is
stored as extracted except for control characters (see ``clean_text``), so offsets
into it hold. ``width``/``height`` are the crop box (the media box unless the PDF sets
one), the page as viewers show it, and run boxes are measured from its corner.

Every page is scored by :mod:`desktop_app.core.ingest.text_quality`; the document status
follows from the pages. The title is chosen by :mod:`desktop_app.core.ingest.titles` from
the metadata, the first page's title line and the file name. Encrypted files are tried with the empty password, then with
each password given. A bad file never raises: it becomes a status with a message.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from desktop_app.core.ids import sha256_bytes
from desktop_app.core.ingest.text_quality import TextAssessment, assess_text
from desktop_app.core.ingest.text_runs import FontCache, PageCollector, clean_text
from desktop_app.core.ingest.titles import choose_title
from desktop_app.core.types import DocStatus, ExtractedDocument, PageQuality, PageText

if TYPE_CHECKING:
    from pypdf import PageObject, PdfReader
    from pypdf.generic import DictionaryObject

logger = logging.getLogger(__name__)

# A document whose garbled pages outnumber its readable ones this much, and whose
# readable pages all carry text from the same broken fonts, is garbled as a whole.
_CONTAMINATION_RATIO = 3
_NO_MEMORY = "Cannot read this PDF: it needs more memory than Folio allows a file."


class _FileFacts(TypedDict):
    """What every ExtractedDocument of a file carries, whatever its status."""

    path: str
    doc_id: str
    size: int
    mtime: float
    title: str


def _page_geometry(page: PageObject) -> tuple[float, float, float, float, int]:
    """Left, bottom, width and height of the page as viewers show it (the crop box, which
    is the media box unless set), and its rotation."""
    try:
        box = page.cropbox
        left, bottom = min(float(box.left), float(box.right)), min(float(box.bottom), float(box.top))
        width, height = abs(float(box.width)), abs(float(box.height))
    except Exception:  # noqa: BLE001 - a missing MediaBox gets US Letter, as readers do
        left, bottom, width, height = 0.0, 0.0, 612.0, 792.0
    try:
        rotation = int(page.rotation) % 360
    except Exception:  # noqa: BLE001
        rotation = 0
    return left, bottom, width, height, rotation


def _font_resources(page: PageObject) -> DictionaryObject | None:
    try:
        resources = page.get_inherited("/Resources", None)
        fonts = resources.get_object().get("/Font") if resources is not None else None
        return fonts.get_object() if fonts is not None else None
    except Exception:  # noqa: BLE001 - without them, boxes use estimated widths
        return None


def _extract_page(
    reader: PdfReader, index: int, label: str, fonts: FontCache
) -> tuple[PageText, TextAssessment | None]:
    number = index + 1
    try:
        page = reader.pages[index]
        left, bottom, width, height, rotation = _page_geometry(page)
        collector = PageCollector(fonts, _font_resources(page), (left, bottom))
        page.extract_text(visitor_text=collector.on_text,
                          visitor_operand_before=collector.on_operator,
                          visitor_operand_after=collector.after_operator)
    except Exception as exc:  # noqa: BLE001 - one broken page must not lose the document
        logger.info("page %d failed: %r", number, exc)
        reason = "needs more memory than Folio allows a file" if isinstance(exc, MemoryError) \
            else f"{type(exc).__name__}: {exc}"[:300]
        return PageText(number, label, 612.0, 792.0, 0, "", PageQuality.ERROR, (), reason), None
    assessment = assess_text("".join(collector.raw), collector.unmapped_chars)
    page_text = PageText(
        page=number,
        label=label,
        width=width,
        height=height,
        rotation=rotation,
        text=collector.text,
        quality=assessment.quality,
        runs=tuple(collector.runs),
        error=f"garbled text: {assessment.reason}" if assessment.reason else "",
    )
    return page_text, assessment


# --------------------------------------------------------------------------- documents


def page_ranges(pages: Sequence[int]) -> str:
    """``[2, 3, 4, 9]`` -> ``"2–4, 9"``."""
    ordered = sorted(set(pages))
    parts: list[str] = []
    first = 0
    while first < len(ordered):
        last = first
        while last + 1 < len(ordered) and ordered[last + 1] == ordered[last] + 1:
            last += 1
        low, high = ordered[first], ordered[last]
        parts.append(str(low) if low == high else f"{low}–{high}")
        first = last + 1
    return ", ".join(parts)


def _contaminate(pages: list[PageText], assessments: list[TextAssessment | None]) -> list[PageText]:
    """Mark readable pages garbled when broken fonts garbled most of the document and
    drew some of their text too (e.g. the index of a book whose Chinese never maps)."""
    ok = {i for i, p in enumerate(pages) if p.quality == PageQuality.OK}
    garbled = sum(1 for p in pages if p.quality == PageQuality.GARBLED)
    if not ok or garbled < _CONTAMINATION_RATIO * len(ok):
        return pages
    if not all((a := assessments[i]) is not None and a.suspect_chars > 0 for i in ok):
        return pages
    note = "garbled text: the fonts that garble the other pages drew part of it"
    return [
        dataclasses.replace(p, quality=PageQuality.GARBLED, error=note) if i in ok else p
        for i, p in enumerate(pages)
    ]


def _document_status(pages: list[PageText], ocr_tried: bool = False) -> tuple[DocStatus, str]:
    ok = [p for p in pages if p.quality == PageQuality.OK]
    garbled = [p for p in pages if p.quality == PageQuality.GARBLED]
    errors = [p for p in pages if p.quality == PageQuality.ERROR]
    empty = [p for p in pages if p.quality == PageQuality.EMPTY]
    reasons = Counter(p.error.removeprefix("garbled text: ") for p in garbled)
    main_reason = reasons.most_common(1)[0][0] if reasons else ""
    if ok:
        bad = garbled + errors
        if not bad:
            return DocStatus.INDEXED, ""
        why = "; ".join([r for r, _ in reasons.most_common(2)] + [p.error for p in errors[:1]])
        plural = "s" if len(bad) > 1 else ""
        return DocStatus.INDEXED_PARTIALLY, (
            f"Page{plural} {page_ranges([p.page for p in bad])} could not be read ({why}); "
            "the other pages are indexed."
        )
    if garbled and len(garbled) >= len(errors) and 4 * len(garbled) >= len(empty):
        return DocStatus.GARBLED_TEXT, (
            f"The text of this PDF is garbled ({main_reason}), so it was not indexed: "
            "its fonts do not say which characters they draw."
        )
    if errors:
        return DocStatus.UNREADABLE, (
            f"Cannot read the pages of this PDF (page {errors[0].page}: {errors[0].error})."
        )
    if ocr_tried:
        return DocStatus.NO_TEXT_LAYER, (
            "This PDF has no text layer, and OCR found no text it could read on its pages "
            "(pictures, handwriting, or a scan too faint or too small)."
        )
    return DocStatus.NO_TEXT_LAYER, (
        "This PDF has no text layer: its pages are images (a scan?). "
        "Folio did not read them because OCR is switched off (Settings, or folio index --ocr)."
    )


def _read_by_ocr(data: bytes, pages: list[PageText], password: str,
                 on_ocr: Callable[[int], None]) -> list[PageText]:
    """The pages without a text layer and the garbled ones, read by OCR where it can."""
    wanted = sum(1 for p in pages if p.quality in (PageQuality.EMPTY, PageQuality.GARBLED))
    if not wanted:
        return pages
    on_ocr(wanted)
    from desktop_app.core.ingest.ocr import ocr_pages

    try:
        return ocr_pages(data, pages, password)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - no OCR (a broken install): the pages stay flagged
        logger.warning("OCR is not available: %r", exc)
        return pages


def _metadata_title(reader: PdfReader) -> str:
    """The /Title of the document information, as text ("" when absent or unreadable)."""
    try:
        metadata = reader.metadata
        raw = metadata.get("/Title") if metadata is not None else None
        return clean_text(str(raw)).strip() if raw else ""
    except Exception:  # noqa: BLE001 - unreadable metadata is common and harmless
        return ""


def _open(data: bytes, passwords: Sequence[str]) -> tuple[PdfReader | None, str, str]:
    """A reader and the password that opened it, or ``(None, message, "")`` when no
    password opens the file."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    if not reader.is_encrypted:
        return reader, "", ""
    from pypdf import PasswordType

    for password in ("", *passwords):
        if reader.decrypt(password) != PasswordType.NOT_DECRYPTED:
            return reader, "", password
    if passwords:
        count = len(passwords)
        return None, (
            f"This PDF is protected by a password, and none of the {count} "
            f"password{'s' if count > 1 else ''} given opens it."
        ), ""
    return None, "This PDF is protected by a password. Give its password to index it.", ""


def extract_document(path: str, passwords: Sequence[str] = (), *,
                     title_only: bool = False, ocr: bool = False,
                     on_ocr: Callable[[int], None] | None = None,
                     on_pages: Callable[[int], None] | None = None) -> ExtractedDocument:
    """Read the PDF at ``path``; never raises for a bad file (the status says what went wrong).

    ``title_only``: read the metadata and the first page only, for the title (the result
    has the title and the document's status, no pages). ``ocr``: read the pages without a
    text layer and the garbled ones with OCR (:mod:`desktop_app.core.ingest.ocr`);
    ``on_ocr(n)`` is told how many pages that is before it starts; ``on_pages(n)`` the
    page count before the pages are read."""
    file = Path(path)
    base: _FileFacts = {"path": str(path), "doc_id": "", "size": 0, "mtime": 0.0, "title": file.stem}
    try:
        stat = os.stat(file)
        data = file.read_bytes()
    except OSError as exc:
        return ExtractedDocument(**base, status=DocStatus.UNREADABLE,
                                 error=f"Cannot open the file: {exc.strerror or exc}.")
    except MemoryError:
        return ExtractedDocument(**base, status=DocStatus.UNREADABLE, error=_NO_MEMORY)
    base.update({"doc_id": sha256_bytes(data), "size": len(data), "mtime": stat.st_mtime})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _extract(data, file, passwords, base, title_only,
                            (on_ocr or (lambda _n: None)) if ocr else None, on_pages)
    except MemoryError:
        return ExtractedDocument(**base, status=DocStatus.UNREADABLE, error=_NO_MEMORY)
    except Exception as exc:  # noqa: BLE001 - a bad file becomes a status, never a crash
        logger.info("cannot read %s: %r", path, exc)
        reason = f"{type(exc).__name__}: {exc}"[:300]
        return ExtractedDocument(**base, status=DocStatus.UNREADABLE,
                                 error=f"Cannot read this PDF ({reason}).")


def _extract(data: bytes, file: Path, passwords: Sequence[str],
             base: _FileFacts, title_only: bool = False,
             on_ocr: Callable[[int], None] | None = None,
             on_pages: Callable[[int], None] | None = None) -> ExtractedDocument:
    reader, message, password = _open(data, passwords)
    if reader is None:
        return ExtractedDocument(**base, status=DocStatus.NEEDS_PASSWORD, error=message)
    count = len(reader.pages)
    metadata = _metadata_title(reader)
    base["title"] = choose_title(metadata, None, file.stem)
    if count == 0:
        return ExtractedDocument(**base, status=DocStatus.UNREADABLE,
                                 error="Cannot read this PDF: it has no pages.")
    try:
        labels = list(reader.page_labels)
    except Exception:  # noqa: BLE001 - broken /PageLabels: fall back to numbers
        labels = []
    if len(labels) != count:
        labels = [str(i + 1) for i in range(count)]
    if on_pages is not None and not title_only:
        on_pages(count)
    fonts = FontCache()
    pages: list[PageText] = []
    assessments: list[TextAssessment | None] = []
    for index in range(1 if title_only else count):
        page, assessment = _extract_page(reader, index, labels[index] or str(index + 1), fonts)
        pages.append(page)
        assessments.append(assessment)
    base["title"] = choose_title(metadata, pages[0], file.stem)
    if title_only:
        return ExtractedDocument(**base, status=DocStatus.INDEXED, page_count=count)
    pages = _contaminate(pages, assessments)
    if on_ocr is not None:
        pages = _read_by_ocr(data, pages, password, on_ocr)
        if pages[0].ocr:  # the title line of a scanned first page, now that it has text
            base["title"] = choose_title(metadata, pages[0], file.stem)
    status, error = _document_status(pages, on_ocr is not None)
    return ExtractedDocument(**base, status=status, error=error, page_count=count,
                             pages=tuple(pages))
