"""HTML and XHTML: the block walker that EPUB and Markdown reuse. Qt-free.

lxml's HTML parser (network off; it expands no entity but HTML's own) reads the page; the
walker hands headings, paragraphs, list items (with their depth), table rows and ``<pre>``
blocks to a :class:`~desktop_app.core.ingest.formats.parts.PartBuilder`. Scripts, styles,
navigation (``<nav>``, DocBook's ``navheader``/``navfooter``) and generated tables of
contents (``div.toc``) are not text of the document. Images are not read (no OCR of their
text); their ``alt`` text neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop_app.core.ingest.formats.containers import HtmlElement, XmlElement, html_parser
from desktop_app.core.ingest.formats.parts import PartBuilder, clean_inline
from desktop_app.core.types import BlockKind

if TYPE_CHECKING:
    from lxml import html as lxml_html

__all__ = ["html_title", "parse_html", "walk_html"]

_SKIP = frozenset({"script", "style", "head", "nav", "noscript", "template", "svg", "math",
                   "iframe", "object", "button", "select", "textarea", "form", "img"})
_SKIP_CLASSES = frozenset({"navheader", "navfooter", "toc", "list-of-tables", "list-of-figures",
                           "list-of-examples"})
_INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "data", "dfn", "em",
                     "i", "kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub",
                     "sup", "time", "u", "var", "tt", "big", "font", "del", "ins", "wbr", "label",
                     "acronym", "strike", "ruby", "rt", "rp", "img"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


def parse_html(data: bytes | str) -> HtmlElement:
    """The document element of an HTML or XHTML page (bytes: its own charset declaration
    decides, else UTF-8)."""
    from lxml import html

    if isinstance(data, str):
        data = data.encode("utf-8")
        root: HtmlElement = html.document_fromstring(data, parser=_utf8_parser())
    else:
        root = html.document_fromstring(data, parser=html_parser())
    return root


def _utf8_parser() -> lxml_html.HTMLParser:
    from lxml import html

    return html.HTMLParser(no_network=True, huge_tree=False, remove_comments=True,
                           remove_pis=True, encoding="utf-8")


def _tag(element: XmlElement) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""  # a comment, an entity or a processing instruction
    return tag.rsplit("}", 1)[-1].lower()


def _skipped(element: XmlElement, tag: str) -> bool:
    if tag in _SKIP or not tag:
        return True
    classes = (element.get("class") or "").split()
    return any(c in _SKIP_CLASSES for c in classes) or element.get("hidden") is not None


def _text_of(element: XmlElement) -> str:
    """The text of an element as it reads (skipped elements left out)."""
    parts: list[str] = []

    def add(node: XmlElement) -> None:
        tag = _tag(node)
        if tag and not _skipped(node, tag):
            if tag == "br":
                parts.append(" ")
            if node.text:
                parts.append(node.text)
            for child in node:
                add(child)
                if child.tail:
                    parts.append(child.tail)
        elif not tag and node.tail is None:
            pass

    add(element)
    return "".join(parts)


def html_title(root: HtmlElement) -> str:
    """The ``<title>`` of a page ("" when absent)."""
    for element in root.iter():
        if _tag(element) == "title":
            return clean_inline(element.text_content() or "")
    return ""


class _Walker:
    def __init__(self, builder: PartBuilder) -> None:
        self.builder = builder

    def flush(self, buffer: list[str], kind: BlockKind, depth: int) -> None:
        text = "".join(buffer)
        buffer.clear()
        if kind is BlockKind.LIST_ITEM:
            self.builder.list_item(text, depth)
        else:
            self.builder.paragraph(text)

    def block(self, element: XmlElement, kind: BlockKind = BlockKind.PARAGRAPH, depth: int = 0) -> None:
        tag = _tag(element)
        if _skipped(element, tag):
            return
        if tag in _HEADINGS:
            self.builder.heading(_text_of(element), _HEADINGS[tag])
            return
        if tag == "pre":
            self.builder.code(_text_of(element))
            return
        if tag == "table":
            self.table(element)
            return
        if tag in ("ul", "ol", "dl", "menu"):
            depth += 1
        if tag in ("li", "dd", "dt"):
            kind = BlockKind.LIST_ITEM
            depth = max(1, depth)
        buffer: list[str] = []
        if element.text:
            buffer.append(element.text)
        for child in element:
            child_tag = _tag(child)
            if child_tag in _INLINE and not (child_tag == "img"):
                buffer.append(_text_of(child))
            elif child_tag:
                if "".join(buffer).strip():
                    self.flush(buffer, kind, depth)
                buffer.clear()
                self.block(child, kind, depth)
            if child.tail:
                buffer.append(child.tail)
        if "".join(buffer).strip():
            self.flush(buffer, kind, depth)

    def table(self, table: XmlElement) -> None:
        for row in table.iter():
            if _tag(row) != "tr":
                continue
            # The row's own cells (a nested table's rows come on their own).
            cells = [_text_of(cell) for cell in row if _tag(cell) in ("td", "th")]
            self.builder.table_row(cells)


def walk_html(root: XmlElement, builder: PartBuilder) -> None:
    """Hand the blocks of a parsed page's body to ``builder``."""
    body = next((e for e in root.iter() if _tag(e) == "body"), root)
    _Walker(builder).block(body)
