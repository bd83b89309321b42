"""A dependency-free minimal PDF writer for test fixtures with known text on known pages.

Every page is US Letter (612 x 792 pt) and shows its lines in Helvetica (one of the
standard 14 fonts, WinAnsiEncoding) at ``FONT_SIZE`` pt: line ``i`` starts at
``line_origin(i)``, ``LEADING`` pt below the previous one. Characters WinAnsi cannot
encode become ``?``, so use it for English fixtures (Chinese ones come from ../shared).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

PAGE_WIDTH = 612.0
PAGE_HEIGHT = 792.0
FONT_SIZE = 12.0
LEADING = 16.0
LEFT = 72.0
TOP = 720.0


def line_origin(index: int) -> tuple[float, float]:
    """The (x, baseline y) where line ``index`` (0-based) of a page starts, in points."""
    return LEFT, TOP - index * LEADING


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    escaped = raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return b"(" + escaped + b")"


def _content(lines: Sequence[str]) -> bytes:
    if not lines:
        return b""
    ops = [b"BT", b"/F1 %g Tf" % FONT_SIZE, b"%g %g Td" % (LEFT, TOP), b"%g TL" % LEADING]
    for index, line in enumerate(lines):
        if index:
            ops.append(b"T*")
        ops.append(_pdf_string(line) + b" Tj")
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
    count = len(pages)
    rotations = [rotate] * count if isinstance(rotate, int) else list(rotate or [0] * count)
    font_id = 3
    first_page_id = 4  # each page takes two objects: the page and its content stream
    info_id = first_page_id + 2 * count
    objects: dict[int, bytes] = {}
    kids = b" ".join(b"%d 0 R" % (first_page_id + 2 * i) for i in range(count))
    catalog = b"<< /Type /Catalog /Pages 2 0 R"
    if page_labels is not None:
        nums = b" ".join(
            b"%d << /P %s >>" % (i, _pdf_string(label)) for i, label in enumerate(page_labels)
        )
        catalog += b" /PageLabels << /Nums [" + nums + b"] >>"
    objects[1] = catalog + b" >>"
    objects[2] = b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count
    objects[font_id] = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    for index, lines in enumerate(pages):
        page_id = first_page_id + 2 * index
        content = _content(lines)
        page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] " % (
            PAGE_WIDTH,
            PAGE_HEIGHT,
        ) + b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R" % (font_id, page_id + 1)
        if rotations[index]:
            page += b" /Rotate %d" % rotations[index]
        if crop_box is not None:
            page += b" /CropBox [%g %g %g %g]" % crop_box
        objects[page_id] = page + b" >>"
        objects[page_id + 1] = b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream"
    if title is not None:
        objects[info_id] = b"<< /Title " + _pdf_string(title) + b" >>"

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        if number in offsets:
            out += b"%010d 00000 n \n" % offsets[number]
        else:
            out += b"0000000000 65535 f \n"
    trailer = b"<< /Size %d /Root 1 0 R" % size
    if title is not None:
        trailer += b" /Info %d 0 R" % info_id
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref_at
    path.write_bytes(bytes(out))
    return path
