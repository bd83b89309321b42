"""ODT (OpenDocument text) through lxml over ``content.xml``. Qt-free.

``text:h`` is a heading (its outline level), ``text:p`` a paragraph (a preformatted or
source style: code), ``text:list`` items list items (their depth), ``table:table`` rows;
sections are read through. Not read: comments (``office:annotation``), footnotes and
endnotes (``text:note``), tracked changes' deleted text (``text:tracked-changes``),
frames' images. The title is ``meta.xml``'s ``dc:title``. A file whose ``content.xml`` is
encrypted (its manifest says so) is password protected.
"""

from __future__ import annotations

from desktop_app.core.ingest.formats.containers import BadContainer, Container, XmlElement
from desktop_app.core.ingest.formats.parts import PartBuilder, clean_inline

__all__ = ["read_odt"]

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_MANIFEST = "{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_SKIP = frozenset({f"{_OFFICE}annotation", f"{_OFFICE}annotation-end", f"{_TEXT}note",
                   f"{_TEXT}tracked-changes", f"{_TEXT}table-of-content",
                   f"{_TEXT}alphabetical-index", f"{_TEXT}bibliography",
                   f"{_TEXT}deletion", f"{_TEXT}sequence-decls"})
_CODE_HINTS = ("preformatted", "source", "code", "verbatim")


def _text(element: XmlElement, keep_breaks: bool = False) -> str:
    parts: list[str] = []

    def add(node: XmlElement) -> None:
        if node.tag in _SKIP:
            return
        if node.tag == f"{_TEXT}s":
            parts.append(" " * int(node.get(f"{_TEXT}c", "1") or 1))
        elif node.tag == f"{_TEXT}tab":
            parts.append("\t" if keep_breaks else " ")
        elif node.tag == f"{_TEXT}line-break":
            parts.append("\n" if keep_breaks else " ")
        if node.text:
            parts.append(node.text)
        for child in node:
            add(child)
            if child.tail:
                parts.append(child.tail)

    add(element)
    return "".join(parts)


class _Body:
    def __init__(self, builder: PartBuilder, parents: dict[str, str]) -> None:
        self.builder = builder
        self.parents = parents  # automatic style -> its parent (named) style

    def _code(self, style: str) -> bool:
        names = (style, self.parents.get(style, ""))
        return any(h in n.lower() for n in names for h in _CODE_HINTS)

    def walk(self, container: XmlElement, depth: int = 0) -> None:
        for child in container:
            tag = child.tag
            if tag in _SKIP:
                continue
            if tag == f"{_TEXT}h":
                self.builder.heading(_text(child), int(child.get(f"{_TEXT}outline-level", "1") or 1))
            elif tag == f"{_TEXT}p":
                style = child.get(f"{_TEXT}style-name", "")
                if self._code(style):
                    self.builder.code(_text(child, keep_breaks=True))
                elif depth:
                    self.builder.list_item(_text(child), depth)
                else:
                    self.builder.paragraph(_text(child))
            elif tag == f"{_TEXT}list":
                self.walk(child, depth + 1)
            elif tag == f"{_TABLE}table":
                for row in child.iter(f"{_TABLE}table-row"):
                    self.builder.table_row([clean_inline(_text(c)) for c in row
                                            if c.tag == f"{_TABLE}table-cell"])
            elif isinstance(tag, str):  # list items, sections, frames' text boxes...
                self.walk(child, depth)


def read_odt(path: str) -> tuple[str, PartBuilder]:
    """(title, builder with the blocks) of the ODT at ``path``; raises BadContainer."""
    with Container(path, "ODT") as box:
        if box.has("META-INF/manifest.xml"):
            manifest = box.xml("META-INF/manifest.xml")
            for entry in manifest.iter(f"{_MANIFEST}file-entry"):
                if (entry.get(f"{_MANIFEST}full-path") == "content.xml"
                        and entry.find(f"{_MANIFEST}encryption-data") is not None):
                    raise BadContainer("This ODT is protected by a password; Folio cannot read "
                                       "encrypted documents. Save it without a password to index it.",
                                       password=True)
        content = box.xml("content.xml")
        title = ""
        if box.has("meta.xml"):
            element = box.xml("meta.xml").find(f".//{_DC}title")
            title = clean_inline(element.text or "") if element is not None else ""
        parents = {s.get(f"{_STYLE}name", ""): s.get(f"{_STYLE}parent-style-name", "")
                   for s in content.iter(f"{_STYLE}style")}
        builder = PartBuilder()
        text = content.find(f"{_OFFICE}body/{_OFFICE}text")
        if text is None:
            raise BadContainer("not a valid ODT: it holds no text document")
        _Body(builder, parents).walk(text)
        return title, builder
