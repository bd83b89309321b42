"""Headings and running heads of a document's pages, for chunking: which line is a heading
(its level and the section name it gives), which is a separator (a MIME boundary, a row of
punctuation), which lines are running heads and footers, and whether the document is set
as plain text. Qt-free, deterministic. The rules are listed in core/ingest/chunking.py's
docstring, which cuts chunks by them.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass

from desktop_app.core.text.words import CJK_CHAR
from desktop_app.core.types import PageText

__all__ = [
    "UNNAMED_CLAUSE", "Heading", "contents_title", "detect_heading", "is_separator", "line_key",
    "plain_text_layout", "running_lines",
]

# --------------------------------------------------------------------------- headings

_CN_DIGITS = "零〇一二三四五六七八九十百千两"
_CN_LEVELS = {"编": 0, "篇": 0, "部分": 0, "章": 1, "节": 2, "条": 3, "款": 4}
_EN_LEVELS = {
    "part": 0, "teil": 0, "chapter": 1, "kapitel": 1, "appendix": 1, "annex": 1,
    "anhang": 1, "section": 2, "sec.": 2, "abschnitt": 2, "article": 2, "art.": 2,
    "clause": 1, "schedule": 1,  # contracts: "Clause 4 Deposit", then "4.1 …", "4.2 …"
    "note": 1,  # financial statements: "Note 5 - Acquisitions and Divestitures"
}
_MARKDOWN = re.compile(r"(#{1,6})\s+(\S.*)")
_CN_HEADING = re.compile(
    rf"(第\s*(?:[0-9０-９]+(?:[.．][0-9０-９]+)*|[{_CN_DIGITS}]+)\s*(?:部分|编|篇|章|节|条|款))\s*(.*)"
)
_CN_ENUM = re.compile(rf"([{_CN_DIGITS}]+[、．]|[（(][{_CN_DIGITS}]+[）)])\s*(\S.*)")
_EN_HEADING = re.compile(
    r"((Part|PART|Teil|Chapter|CHAPTER|Kapitel|Appendix|APPENDIX|Annex|ANNEX|Anhang|"
    r"Section|SECTION|Sec\.|Abschnitt|Article|ARTICLE|Art\.|Clause|CLAUSE|Schedule|SCHEDULE|"
    r"Note|NOTE)\s+(\d+(?:\.\d+)*|[IVXLCDM]+|[A-Z])\b[.:]?)\s*[-–—]?\s*(.*)"
)
# The title of a financial statement: "Consolidated Statements of Cash Flows",
# "Condensed Consolidated Balance Sheets" (and "Consolidated Balance Shee" when the
# PDF's text layer breaks the word). It names what the page is.
_STATEMENT = re.compile(
    r"(?:condensed\s+)?consolidated\s+(?:statements?\s+of\s+\S.*|balance\s+\S.*)", re.IGNORECASE
)
_PARAGRAPH = re.compile(r"(§+\s*\d+[a-z]?(?:\.\d+)*)\s*(.*)")
_NUMBERED = re.compile(r"(\d{1,3}(?:\.\d{1,3}){0,5})([.)]?)\s+(\S.*)")
_TOC_LINE = re.compile(r"(?:\.\s?){4,}|…{2,}|\s\d{1,4}$|(?:[^\W\d_]\.|\.\.)\s*\d{1,4}$")
# A MIME multipart boundary ("--THIS_STRING_SEPARATES--") or a row of punctuation ("-----",
# "* * *", "=====", "__________"): they separate text, they do not name it.
_BOUNDARY = re.compile(r"--[^\s-][^\s]*")
_PLAIN_LAYOUT_SHARE = 0.5  # lines indented by 2+ spaces in a document set as plain text
# "52 Weeks Ended", "12 months": a number of time units heads a table column, not a section.
_QUANTITY = re.compile(r"(?:weeks?|months?|years?|days?|quarters?|hours?)\b", re.IGNORECASE)
_TITLE_MAX = 60
_SECTION_DEPTH = 4


@dataclass(frozen=True)
class Heading:
    level: int  # 0 = part, 1 = chapter, 2 = section, 3+ = clauses
    entry: str  # what goes into the section path ("" = a boundary that names nothing)
    named: bool = False  # says what it is: "Chapter 3", "Clause 4", "第三章", "## Title"


UNNAMED_CLAUSE = Heading(9, "")  # a boundary that names nothing ("1. The tenant shall …")


def _is_cjk(char: str) -> bool:
    return bool(CJK_CHAR.match(char))


def _title_like(rest: str, max_words: int = 12) -> bool:
    """Short, no sentence punctuation inside, not ending like a sentence or a TOC entry."""
    rest = rest.strip()
    return (
        0 < len(rest) <= _TITLE_MAX
        and len(rest.split()) <= max_words
        and not any(mark in rest for mark in "。；;！？!?")
        and rest.count("，") <= 1
        and rest[-1] not in ".,:：、"
        and not _TOC_LINE.search(rest)
    )


def _entry(label: str, rest: str) -> str:
    """The label, plus the rest of the line when it reads like a title (not when it goes on
    like a sentence: "Section 404 of the DMCA amends the exemption…" is "Section 404")."""
    rest = rest.strip()
    if not _title_like(rest) or rest[0].islower() or rest[0] in ",;":
        return label
    return f"{label} {rest}"


def _starts_title(text: str) -> bool:
    return bool(text) and (text[0].isupper() or _is_cjk(text[0]))


def _is_toc(rest: str) -> bool:
    return bool(rest.strip()) and bool(_TOC_LINE.search(rest.strip()))


def _has_word(text: str) -> bool:
    """Whether ``text`` holds a word of three letters or more (a formula like "PR  PR" or
    "SL2(R)" does not)."""
    return any(len(word) >= 3 for word in re.findall(r"[^\W\d_]+", text))


def _all_caps(line: str) -> bool:
    letters = [c for c in line if c.isalpha()]
    return (
        not line.startswith("(")  # "(MILLIONS)", "(UNAUDITED)": a table's unit, not a title
        and 4 <= len(letters)
        and _has_word(line)
        and len(line) <= _TITLE_MAX
        and all(c.isascii() and c.isupper() for c in letters)
        and sum(c.isdigit() for c in line) <= 2
        and len(letters) >= 0.7 * len(line.replace(" ", ""))
        and len(line.split()) <= 8
        and line[-1] not in ".,;:"
    )


def is_separator(line: str) -> bool:
    """A MIME boundary or a row of punctuation: a line that separates text, never a title."""
    line = line.strip()
    if not line:
        return False
    if _BOUNDARY.fullmatch(line):
        return True
    visible = line.replace(" ", "")
    return sum(c.isalnum() for c in visible) < 0.3 * len(visible)


def detect_heading(line: str) -> Heading | None:
    """Whether ``line`` (one line of page text) starts a section or a numbered clause."""
    line = line.strip()
    if not line or len(line) > 300 or is_separator(line):
        return None
    if match := _MARKDOWN.fullmatch(line):
        return Heading(len(match[1]), match[2][:_TITLE_MAX], named=True)
    if match := _CN_HEADING.match(line):
        if _is_toc(match[2]):
            return None
        label = re.sub(r"\s+", "", match[1])
        level = next(v for k, v in _CN_LEVELS.items() if label.endswith(k))
        return Heading(level, _entry(label, match[2]), named=True)
    if match := _CN_ENUM.match(line):
        if _is_toc(match[2]):
            return None
        return Heading(2 if match[1][0] not in "（(" else 3, _entry(match[1], match[2]))
    if match := _EN_HEADING.match(line):
        if _is_toc(match[4]):
            return None
        if match[2].lower() == "note" and match[4].strip() and not _title_like(match[4]):
            return None  # "Note 3 to the financial statements shows …" is a sentence
        level = _EN_LEVELS[match[2].lower()] + max(0, match[3].count(".") - 1)
        # An appendix or annex is named too, but does not pull itself off the text above it:
        # "Appendix E" often heads a page's tail (bench/retrieval.py --sets mml;
        # docs/evaluation.md, "Constants and their figures").
        named = match[2].lower() not in ("appendix", "annex", "anhang")
        return Heading(level, _entry(match[1].rstrip(".:"), match[4]), named=named)
    if _STATEMENT.fullmatch(line) and _title_like(line):
        return Heading(1, re.sub(r"\s+", " ", line), named=True)
    if match := _PARAGRAPH.match(line):
        if _is_toc(match[2]):
            return None
        return Heading(3 + match[1].count("."), _entry(match[1], match[2]))
    if match := _NUMBERED.fullmatch(line):
        number, mark, rest = match[1], match[2], match[3]
        if not _starts_title(rest) or _is_toc(rest):
            return None
        depth = number.count(".") + 1
        if depth > 1:  # "8.3.2 Title", or "8.3.2 The tenant shall …": a clause named 8.3.2
            return Heading(depth, _entry(number, rest))
        if (mark != ")" and _title_like(rest, max_words=6) and not _QUANTITY.match(rest)
                and _has_word(rest)):
            return Heading(1, f"{number} {rest.strip()}")
        return Heading(9, "") if mark else None  # "1. The tenant shall …": a clause
    if _all_caps(line):
        return Heading(1, line)
    return None


# A page number before or after a running head's words: "318 NOTES", "INTRODUCTION 7",
# "52 THE SIEGE OF VICKSBURG.".
_FOLIO = re.compile(r"(?P<n1>\d{1,4})\s+(?P<t1>.*\D)|(?P<t2>.*\S)\s+(?P<n2>\d{1,4})")
_RUNNING_FLOOR = 3  # pages (and page numbers) a line must recur on to be a running head
_NEAR_MIN, _NEAR_RATIO = 8, 0.9  # a head misspelt once: this long, this similar to a known one


def _folio(line: str) -> tuple[str, str] | None:
    """(words, page number) of a line that is words and a page number, else None."""
    match = _FOLIO.fullmatch(line)
    if match is None or _EN_HEADING.match(line):  # "Section 5", "Note 3": labels, not folios
        return None
    words = match["t1"] or match["t2"]
    return (words, match["n1"] or match["n2"]) if any(c.isalpha() for c in words) else None


def line_key(line: str) -> str:
    """Lower case, spaces collapsed, a page number at either end moved to the end, digits
    as "#": "52 THE SIEGE OF VICKSBURG." and "THE SIEGE OF VICKSBURG. 49" share a key."""
    text = re.sub(r"\s+", " ", line.strip())
    if (folio := _folio(text)) is not None:
        text = f"{folio[0]} #"
    return re.sub(r"\d+", "#", text.lower())


def running_lines(pages: list[PageText]) -> frozenset[str]:
    """Keys of running heads and footers: lines at the top or bottom of many pages, and
    lines of words and a page number (``INTRODUCTION 7``, ``318 NOTES``) found with
    three different numbers on three pages, anywhere on them (a text layer may draw the
    head after the body)."""
    seen: Counter[str] = Counter()
    numbered: dict[str, tuple[set[str], set[int]]] = {}
    for page in pages:
        lines = [line for line in page.text.splitlines() if line.strip()]
        seen.update({line_key(line) for line in lines[:2] + lines[-2:]})
        for line in lines:
            text = re.sub(r"\s+", " ", line.strip())
            if len(text) <= _TITLE_MAX and (folio := _folio(text)) is not None:
                numbers, on_pages = numbered.setdefault(line_key(text), (set(), set()))
                numbers.add(folio[1])
                on_pages.add(page.page)
    keys = {key for key, count in seen.items() if count >= _RUNNING_FLOOR}
    keys |= {key for key, (numbers, on_pages) in numbered.items()
             if len(numbers) >= _RUNNING_FLOOR and len(on_pages) >= _RUNNING_FLOOR}
    # A head the text layer misspells once (OCR: "THE SIEGE OP VICKSBURG. 53") is still one;
    # not a chapter's own title ("INTRODUCTION") beside its heads ("INTRODUCTION 7").
    near = {key for key in seen if key not in keys and len(key) >= _NEAR_MIN and any(
        key.endswith(" #") == known.endswith(" #")
        and difflib.SequenceMatcher(None, key, known).ratio() >= _NEAR_RATIO for known in keys)}
    return frozenset(keys | near)


# What a table of contents is titled (spaces removed, lower case).
_CONTENTS_TITLES = frozenset({"目录", "目次", "contents", "tableofcontents", "inhalt", "inhaltsverzeichnis"})


def contents_title(text: str, running: frozenset[str]) -> str | None:
    """The title of a table-of-contents page ("目 录", "Contents", "Inhaltsverzeichnis"):
    its first line, unless that line runs atop many pages (a filing's "Table of Contents"
    link on every page). Its entries name chapters that are not in effect after it."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    if re.sub(r"\s+", "", first).lower() not in _CONTENTS_TITLES or line_key(first) in running:
        return None
    return re.sub(r"\s+", " ", first.strip())


def plain_text_layout(pages: list[PageText]) -> bool:
    """Whether the document is set as plain text (RFCs: 89–91% of lines indented by
    spaces; every other corpus document: at most 4%)."""
    lines = [line for page in pages[:50] for line in page.text.splitlines() if line.strip()]
    indented = sum(1 for line in lines if line.startswith("  "))
    return bool(lines) and indented >= _PLAIN_LAYOUT_SHARE * len(lines)
