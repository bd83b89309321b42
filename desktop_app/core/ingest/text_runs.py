"""Page text and text-run boxes from pypdf's extraction callbacks. Qt-free.

pypdf's plain extraction reports each piece of text it appends through ``visitor_text``
(the pieces concatenate to exactly what ``extract_text()`` returns), but it does not
advance the text matrix as glyphs are shown, so it cannot say where a piece ends.
:class:`PageCollector` therefore also watches the operators (``visitor_operand_before``)
and advances its own pen over every glyph with the font's widths, character and word
spacing, horizontal scaling and TJ adjustments, as a PDF renderer does. Each piece of
text becomes one :class:`TextRun` whose box is the union of the glyphs shown for it.

Boxes are in points with the origin at the bottom-left of the page as viewers show it
(the crop box) on the unrotated page; glyph height spans the font's descent to ascent.
Text inside form XObjects is placed as pypdf reports it (without the form's matrix).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from desktop_app.core.types import TextRun

if TYPE_CHECKING:
    from pypdf.generic import DictionaryObject, PdfObject

    # What pypdf's extract_text hands its visitors: the operator's operands (numbers,
    # names, strings, arrays) and the current and text matrices (six numbers each).
    Operands = list[PdfObject]
    Matrix = list[float]

logger = logging.getLogger(__name__)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_DEFAULT_WIDTH = 500.0  # glyph units (1/1000 em) when a font tells nothing
_SHOW = frozenset({b"Tj", b"TJ"})
_MOVE = frozenset({b"BT", b"Td", b"TD", b"Tm", b"T*"})
_STATE = frozenset({b"Tf", b"Tc", b"Tw", b"Tz", b"q", b"Q"})


def clean_text(text: str) -> str:
    """What Folio stores for extracted text: control characters become a space and lone
    surrogates U+FFFD; nothing else changes (no NFKC: "ﬁ" stays, as viewers show it)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub(" ", text)
    return _SURROGATE.sub("\ufffd", text)


def _mult(m: Sequence[float], n: Sequence[float]) -> list[float]:
    return [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]


@dataclass
class FontMetrics:
    widths: dict[str, float] = field(default_factory=dict)  # raw code (as a char) -> units
    default_width: float = _DEFAULT_WIDTH
    ascent: float = 800.0
    descent: float = -200.0
    two_byte: bool = False  # Identity-H/V: each code is two bytes (a CID)
    codec: str = ""  # other CID fonts: how pypdf decodes the bytes
    unmapped: bool = False  # CID font without a Unicode map: its text is CIDs, not characters

    def codes(self, data: bytes) -> str:
        """The character codes in ``data``, one character each (as pypdf keys widths)."""
        if self.two_byte:
            return data[: len(data) // 2 * 2].decode("utf-16-be", "surrogatepass")
        if self.codec:
            return data.decode(self.codec, "replace")
        return data.decode("latin-1")


def _is_unmapped(font_dict: DictionaryObject) -> bool:
    if font_dict.get("/Subtype") != "/Type0" or "/ToUnicode" in font_dict:
        return False
    encoding = font_dict.get("/Encoding")
    return not isinstance(encoding, str) or encoding in ("/Identity-H", "/Identity-V")


def _load_metrics(font_dict: DictionaryObject) -> FontMetrics:
    # pypdf's Font parses /Widths, /W, /DW and descriptors; it is not public API, so a
    # failure here only costs box precision (the caller falls back to defaults).
    from pypdf.generic._font import Font

    font = Font.from_font_resource(font_dict)
    widths = {k: float(v) for k, v in font.character_widths.items() if k != "default" and v}
    default = float(font.character_widths.get("default") or 0)
    metrics = FontMetrics(widths=widths, unmapped=_is_unmapped(font_dict))
    if isinstance(font.encoding, str):  # a CID font: the declared default width is right
        metrics.default_width = default or 1000.0
        metrics.two_byte = font.encoding == "utf-16-be"
        metrics.codec = "" if metrics.two_byte else font.encoding
    else:
        metrics.default_width = sum(widths.values()) / len(widths) if widths else (default or 500)
    descriptor = font.font_descriptor
    ascent, descent = float(descriptor.ascent or 0), float(descriptor.descent or 0)
    if 300 <= ascent <= 1500:
        metrics.ascent = ascent
    if -600 <= descent < 0:
        metrics.descent = descent
    return metrics


class FontCache:
    """Metrics per font dictionary, shared by the pages of one document."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, int] | int, FontMetrics] = {}  # by object number, or id()

    def get(self, font_dict: DictionaryObject | None) -> FontMetrics:
        if font_dict is None:
            return FontMetrics()
        ref = getattr(font_dict, "indirect_reference", None)
        key = (ref.idnum, ref.generation) if ref is not None else id(font_dict)
        metrics = self._cache.get(key)
        if metrics is None:
            try:
                metrics = _load_metrics(font_dict.get_object())
            except Exception as exc:  # noqa: BLE001 - a broken font must not lose the page
                logger.debug("font metrics unavailable: %r", exc)
                metrics = FontMetrics()
            self._cache[key] = metrics
        return metrics


@dataclass
class _TextState:
    font: FontMetrics = field(default_factory=FontMetrics)
    size: float = 12.0
    char_spacing: float = 0.0
    word_spacing: float = 0.0
    scale: float = 1.0


class PageCollector:
    """Pass :meth:`on_text`, :meth:`on_operator` and :meth:`after_operator` to
    ``page.extract_text`` as ``visitor_text``, ``visitor_operand_before`` and
    ``visitor_operand_after``."""

    def __init__(self, fonts: FontCache, font_resources: DictionaryObject | None, origin: tuple[float, float]) -> None:
        self.fonts = fonts
        self.font_resources = font_resources
        self.origin = origin
        self.raw: list[str] = []
        self.parts: list[str] = []
        self.length = 0
        self.runs: list[TextRun] = []
        self.unmapped_chars = 0
        self.state = _TextState()
        self._stack: list[_TextState] = []
        self._pen = 0.0  # text-space advance since the last positioning operator
        self._box: list[float] | None = None  # glyphs shown since the last piece of text
        self._size = 0.0  # the largest font size those glyphs were drawn at (points)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    # ---------------------------------------------------------------- operators

    def on_operator(self, operator: bytes, operands: Operands, cm: Matrix, tm: Matrix) -> None:
        """``visitor_operand_before``: glyphs shown by Tj and TJ belong to the text pypdf
        holds when it processes them (it may flush that text while processing)."""
        if operator in _MOVE:
            self._pen = 0.0
            return
        if operator not in _SHOW and operator not in _STATE:
            return
        try:
            self._operator(operator, operands, cm, tm)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError):
            pass  # a malformed operator: pypdf copes; the box only gets less precise

    def after_operator(self, operator: bytes, operands: Operands, cm: Matrix, tm: Matrix) -> None:
        """``visitor_operand_after``: ' and " first move to the next line, and pypdf
        flushes the previous line then, so their glyphs are counted afterwards."""
        if operator not in (b"'", b'"'):
            return
        try:
            if operator == b'"':
                self.state.word_spacing = float(operands[0])
                self.state.char_spacing = float(operands[1])
            self._pen = 0.0
            self._show(operands[-1], cm, tm)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError):
            pass

    def _operator(self, op: bytes, operands: Operands, cm: Matrix, tm: Matrix) -> None:
        state = self.state
        if op in _SHOW:
            self._show(operands[0], cm, tm)
        elif op == b"Tf":
            font_dict = self.font_resources.get(operands[0]) if self.font_resources else None
            state.font = self.fonts.get(font_dict)
            state.size = float(operands[1])
        elif op == b"Tc":
            state.char_spacing = float(operands[0])
        elif op == b"Tw":
            state.word_spacing = float(operands[0])
        elif op == b"Tz":
            state.scale = float(operands[0]) / 100
        elif op == b"q":
            self._stack.append(_TextState(**vars(state)))
        elif op == b"Q" and self._stack:
            self.state = self._stack.pop()

    def _advance(self, codes: str) -> float:
        """How far the pen moves over ``codes`` (PDF 32000-1, 9.4.4), in text space."""
        state, font = self.state, self.state.font
        widths, default = font.widths, font.default_width
        advance = sum(widths.get(code, default) for code in codes) * state.size / 1000
        advance += state.char_spacing * len(codes)
        if not font.two_byte:
            advance += state.word_spacing * codes.count(" ")
        return advance * state.scale

    def _show(self, items: PdfObject, cm: Matrix, tm: Matrix) -> None:
        state = self.state
        font = state.font
        spaces = "" if font.two_byte else " "
        first = last = None  # pen positions around the glyphs that are not spaces
        for item in items if isinstance(items, list) else [items]:
            if isinstance(item, bytes | str):
                data = getattr(item, "original_bytes", item)
                if isinstance(data, str):
                    data = data.encode("latin-1", "replace")
                codes = font.codes(data)
                body = codes.rstrip(spaces) if spaces else codes
                if body:
                    lead = len(body) - len(body.lstrip(spaces)) if spaces else 0
                    if first is None:
                        first = self._pen + (self._advance(codes[:lead]) if lead else 0.0)
                    last = self._pen + self._advance(body)
                self._pen += self._advance(codes)
            elif isinstance(item, int | float):
                self._pen -= float(item) / 1000 * state.size * state.scale
        if first is None or last is None:
            return
        matrix = _mult([float(v) for v in tm], [float(v) for v in cm])
        box = _box(matrix, first, last, font.descent * state.size / 1000, font.ascent * state.size / 1000)
        self._size = max(self._size, _drawn_size(matrix, state.size))
        if self._box is None:
            self._box = box
        else:
            self._box = [min(self._box[0], box[0]), min(self._box[1], box[1]),
                         max(self._box[2], box[2]), max(self._box[3], box[3])]

    # ---------------------------------------------------------------- text

    def on_text(self, text: str, cm: Matrix, tm: Matrix, font_dict: DictionaryObject | None,
                font_size: float) -> None:
        if not isinstance(text, str) or not text:
            return
        self.raw.append(text)
        clean = clean_text(text)
        start = self.length
        self.parts.append(clean)
        self.length += len(clean)
        core = clean.strip()
        box, self._box = self._box, None
        size, self._size = self._size, 0.0
        if not core:
            return
        metrics = self.fonts.get(font_dict)
        if metrics.unmapped:
            self.unmapped_chars += sum(1 for char in core if not char.isspace())
        if box is None:  # no glyphs seen (e.g. inside a form): estimate from the font
            try:
                font_points = float(font_size)
                advance = sum(metrics.default_width for _ in core) * font_points / 1000
                matrix = _mult([float(v) for v in tm], [float(v) for v in cm])
                box = _box(matrix, 0.0, advance, metrics.descent * font_points / 1000,
                           metrics.ascent * font_points / 1000)
                size = _drawn_size(matrix, font_points)
            except (TypeError, ValueError, IndexError):
                return
        lead = len(clean) - len(clean.lstrip())
        x0, y0 = box[0] - self.origin[0], box[1] - self.origin[1]
        x1, y1 = box[2] - self.origin[0], box[3] - self.origin[1]
        self.runs.append(TextRun(start + lead, start + lead + len(core),
                                 round(x0, 2), round(y0, 2), round(x1, 2), round(y1, 2),
                                 round(size, 2)))


def _drawn_size(matrix: Sequence[float], size: float) -> float:
    """The font size on the page: ``size`` scaled by the matrix's vertical axis."""
    return float(abs(size) * (matrix[2] ** 2 + matrix[3] ** 2) ** 0.5)


def _box(matrix: Sequence[float], x_start: float, x_end: float, low: float,
         high: float) -> list[float]:
    """The user-space bounding box of a text-space rectangle under ``matrix``."""
    xs, ys = [], []
    for x, y in ((x_start, low), (x_end, low), (x_start, high), (x_end, high)):
        xs.append(matrix[0] * x + matrix[2] * y + matrix[4])
        ys.append(matrix[1] * x + matrix[3] * y + matrix[5])
    return [min(xs), min(ys), max(xs), max(ys)]
