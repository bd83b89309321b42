"""Whether a text is a listing of pages rather than statements: a book's index ("affine,
107" / "copyright law, 141–44, 146" / "Euler-Charakteristik, siehe Eulerzahl") or a table
of contents with dot leaders ("Introduction .......... 7"). Qt-free.

Such a page holds many of a question's words and none of its answer: asked "Was ist die
Euler-Charakteristik einer geschlossenen Fläche?", GeoTopo's Stichwortverzeichnis (p. 112)
came first and the model cited it. Retrieval (search/retrieve.py) puts listing chunks after
every other candidate, so they fill a source only when nothing else does, unless the
question asks about the document's parts (:func:`asks_for_listing`: "How many chapters are
in this report?", "What are the last 4 chapters listed in the table of contents?" are
MMLongBench-Doc questions whose answer is the contents page).

The test is the shape of the lines, in any language: at least six lines, and three in five
of them entries (a term with a letter, then ", " and page numbers; a ", see"/", siehe"
cross-reference; a run of page numbers "435, 473, 483,"; a dot leader ending in a page).
The page numbers are separated by a comma *and a space*: a table's "14,111 16,635" and a
tax table's "25,200" are numbers with thousands separators, not page lists. Over the 5,631
chunks of ../shared/corpus it marks the indexes of Free Culture, GeoTopo and the xeCJK
manual and RFC 2616's contents pages, and nothing else (not the NICS table, the filings'
shareholder tables, the IRS tax tables or a references list).
"""

from __future__ import annotations

import re

from desktop_app.core.text import lang

__all__ = ["asks_for_listing", "reads_as_listing"]

_PAGES = r"\d{1,4}(?:n\d*)?(?:\s*[–—-]\s*\d{1,4})?"  # 107 / 141–44 / 319n / 328n2
_INDEX_ENTRY = re.compile(rf"^(?=.*[^\W\d_]).{{1,80}}?,\s+{_PAGES}(?:,\s+{_PAGES})*,?$")
_see = lang.compiled(lambda: re.compile(
    rf"^.{{1,80}}?,\s+(?:{lang.pattern(lambda x: x.see_also, latin_bounds=False)})\s", re.IGNORECASE))
_PAGE_RUN = re.compile(rf"^{_PAGES}(?:,\s+{_PAGES})+,?$")
_LEADER = re.compile(r"(?:\.\s*){4,}\s*\d{1,4}$|…{2,}\s*\d{1,4}$")

# Words naming a document's parts or its listings, in every language (``document_parts``).
_parts = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.document_parts), re.IGNORECASE))

MIN_ENTRIES = 6
MIN_SHARE = 0.6


def _is_entry(line: str) -> bool:
    return bool(_INDEX_ENTRY.match(line) or _see().match(line) or _PAGE_RUN.match(line)
                or _LEADER.search(line))


def reads_as_listing(text: str) -> bool:
    """Whether most of ``text``'s lines point to pages (an index, a table of contents)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # Every entry ends in a page number, a comma or a cross-reference's word: most prose
    # and tables are told apart by that alone, before any pattern runs (~0.1 ms a chunk).
    if sum(line[-1].isdigit() or line[-1] == "," for line in lines) < MIN_ENTRIES // 2:
        return False
    entries = sum(_is_entry(line) for line in lines)
    return entries >= MIN_ENTRIES and entries >= MIN_SHARE * len(lines)


def asks_for_listing(question: str) -> bool:
    """Whether ``question`` names a document's parts (chapters, sections, its contents or
    index): its answer may be a contents or index page, which then keeps its place."""
    return _parts().search(question) is not None
