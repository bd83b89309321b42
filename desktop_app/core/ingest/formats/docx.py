"""DOCX (Office Open XML) through lxml over ``word/document.xml``. Qt-free.

Paragraphs in body order, tables row by row; a paragraph's style (resolved through
``word/styles.xml``) or its outline level makes it a heading, its numbering a list item,
a code style a code block. The text is the document as it now reads: tracked insertions are
in, tracked deletions (``w:delText``), comments, footnotes, headers, footers, field codes
and text boxes' alternate content are not read. The title is ``docProps/core.xml``'s.
"""

from __future__ import annotations

import re

from desktop_app.core.ingest.formats.containers import Container, XmlElement
from desktop_app.core.ingest.formats.parts import PartBuilder, clean_inline

__all__ = ["read_docx"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_HEADING_STYLE = re.compile(r"(?:heading|überschrift|标题)\s*(\d)", re.IGNORECASE)
_CODE_STYLES = ("sourcecode", "source code", "code", "html preformatted", "plain text", "verbatim")
# Elements whose text is not the document's reading text.
_NOT_TEXT = frozenset({f"{_W}delText", f"{_W}instrText", f"{_W}fldChar", f"{_W}commentReference",
                       f"{_W}footnoteReference", f"{_W}endnoteReference"})


def _styles(box: Container) -> dict[str, str]:
    """style id -> style name (lower case)."""
    if not box.has("word/styles.xml"):
        return {}
    root = box.xml("word/styles.xml")
    names: dict[str, str] = {}
    for style in root.iter(f"{_W}style"):
        name = style.find(f"{_W}name")
        names[style.get(f"{_W}styleId", "")] = (name.get(f"{_W}val", "") if name is not None else "").lower()
    return names


def _text(paragraph: XmlElement, keep_breaks: bool) -> str:
    parts: list[str] = []
    for node in paragraph.iter():
        tag = node.tag
        if tag == f"{_W}t":
            parts.append(node.text or "")
            # An entity reference left unexpanded (the parser expands none) is no text;
            # what follows it is.
            parts.extend(child.tail or "" for child in node)
        elif tag == f"{_W}tab":
            parts.append("\t" if keep_breaks else " ")
        elif tag in (f"{_W}br", f"{_W}cr"):
            parts.append("\n" if keep_breaks else " ")
    return "".join(parts)


def _in_deleted_or_fallback(node: XmlElement) -> bool:
    parent = node.getparent()
    while parent is not None:
        tag = parent.tag
        if tag == f"{_W}del" or (isinstance(tag, str) and tag.endswith("}Fallback")):
            return True
        parent = parent.getparent()
    return False


def _remove(node: XmlElement) -> None:
    parent = node.getparent()
    assert parent is not None  # found under the body
    parent.remove(node)


class _Body:
    def __init__(self, builder: PartBuilder, styles: dict[str, str]) -> None:
        self.builder = builder
        self.styles = styles

    def paragraph(self, p: XmlElement) -> None:
        properties = p.find(f"{_W}pPr")
        style = ""
        outline = None
        numbered = None
        if properties is not None:
            style_element = properties.find(f"{_W}pStyle")
            if style_element is not None:
                style_id = style_element.get(f"{_W}val", "")
                style = self.styles.get(style_id, style_id.lower())
            level_element = properties.find(f"{_W}outlineLvl")
            if level_element is not None:
                outline = int(level_element.get(f"{_W}val", "9") or 9) + 1
            num = properties.find(f"{_W}numPr")
            if num is not None:
                level = num.find(f"{_W}ilvl")
                numbered = int(level.get(f"{_W}val", "0") or 0) + 1 if level is not None else 1
        code = any(style.startswith(c) for c in _CODE_STYLES)
        text = _text(p, keep_breaks=code)
        if not text.strip():
            return
        heading = _HEADING_STYLE.match(style)
        if heading or style == "title" or (outline is not None and outline <= 6):
            depth = int(heading[1]) if heading else (1 if style == "title" else outline or 1)
            self.builder.heading(text, depth)
        elif code:
            self.builder.code(text)
        elif numbered is not None or style.startswith("list"):
            self.builder.list_item(text, numbered or 1)
        else:
            self.builder.paragraph(text)

    def table(self, table: XmlElement) -> None:
        for row in table.iter(f"{_W}tr"):
            cells = [clean_inline(" ".join(_text(p, False) for p in cell.iter(f"{_W}p")))
                     for cell in row if cell.tag == f"{_W}tc"]
            self.builder.table_row(cells)

    def walk(self, container: XmlElement) -> None:
        for child in container:
            tag = child.tag
            if tag == f"{_W}p":
                self.paragraph(child)
            elif tag == f"{_W}tbl":
                self.table(child)
            elif tag in (f"{_W}sdt", f"{_W}sdtContent", f"{_W}customXml", f"{_W}ins"):
                self.walk(child)


def read_docx(path: str) -> tuple[str, PartBuilder]:
    """(title, builder with the blocks) of the DOCX at ``path``; raises BadContainer."""
    with Container(path, "DOCX") as box:
        document = box.xml("word/document.xml")
        title = ""
        if box.has("docProps/core.xml"):
            element = box.xml("docProps/core.xml").find(f"{_DC}title")
            title = clean_inline(element.text or "") if element is not None else ""
        body = document.find(f"{_W}body")
        builder = PartBuilder()
        if body is not None:
            for node in list(body.iter(*_NOT_TEXT)):
                _remove(node)
            for node in [n for n in body.iter(f"{_W}t") if _in_deleted_or_fallback(n)]:
                _remove(node)
            _Body(builder, _styles(box)).walk(body)
        return title, builder
