"""A tiny PDF writer and the sample folder the first-run panel offers. Qt-free.

The writer needs no library: pages are lists of :class:`TextRun` (text at a position in a
font) in three fonts every PDF reader has without embedding them: Helvetica and
Helvetica-Bold (WinAnsi) for Latin text, and Adobe's STSong-Light (a Type0 font with the
``UniGB-UCS2-H`` CMap) for Chinese, which carries a ``/ToUnicode`` map so that text
extraction (pypdf, PDFium) returns the characters drawn. Output is deterministic: writing
the same samples twice gives the same bytes, so re-indexing them is a no-op.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.samples.texts import SAMPLES, Block

logger = logging.getLogger(__name__)

A4 = (595.0, 842.0)
LETTER = (612.0, 792.0)
FONTS = {  # TextRun.font -> its resource name in every page
    "sans": "F1",
    "sans-bold": "F2",
    "cjk": "F3",
    "cjk-bold": "F4",
}
# Helvetica advance widths (1/1000 em) for ASCII 32..126, from the standard AFM
_HELVETICA = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
)  # fmt: skip
_WIDE = {"—": 1000, "“": 333, "”": 333, "‘": 222, "’": 222, "…": 1000, "•": 350}
_CJK_HALF = 500  # STSong-Light's Latin glyphs (CIDs 1-95) are given this width


@dataclass(frozen=True)
class TextRun:
    text: str
    x: float  # points from the left edge
    y: float  # baseline, points from the bottom edge
    size: float
    font: str = "sans"  # "sans" | "sans-bold" | "cjk" | "cjk-bold"


def text_width(text: str, size: float, font: str = "sans") -> float:
    """The advance width of ``text`` in points (bold is approximated 6% wider)."""
    if font.startswith("cjk"):
        units = sum(_CJK_HALF if ord(c) < 128 else 1000 for c in text)
    else:
        units = sum(_HELVETICA[ord(c) - 32] if 32 <= ord(c) < 127 else _WIDE.get(c, 556) for c in text)
        if font == "sans-bold":
            units = int(units * 1.06)
    return units * size / 1000.0


def pdf_string(text: str) -> bytes:
    """A WinAnsi literal string (characters it cannot encode become ``?``)."""
    raw = text.encode("cp1252", errors="replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _cjk_string(text: str) -> bytes:
    codes = b"".join(ord(c).to_bytes(2, "big") if ord(c) <= 0xFFFF else b"\x30\x1c" for c in text)
    return b"<" + codes.hex().upper().encode("ascii") + b">"


def run_content(runs: Sequence[TextRun]) -> bytes:
    """A content stream drawing ``runs`` (one BT/ET block each)."""
    ops: list[bytes] = []
    for run in runs:
        text = _cjk_string(run.text) if run.font.startswith("cjk") else pdf_string(run.text)
        ops.append(b"BT /%s %g Tf %g %g Td %s Tj ET" % (FONTS[run.font].encode(), run.size, run.x, run.y, text))
    return b"\n".join(ops) + b"\n" if ops else b""


def _to_unicode(used_high_bytes: Sequence[int]) -> bytes:
    ranges = [b"<%02X00> <%02XFF> <%02X00>" % (h, h, h) for h in sorted(set(used_high_bytes))] or [b"<0000> <00FF> <0000>"]
    blocks = [
        b"%d beginbfrange\n" % len(chunk) + b"\n".join(chunk) + b"\nendbfrange"
        for chunk in (ranges[i : i + 100] for i in range(0, len(ranges), 100))
    ]
    return (
        b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        b"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        b"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + b"\n".join(blocks)
        + b"\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    )


def build_pdf(
    contents: Sequence[bytes],
    *,
    title: str | None = None,
    page_size: tuple[float, float] = LETTER,
    page_labels: Sequence[str] | None = None,
    rotate: int | Sequence[int] | None = None,
    crop_box: tuple[float, float, float, float] | None = None,
    cjk_text: str = "",
) -> bytes:
    """The bytes of a PDF with one page per content stream (the fonts of :data:`FONTS`).

    ``page_labels`` gives each page its printed label; ``rotate`` sets /Rotate for every
    page (an int) or per page; ``crop_box`` (left, bottom, right, top) every /CropBox;
    ``cjk_text`` is the Chinese text drawn (it sizes the ToUnicode map).
    """
    count = len(contents)
    rotations = [rotate] * count if isinstance(rotate, int) else list(rotate or [0] * count)
    objects: dict[int, bytes] = {}
    catalog = b"<< /Type /Catalog /Pages 2 0 R"
    if page_labels is not None:
        nums = b" ".join(b"%d << /P %s >>" % (i, pdf_string(label)) for i, label in enumerate(page_labels))
        catalog += b" /PageLabels << /Nums [" + nums + b"] >>"
    objects[1] = catalog + b" >>"
    winansi = b"/Encoding /WinAnsiEncoding >>"
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica " + winansi
    objects[4] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold " + winansi
    cmap = _to_unicode([ord(c) >> 8 for c in cjk_text if ord(c) <= 0xFFFF])
    objects[5] = b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"endstream"
    # STSong-Light twice: PDFium picks the substitute's weight from /StemV (50 regular, 140 bold)
    for first, stem in ((6, 50), (9, 140)):
        objects[first] = (
            b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H "
            b"/DescendantFonts [%d 0 R] /ToUnicode 5 0 R >>" % (first + 1)
        )
        objects[first + 1] = (
            b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 2 >> "
            b"/FontDescriptor %d 0 R /DW 1000 /W [1 95 %d] >>" % (first + 2, _CJK_HALF)
        )
        objects[first + 2] = (
            b"<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 "
            b"/FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 "
            b"/CapHeight 880 /StemV %d >>" % stem
        )
    first_page = 12  # each page takes two objects: the page and its content stream
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(count))
    objects[2] = b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count
    fonts = b"/Font << /F1 3 0 R /F2 4 0 R /F3 6 0 R /F4 9 0 R >>"
    for index, content in enumerate(contents):
        page_id = first_page + 2 * index
        page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] " % page_size
        page += b"/Resources << " + fonts + b" >> /Contents %d 0 R" % (page_id + 1)
        if rotations[index]:
            page += b" /Rotate %d" % rotations[index]
        if crop_box is not None:
            page += b" /CropBox [%g %g %g %g]" % crop_box
        objects[page_id] = page + b" >>"
        objects[page_id + 1] = b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream"
    info_id = first_page + 2 * count
    if title is not None:
        utf16 = b"\xfe\xff" + title.encode("utf-16-be")
        objects[info_id] = b"<< /Title <" + utf16.hex().upper().encode("ascii") + b"> >>"
    return _serialise(objects, info_id if title is not None else None)


def _serialise(objects: dict[int, bytes], info_id: int | None) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 65535 f \n"
    trailer = b"<< /Size %d /Root 1 0 R" % size
    if info_id is not None:
        trailer += b" /Info %d 0 R" % info_id
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


# --------------------------------------------------------------------------- layout

MARGIN = 72.0
BODY, HEADING, TITLE = 11.0, 13.0, 18.0
_NO_LINE_START = set("，。；：、）」』！？,.;:)")
_CJK_UNITS = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]*|.", re.DOTALL)


def wrap(text: str, width: float, size: float, font: str) -> list[str]:
    """Break ``text`` into lines no wider than ``width``: at spaces for Latin text, between
    any two characters for Chinese (never before closing punctuation)."""
    lines: list[str] = []
    if font.startswith("cjk"):
        line = ""
        for unit in _CJK_UNITS.findall(text):  # a Latin word or number stays whole
            if line and text_width(line + unit, size, font) > width and unit[0] not in _NO_LINE_START:
                lines.append(line)
                line = ""
            line += unit
        return [*lines, line] if line else lines
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if line and text_width(candidate, size, font) > width:
            lines.append(line)
            candidate = word
        line = candidate
    return [*lines, line] if line else lines


def layout(blocks: Sequence[Block], cjk: bool, page_size: tuple[float, float] = A4) -> list[list[TextRun]]:
    """Pages of runs: a title, headings and wrapped paragraphs, a page number at the foot."""
    width, height = page_size
    body_font = "cjk" if cjk else "sans"
    bold_font = "cjk-bold" if cjk else "sans-bold"
    pages: list[list[TextRun]] = [[]]
    y = height - MARGIN
    for kind, text in blocks:
        size, font, before, after = {
            "title": (TITLE, bold_font, 0.0, 10.0),
            "heading": (HEADING, bold_font, 8.0, 3.0),
            "para": (BODY, body_font, 0.0, 6.0),
        }[kind]
        lines = wrap(text, width - 2 * MARGIN, size, font)
        leading = size * 1.4
        if y - before - leading * min(len(lines), 3 if kind == "heading" else 2) < MARGIN:
            pages.append([])
            y = height - MARGIN
        elif pages[-1]:
            y -= before
        for line in lines:
            if y - leading < MARGIN:
                pages.append([])
                y = height - MARGIN
            y -= leading
            pages[-1].append(TextRun(line, MARGIN, y, size, font))
        y -= after
    for number, runs in enumerate(pages, start=1):
        label = f"— {number} —" if not cjk else f"第 {number} 页"
        font = "cjk" if cjk else "sans"
        runs.append(TextRun(label, (width - text_width(label, 9, font)) / 2, MARGIN / 2, 9, font))
    return pages


def write_document(path: Path, title: str, blocks: Sequence[Block], cjk: bool) -> Path:
    pages = layout(blocks, cjk)
    drawn = "".join(run.text for page in pages for run in page if run.font.startswith("cjk"))
    data = build_pdf([run_content(page) for page in pages], title=title, page_size=A4, cjk_text=drawn)
    if not path.exists() or path.read_bytes() != data:  # unchanged bytes keep the mtime
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path


def write_samples(folder: str | Path) -> list[Path]:
    """Write the sample PDFs (English and Chinese) into ``folder``; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = [write_document(folder / name, title, blocks, cjk) for name, title, cjk, blocks in SAMPLES]
    logger.info("wrote %d sample PDFs to %s", len(written), folder)
    return written
