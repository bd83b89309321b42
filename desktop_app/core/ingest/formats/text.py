"""Plain text, with its encoding detected, and the check that a file is text at all.
Qt-free.

A byte-order mark decides (UTF-8, UTF-16 LE/BE); then strict UTF-8; then UTF-16 without a
mark (every other byte zero); then charset-normalizer's best guess (GB18030, GBK, Big5,
Shift-JIS, Latin-1, ...; a GB2312 or GBK guess reads as GB18030, their superset). A file
that is mostly control characters or undecodable is not text ("binary junk named .md").

Blocks: paragraphs are separated by blank lines; a paragraph of one unindented line that
reads like a heading ("2.1.3. Life with eternal upgrades", "Chapter 3. ...") is a heading;
an indented item ("* apt(8) for ...", "1. Fetch ...") a list item; lines drawn as a table
(``+----+``, ``|cell|``) or indented deeper than the text around them stay as they are
(code).
"""

from __future__ import annotations

import codecs
import re

from desktop_app.core.ingest.formats.containers import BadContainer
from desktop_app.core.ingest.formats.parts import PartBuilder
from desktop_app.core.ingest.headings import detect_heading

__all__ = ["decode_text", "read_text_blocks"]

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
         (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_GB = ("gb2312", "gbk", "gb18030", "hz")
_SAMPLE = 64 * 1024
_BULLET = re.compile(r"\s+(?:[*+\-•o]|\d{1,3}[.)]|[a-z][.)])\s+\S")
_DRAWN = re.compile(r"^\s*[+|][-=+|]{3,}|\|.*\|\s*$")


def _looks_binary(text: str) -> bool:
    sample = text[:_SAMPLE]
    if not sample:
        return False
    bad = sum(1 for c in sample if (not c.isprintable() and c not in "\n\r\t\f") or c == "\ufffd")
    return bad > 0.02 * len(sample)


def decode_text(data: bytes, kind: str = "text file") -> tuple[str, str]:
    """(text, encoding) of ``data``; raises BadContainer for binary data."""
    text: str | None = None
    encoding = ""
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                text, encoding = data.decode(name), name.replace("-sig", "")
            except UnicodeDecodeError:
                text = None
            break
    if text is None and b"\x00" not in data[:_SAMPLE]:
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text = None
    if text is None and len(data) >= 4 and data[: _SAMPLE].count(b"\x00") > len(data[:_SAMPLE]) // 3:
        zeros_odd = data[1:_SAMPLE:2].count(0)
        zeros_even = data[0:_SAMPLE:2].count(0)
        name = "utf-16-le" if zeros_odd > zeros_even else "utf-16-be"
        try:
            text, encoding = data.decode(name), name
        except UnicodeDecodeError:
            text = None
    if text is None:
        from charset_normalizer import from_bytes

        best = from_bytes(data[: 4 * _SAMPLE]).best()
        if best is None or best.encoding is None:
            raise BadContainer(f"not a {kind}: it holds binary data, no text in any encoding Folio knows")
        encoding = "gb18030" if best.encoding.lower().replace("_", "") in _GB else best.encoding
        text = data.decode(encoding, errors="replace")
    if _looks_binary(text):
        raise BadContainer(f"not a {kind}: it holds binary data, not text")
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


def _heading_level(line: str) -> int:
    heading = detect_heading(line)
    if heading is None or not heading.entry or heading.level > 6:
        return 0
    return max(1, heading.level)


def read_text_blocks(text: str, builder: PartBuilder) -> str:
    """Hand the blocks of plain ``text`` to ``builder``; returns the first heading."""
    paragraphs = re.split(r"\n[ \t]*\n", text)
    for paragraph in paragraphs:
        lines = [line for line in paragraph.split("\n") if line.strip()]
        if not lines:
            continue
        if len(lines) == 1 and not lines[0][:1].isspace() and (level := _heading_level(lines[0])):
            builder.heading(lines[0], level)
            continue
        if any(_DRAWN.search(line) for line in lines):
            builder.code("\n".join(lines))
            continue
        items: list[list[str]] = []
        for line in lines:
            if _BULLET.match(line) or not items:
                items.append([line])
            else:
                items[-1].append(line)
        for item in items:
            joined = " ".join(line.strip() for line in item)
            if _BULLET.match(item[0]):
                depth = 1 + max(0, (len(item[0]) - len(item[0].lstrip()) - 6) // 4)
                builder.list_item(re.sub(r"^(?:[*+\-•o])\s+", "", joined), depth)
            else:
                builder.paragraph(joined)
    return builder.first_heading
