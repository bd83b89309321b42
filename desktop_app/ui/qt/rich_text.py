"""Text made safe and short for Qt's rich text: HTML escaping, line breaks kept, and
shortening at the end or in the middle. Qt-free; every pane that writes HTML uses it."""

from __future__ import annotations

import html


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def plain(text: str) -> str:
    """Escape answer text, keeping its line breaks."""
    return esc(text).replace("\r\n", "\n").replace("\n", "<br/>")


def first_words(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def elide(text: str, limit: int) -> str:
    """Shorten ``text`` in the middle (headings keep their start and their last level)."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head].rstrip() + "…" + text[len(text) - (limit - 1 - head) :].lstrip()
