"""A reflowable document as parts and blocks. Qt-free, deterministic.

Readers hand their blocks (headings, paragraphs, list items, table rows, code) in reading
order to a :class:`PartBuilder`; it cuts them into parts, the pages of a reflowable
document: a new part at every heading of level ``split_level`` or above (a heading that
follows only headings joins their part), at every ``new_part()`` (an EPUB spine item, a
slide), and once a part holds :data:`MAX_PART_CHARS`. A part's text is its blocks joined by
newlines; each block keeps its character range in it, which chunks, citations and the
document view share. A part's label is its last leading heading's number ("9.10.1") or,
without one, the heading itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from desktop_app.core.text.words import CJK_CHAR
from desktop_app.core.types import TABLE_CELL_SEPARATOR, BlockKind, PageQuality, PageText, TextBlock

__all__ = ["MAX_PART_CHARS", "PartBuilder", "clean_inline"]

# A part is what the document view renders at once: about three screens of text. A longer
# section goes on in the next part (with the same label).
MAX_PART_CHARS = 12_000
_LABEL_CHARS = 60
_NUMBER = re.compile(r"(?:(?:Chapter|Kapitel|Section|Abschnitt|Appendix|Anhang)\s+)?"
                     r"((?:\d+|[A-Z])(?:\.\d+)*)\.?(?=\s|$)")
_CN_NUMBER = re.compile(r"第\s*[0-9０-９一二三四五六七八九十百]+\s*[章节部分篇]")
_SPACE = re.compile(r"\s+")
_CJK_GAP = re.compile(rf"(?<={CJK_CHAR.pattern})\s+(?={CJK_CHAR.pattern})")
_CUT = re.compile(r"(?<=[.!?。！？；;])\s+|\s+")


def clean_inline(text: str) -> str:
    """Running text as a reader sees it: spaces collapsed, none between two CJK characters
    (a line break inside a Chinese sentence is no space), control characters dropped."""
    text = "".join(c if c.isprintable() or c in " \t\n" else " " for c in text)
    return _CJK_GAP.sub("", _SPACE.sub(" ", text)).strip()


def _label(heading: str) -> str:
    heading = heading.strip()
    if match := _NUMBER.match(heading):
        return match[1]
    if match := _CN_NUMBER.match(heading):
        return _SPACE.sub("", match[0])
    return heading if len(heading) <= _LABEL_CHARS else heading[: _LABEL_CHARS - 1] + "…"


@dataclass
class _Part:
    label: str = ""
    pieces: list[str] = field(default_factory=list)
    blocks: list[TextBlock] = field(default_factory=list)
    length: int = 0
    body: bool = False  # holds something besides headings

    def add(self, kind: BlockKind, text: str, level: int) -> None:
        if self.pieces:
            self.pieces.append("\n")
            self.length += 1
        self.pieces.append(text)
        self.blocks.append(TextBlock(kind, self.length, self.length + len(text), level))
        self.length += len(text)
        self.body = self.body or kind is not BlockKind.HEADING


class PartBuilder:
    """Collects blocks in reading order; :meth:`parts` gives the pages."""

    def __init__(self, split_level: int = 3, max_part_chars: int = MAX_PART_CHARS) -> None:
        self.split_level = split_level
        self.max_part_chars = max_part_chars
        self._parts: list[_Part] = []
        self._current = _Part()
        self.first_heading = ""
        self.chars = 0

    def new_part(self, label: str = "") -> None:
        """End the part (an EPUB spine item, a slide); the next starts with ``label``."""
        self._close()
        self._current = _Part(label=label)

    def _close(self) -> None:
        if self._current.blocks:
            self._parts.append(self._current)

    def heading(self, text: str, level: int) -> None:
        text = clean_inline(text)
        if not text:
            return
        level = max(1, min(6, level))
        if not self.first_heading:
            self.first_heading = text
        part = self._current
        if level <= self.split_level and part.body:
            self._close()
            self._current = part = _Part()
        if not part.body:
            part.label = _label(text) if not part.label or part.blocks else part.label
        self._add(BlockKind.HEADING, text[:2000], level)

    def paragraph(self, text: str, kind: BlockKind = BlockKind.PARAGRAPH, level: int = 0) -> None:
        text = clean_inline(text)
        if text:
            self._add_long(kind, text, level)

    def list_item(self, text: str, depth: int = 1) -> None:
        self.paragraph(text, BlockKind.LIST_ITEM, max(1, depth))

    def table_row(self, cells: list[str]) -> None:
        cleaned = [clean_inline(c).replace(TABLE_CELL_SEPARATOR, " / ") for c in cells]
        if any(cleaned):
            self._add_long(BlockKind.TABLE_ROW, TABLE_CELL_SEPARATOR.join(cleaned), 0)

    def code(self, text: str) -> None:
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        body = "\n".join("".join(c if c.isprintable() or c == "\t" else " " for c in line) for line in lines)
        if body.strip():
            self._add_long(BlockKind.CODE, body, 0)

    def _add_long(self, kind: BlockKind, text: str, level: int) -> None:
        """Add a block, cut at sentence ends or spaces when it is longer than a part."""
        limit = self.max_part_chars // 2
        while len(text) > limit:
            cut = 0
            for match in _CUT.finditer(text, limit // 2, limit):
                cut = match.start()
            cut = cut or limit
            self._add(kind, text[:cut].rstrip(), level)
            text = text[cut:].lstrip()
        if text:
            self._add(kind, text, level)

    def _add(self, kind: BlockKind, text: str, level: int) -> None:
        part = self._current
        if part.body and part.length + len(text) > self.max_part_chars:
            self._close()
            self._current = part = _Part(label=part.label)
        part.add(kind, text, level)
        self.chars += len(text)

    def parts(self) -> list[PageText]:
        """The parts as pages: ``page`` numbers from 1, ``label`` the section (else the
        number), ``blocks`` offsets into ``text``."""
        self._close()
        self._current = _Part()
        pages: list[PageText] = []
        for number, part in enumerate(self._parts, 1):
            pages.append(PageText(
                page=number, label=part.label or str(number), width=0.0, height=0.0,
                rotation=0, text="".join(part.pieces), quality=PageQuality.OK,
                blocks=tuple(part.blocks),
            ))
        return pages
