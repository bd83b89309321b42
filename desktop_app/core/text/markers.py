"""The citation marker grammar: the one definition of what a marker is. Qt-free.

The streaming tracker (core/answer/citations.py), the sentence splitter and the verifier
(core/text/sentences.py, core/verdicts/verify.py) and the benchmarks all read markers
through this module, so a string is a citation to all of them or to none.

A marker is an opening bracket ``[``, ``【`` or ``［``, a content with no bracket in it,
and a closing bracket ``]``, ``】`` or ``］`` (any opener with any closer), at most
:data:`MAX_MARKER_CHARS` characters in all. The content is one or more items separated by
``,`` ``，`` ``、`` ``;`` ``；`` (spaces allowed around a separator, never right after the
opener or before the closer):

- label item: 1-4 digits (ASCII or full-width), or a range ``1-3`` (``-`` ``–`` ``－``
  ``~`` ``～``). Ids are canonical integers: ``[01]`` and ``【１】`` name ``"1"``. A range
  of up to :data:`MAX_RANGE` labels expands (``[1-3]`` names 1, 2, 3); a longer or
  descending range names its two endpoints only. ``[2023]`` is a marker naming ``"2023"``,
  which the resolver flags as hallucinated unless the request has 2023 sources.
- short-id item: exactly 7 or 8 ASCII letters or digits, kept as written.

Style ``label`` accepts label items only, ``shortid`` short-id items only (so prose such as
``[Appendix]`` is not a citation in the default style), ``None`` both. Not markers:
``[abc123]``, ``[abcdefghi]``, ``[abc-1234]``, ``[ abc1234]``, ``[]``, ``[a]``, ``[1,]``.
In ``[1](https://x)`` the ``[1]`` is a marker.

Spans: every id of a marker gets the span of the whole marker, from its opening bracket to
just after its closing bracket, so ``text[start:end]`` is always the marker text
(``[1-3]`` gives 1, 2 and 3 the same span). An id appears once per marker.
"""

from __future__ import annotations

import re

from desktop_app.core.types import CitationStyle, Span

MAX_MARKER_CHARS = 64  # a longer bracketed text is never a marker; bounds the unclosed tail
MAX_RANGE = 20  # [a-b] expands only when it names at most this many labels

OPENERS = "[【［"
CLOSERS = "]】］"
BRACKET = re.compile("[\\[\\]【】［］]")
_BRACKET_SEARCH = BRACKET.search
_SP = "[ \u3000]*"
_NUM = "[0-9０-９]{1,4}"
_DASH = "[-–－~～]"
_SID = "[A-Za-z0-9]{7,8}"
_LABEL_ITEM = f"{_NUM}(?:{_SP}{_DASH}{_SP}{_NUM})?"
_SEP = f"{_SP}[,，、;；]{_SP}"
_ITEMS: dict[CitationStyle | None, str] = {
    None: f"(?:{_LABEL_ITEM}|{_SID})",
    CitationStyle.LABEL: _LABEL_ITEM,
    CitationStyle.SHORTID: _SID,
}
_CONTENT = {style: re.compile(f"{item}(?:{_SEP}{item})*") for style, item in _ITEMS.items()}
_SEP_RE = re.compile(_SEP)
_NUM_RE = re.compile(_NUM)
_RANGE_RE = re.compile(f"({_NUM}){_SP}{_DASH}{_SP}({_NUM})")


def style_key(style: CitationStyle | str | None) -> CitationStyle | None:
    return None if style is None else CitationStyle(style)


def marker_ids(marker: str, style: CitationStyle | str | None = None) -> list[str]:
    """The ids one marker text names (``"[1, 3]"`` -> ``["1", "3"]``); ``[]`` if not a marker."""
    if not 3 <= len(marker) <= MAX_MARKER_CHARS:
        return []
    if marker[0] not in OPENERS or marker[-1] not in CLOSERS:
        return []
    return content_ids(marker[1:-1], style_key(style))


def content_ids(content: str, style: CitationStyle | None) -> list[str]:
    """The ids a marker's content (between its brackets) names; ``[]`` if it is not one."""
    if not _CONTENT[style].fullmatch(content):
        return []
    ids: list[str] = []
    for item in _SEP_RE.split(content):
        bounds = _RANGE_RE.fullmatch(item)
        if bounds:
            low, high = int(bounds.group(1)), int(bounds.group(2))
            numbers = range(low, high + 1) if 0 <= high - low < MAX_RANGE else (low, high)
            ids.extend(str(n) for n in numbers)
        elif _NUM_RE.fullmatch(item):
            ids.append(str(int(item)))
        else:
            ids.append(item)
    return list(dict.fromkeys(ids))


class MarkerScanner:
    """Finds markers in a text that arrives in pieces, each when its closing bracket does.

    :meth:`feed` scans only the new piece plus the unclosed tail since the last opening
    bracket (at most ``MAX_MARKER_CHARS - 1`` characters; a longer tail is abandoned), so
    scanning a whole answer costs time linear in its length.
    """

    def __init__(self, style: CitationStyle | str | None = None) -> None:
        self.style = style_key(style)
        self.length = 0
        self._open = -1  # offset of the unclosed opening bracket, -1 when none
        self._tail = ""  # the text from that bracket on

    def feed(self, delta: str) -> list[tuple[list[str], Span]]:
        """Append ``delta``; return (ids, span) for each marker it closed, in order."""
        start = self.length
        self.length += len(delta)
        if self._open < 0:
            first = _BRACKET_SEARCH(delta)
            if first is None:
                return []
            buffer, base, pos, opened = delta, start, first.start(), -1
        else:
            buffer, base, pos, opened = self._tail + delta, self._open, len(self._tail), 0
        found: list[tuple[list[str], Span]] = []
        for match in BRACKET.finditer(buffer, pos):
            at = match.start()
            if buffer[at] in OPENERS:
                opened = at
            elif opened >= 0:
                end = at + 1
                if end - opened <= MAX_MARKER_CHARS:
                    ids = content_ids(buffer[opened + 1 : at], self.style)
                    if ids:
                        found.append((ids, (base + opened, base + end)))
                opened = -1
        if opened >= 0 and len(buffer) - opened < MAX_MARKER_CHARS:
            self._open, self._tail = base + opened, buffer[opened:]
        else:
            self._open, self._tail = -1, ""
        return found

    def drop_tail(self) -> None:
        """The text ended: an unclosed marker never closes."""
        self._open, self._tail = -1, ""


def find_markers(text: str, style: CitationStyle | str | None = None) -> list[tuple[str, Span]]:
    """Every (id, span) in a whole text, in order: what streaming ``text`` would report."""
    return [(cid, span) for ids, span in MarkerScanner(style).feed(text) for cid in ids]


def marker_end(text: str, at: int, style: CitationStyle | str | None = None) -> int | None:
    """If a marker opens at ``text[at]``, the offset just after it; else None."""
    if at >= len(text) or text[at] not in OPENERS:
        return None
    close = BRACKET.search(text, at + 1, min(len(text), at + MAX_MARKER_CHARS))
    if close is None or text[close.start()] not in CLOSERS:
        return None
    end = close.start() + 1
    return end if content_ids(text[at + 1 : end - 1], style_key(style)) else None


# What a marker's content may look like before its closing bracket arrives: whole items
# and separators, then the beginning of one more item.
_ITEM_PREFIX = f"(?:{_NUM}{_SP}{_DASH}{_SP}[0-9０-９]{{0,4}}|[0-9０-９]{{0,4}}|[A-Za-z0-9]{{0,8}})"
_UNCLOSED_CONTENT = re.compile(f"(?:{_ITEMS[None]}{_SEP})*{_ITEM_PREFIX}{_SP}(?:[,，、;；]{_SP})?")


def unclosed_marker_start(text: str) -> int | None:
    """Where a marker that is still being written begins at the end of ``text`` (an
    opener followed only by what a marker may hold, e.g. ``"… [1, "``); else None."""
    opened = max(text.rfind(c) for c in OPENERS)
    if opened < 0 or len(text) - opened >= MAX_MARKER_CHARS:
        return None
    return opened if _UNCLOSED_CONTENT.fullmatch(text, opened + 1) else None


def strip_markers(text: str, replacement: str = "") -> str:
    """``text`` with every marker (any style) replaced by ``replacement``."""
    spans = sorted({span for _, span in find_markers(text)})
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        parts += [text[at:start], replacement]
        at = end
    parts.append(text[at:])
    return "".join(parts)
