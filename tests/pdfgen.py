"""Minimal PDFs for test fixtures with known text on known pages (no dependencies).

Every page is US Letter (612 x 792 pt) and shows its lines in Helvetica (one of the
standard 14 fonts, WinAnsiEncoding) at ``FONT_SIZE`` pt: line ``i`` starts at
``line_origin(i)``, ``LEADING`` pt below the previous one. Characters WinAnsi cannot
encode become ``?``, so use it for English fixtures (Chinese ones come from ../shared, or
from ``desktop_app.core.samples.pdfs``, whose writer this module uses).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from desktop_app.core.samples.pdfs import FONTS, LETTER, build_pdf, pdf_string

PAGE_WIDTH, PAGE_HEIGHT = LETTER
FONT_SIZE = 12.0
LEADING = 16.0
LEFT = 72.0
TOP = 720.0


def line_origin(index: int) -> tuple[float, float]:
    """The (x, baseline y) where line ``index`` (0-based) of a page starts, in points."""
    return LEFT, TOP - index * LEADING


def _content(lines: Sequence[str]) -> bytes:
    if not lines:
        return b""
    font = FONTS["sans"].encode()
    ops = [b"BT", b"/%s %g Tf" % (font, FONT_SIZE), b"%g %g Td" % (LEFT, TOP), b"%g TL" % LEADING]
    for index, line in enumerate(lines):
        if index:
            ops.append(b"T*")
        ops.append(pdf_string(line) + b" Tj")
    ops.append(b"ET")
    return b"\n".join(ops) + b"\n"


def write_pdf(
    path: str | Path,
    pages: list[list[str]],
    title: str | None = None,
    page_labels: Sequence[str] | None = None,
    rotate: int | Sequence[int] | None = None,
    crop_box: tuple[float, float, float, float] | None = None,
) -> Path:
    """Write ``pages`` (lines per page) to ``path`` and return it.

    ``page_labels`` gives each page its printed label (one /PageLabels range per page);
    ``rotate`` sets /Rotate for every page (an int) or per page (a sequence);
    ``crop_box`` (left, bottom, right, top) sets every page's /CropBox.
    """
    path = Path(path)
    data = build_pdf(
        [_content(lines) for lines in pages],
        title=title,
        page_size=LETTER,
        page_labels=page_labels,
        rotate=rotate,
        crop_box=crop_box,
    )
    path.write_bytes(data)
    return path
