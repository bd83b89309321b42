"""PPTX through lxml: each slide in the presentation's order is a part. Qt-free.

A slide's title placeholder is its heading, and so is a numbered heading line set as body
text ("14.4.1. Principles", as pandoc writes a section's subheadings); the other shapes' paragraphs (in the slide's
shape order) are paragraphs, or list items when indented; tables row by row. Not read:
speaker notes, comments, charts, SmartArt, images (no OCR). The title is
``docProps/core.xml``'s, else the first slide's title.
"""

from __future__ import annotations

import posixpath

from desktop_app.core.ingest.formats.containers import BadContainer, Container, XmlElement
from desktop_app.core.ingest.formats.parts import PartBuilder, clean_inline
from desktop_app.core.ingest.headings import detect_heading

__all__ = ["read_pptx"]

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_TITLES = ("title", "ctrTitle")


def _paragraph_text(paragraph: XmlElement) -> str:
    parts: list[str] = []
    for node in paragraph.iter(f"{_A}t", f"{_A}br", f"{_A}tab"):
        parts.append(node.text or "" if node.tag == f"{_A}t" else " ")
    return "".join(parts)


def _slides(box: Container) -> list[str]:
    presentation = box.xml("ppt/presentation.xml")
    rels = box.xml("ppt/_rels/presentation.xml.rels")
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{_REL}Relationship")}
    names: list[str] = []
    for slide in presentation.iter(f"{_P}sldId"):
        target = targets.get(slide.get(f"{_R}id"), "")
        if target:
            names.append(posixpath.normpath(posixpath.join("ppt", target.lstrip("/"))
                                            if not target.startswith("/") else target.lstrip("/")))
    return names


def _shape(shape: XmlElement, builder: PartBuilder) -> None:
    tag = shape.tag
    if tag == f"{_P}grpSp":
        for child in shape:
            _shape(child, builder)
        return
    if tag == f"{_P}graphicFrame":
        for row in shape.iter(f"{_A}tr"):
            builder.table_row([" ".join(_paragraph_text(p) for p in cell.iter(f"{_A}p"))
                               for cell in row.iter(f"{_A}tc")])
        return
    if tag != f"{_P}sp":
        return
    placeholder = shape.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
    kind = placeholder.get("type", "body") if placeholder is not None else ""
    body = shape.find(f"{_P}txBody")
    if body is None:
        return
    if kind in _TITLES:
        builder.heading(" ".join(_paragraph_text(p) for p in body.iter(f"{_A}p")), 1)
        return
    for paragraph in body.iter(f"{_A}p"):
        text = _paragraph_text(paragraph)
        properties = paragraph.find(f"{_A}pPr")
        level = int(properties.get("lvl", "0") or 0) if properties is not None else 0
        bulleted = properties is not None and properties.find(f"{_A}buNone") is None and (
            level > 0 or properties.find(f"{_A}buChar") is not None
            or properties.find(f"{_A}buAutoNum") is not None)
        heading = detect_heading(text) if len(text) <= 120 and not bulleted else None
        if heading is not None and heading.entry and 2 <= heading.level <= 6:
            builder.heading(text, heading.level)  # "14.4.1. Principles" set as body text
        elif bulleted:
            builder.list_item(text, level + 1)
        else:
            builder.paragraph(text)


def read_pptx(path: str) -> tuple[str, PartBuilder]:
    """(title, builder with one part per slide) of the PPTX at ``path``; raises BadContainer."""
    with Container(path, "PPTX") as box:
        names = _slides(box)
        if not names:
            raise BadContainer("not a valid PPTX: it lists no slides")
        title = ""
        if box.has("docProps/core.xml"):
            element = box.xml("docProps/core.xml").find(f"{_DC}title")
            title = clean_inline(element.text or "") if element is not None else ""
        builder = PartBuilder(split_level=0)
        for number, name in enumerate(names, 1):
            if not box.has(name):
                continue
            builder.new_part(str(number))
            tree = box.xml(name).find(f"{_P}cSld/{_P}spTree")
            for shape in tree if tree is not None else ():
                _shape(shape, builder)
        return title, builder
