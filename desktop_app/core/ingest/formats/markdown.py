"""Markdown (CommonMark with GFM tables and strikethrough) through markdown-it-py: rendered
to HTML (raw HTML kept, as much real Markdown has tables and blocks in it) and read by the
HTML walker. Qt-free. The title is a YAML front matter's ``title:``, else the first heading.
"""

from __future__ import annotations

import re

from desktop_app.core.ingest.formats.html import parse_html, walk_html
from desktop_app.core.ingest.formats.parts import PartBuilder, clean_inline

__all__ = ["read_markdown"]

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n(?:---|\.\.\.)\n", re.DOTALL)
_TITLE = re.compile(r"^title:\s*[\"']?(.*?)[\"']?\s*$", re.MULTILINE)


def read_markdown(text: str) -> tuple[str, PartBuilder]:
    """(title from front matter or "", builder with the blocks) of Markdown ``text``."""
    from markdown_it import MarkdownIt

    title = ""
    if match := _FRONT_MATTER.match(text):
        if found := _TITLE.search(match[1]):
            title = clean_inline(found[1])
        text = text[match.end():]
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    html = renderer.render(text)
    builder = PartBuilder()
    walk_html(parse_html(f"<html><body>{html}</body></html>"), builder)
    return title, builder
