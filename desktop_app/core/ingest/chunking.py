"""Cut a document's readable pages into retrieval chunks. Qt-free, deterministic.

* A chunk never crosses a page, and only OK pages are chunked.
* ``page.text[chunk.char_start:chunk.char_end] == chunk.text`` exactly.
* Headings and numbered clauses start a new chunk (once the chunk so far holds at least
  a quarter of ``max_tokens``): ``第三章``, ``第二节``, ``第8.3.2条``, ``一、``, ``8.3.2 Title``,
  ``Section 4.2``, ``§ 12``, ``Article 5``, ``Chapter 3``, ``Note 5 - Acquisitions``,
  ``Consolidated Statements of Cash Flows``, ``# Title``, ALL-CAPS lines (not ``(MILLIONS)``,
  nor a table's ``52 Weeks Ended``). Lines that repeat at the top or bottom of three or
  more pages, or with three different page numbers anywhere on the page (``INTRODUCTION 7``,
  ``318 NOTES``), are running heads: not headings, never a chunk alone, and not counted
  toward a chunk's size when a heading decides where a new chunk starts.
* Never a heading (nor a section name): a MIME boundary (``--THIS_STRING_SEPARATES--``), a
  row of punctuation, a running head. In a document set as plain text (an RFC: most lines
  indented by spaces) an indented line (numbered steps, examples, grammar, reference
  lists) may end a clause but never names a section.
  A section name is a heading's label plus its title, never a sentence that goes on
  (``Section 404 of the DMCA amends…`` is named ``Section 404``).
* ``chunk.section`` is the heading path in effect where the chunk's text starts
  (``"Chapter 3 Results > 3.2 Accuracy"``), carried over from earlier pages; when a
  heading follows only running heads or a few words, the path after that heading.
* A reflowable document's part (HTML, EPUB, DOCX, ODT, PPTX, Markdown, text) is cut by
  its blocks, not its lines: its heading blocks are its headings (their level, their text
  the section name), a block never shares a sentence with the next, and nothing is a
  running head or a table of contents.
* Sizes are in embedder tokens. Text is cut at sentence ends (``。！？；.!?;``), and a
  sentence longer than a chunk at line breaks, then clause punctuation, spaces, and last
  characters. Consecutive chunks of a page share up to ``overlap_chars`` of whole
  trailing sentences.

Without ``count_tokens``, :func:`wordpiece_tokens` estimates all-MiniLM-L6-v2's WordPiece
count (English vocabulary: words of other languages cost more, so the document's
language is guessed first). Against the real tokenizer on 2,115 windows of 600
characters from all 27 corpus documents its ratio was median 1.09, 5th percentile 0.99,
1st percentile 0.89; of the 5,201 corpus chunks at the default 220, the largest is 258
real tokens with [CLS] and [SEP] (one chunk over the 256 window). Pass the real
tokenizer's count for exact sizes.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop_app.core.ids import chunk_id
from desktop_app.core.ingest.headings import (
    UNNAMED_CLAUSE,
    Heading,
    contents_title,
    detect_heading,
    is_separator,
    line_key,
    plain_text_layout,
    running_lines,
)
from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_CHAR
from desktop_app.core.types import (
    PDF_FORMAT,
    SECTION_SEPARATOR,
    BlockKind,
    Chunk,
    ExtractedDocument,
    PageQuality,
    TextBlock,
)

__all__ = [
    "CHUNKER_VERSION", "Heading", "TokenCounter", "chunk_document",
    "detect_heading", "is_separator", "looks_english", "sections_of", "wordpiece_tokens",
]

logger = logging.getLogger(__name__)

# The version of the rules that cut chunks. With the embedder's id it is what a document's
# chunks were cut for (``Indexer.chunking_key``): raise it when a change here moves chunk
# boundaries, and the next index run or re-embed cuts every document again.
CHUNKER_VERSION = 1

TokenCounter = Callable[[str], float]
_SECTION_DEPTH = 4  # headings a section path names, the innermost ones
_ENTRY_CHARS = 80  # a reflowable document's heading, as its section path names it

# --------------------------------------------------------------------------- tokens

_CJK = CJK_CHAR
_WORD = re.compile(r"[^\W_]+")
_SYMBOL = re.compile(r"[^\w\s]|_")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+")




def wordpiece_tokens(text: str, english: bool = True) -> float:
    """Estimate MiniLM (BERT uncased WordPiece) tokens: one per CJK character and per
    punctuation mark or symbol; in English text a plain ASCII word costs 1 plus 1/3 per
    letter beyond 6; any other word (numbers, accents, camelCase, and every word of
    text that is not English, which the English vocabulary splits finely) costs 1 plus
    1/3 per character."""
    cjk = len(_CJK.findall(text))
    if cjk:
        text = _CJK.sub(" ", text)
    total = float(cjk + len(_SYMBOL.findall(text)))
    for word in _WORD.findall(text):
        if english and word.isascii() and _PLAIN_WORD.fullmatch(word):
            total += 1 + max(0, len(word) - 6) / 3
        else:
            total += 1 + len(word) / 3
    return total


def looks_english(texts: list[str]) -> bool:
    """Whether English function words (its lexicon's, core/text/lang/en.py) make up at least
    15% of the ASCII words (English documents of ../shared/corpus: 18–38%; German and
    Chinese ones and a table of names: under 8%)."""
    words = [w.lower() for t in texts for w in _WORD.findall(t) if w.isascii() and w.isalpha()]
    if len(words) < 50:
        return True
    english = lang.get("en")
    function_words = english.function_words if english is not None else frozenset()
    return sum(1 for w in words if w in function_words) >= 0.15 * len(words)


# --------------------------------------------------------------------------- units

_SENTENCE_END = re.compile(r"[。！？；!?][”’」』）)\]\"']*\s*|[.;][”’)\]\"']*\s+|\n\s*\n\s*")
_SPLITTERS = (re.compile(r"\n"), re.compile(r"[，、,:：]\s*"), re.compile(r"\s+"))


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    tokens: float
    heading: Heading | None = None
    running: bool = False  # a running head or footer line ("Table of Contents", the company)


class _Page:
    """One page's text cut into units no larger than a chunk."""

    def __init__(self, text: str, max_tokens: int, count: TokenCounter,
                 running: frozenset[str], plain: bool = False,
                 blocks: tuple[TextBlock, ...] = ()) -> None:
        self.text = text
        self.max_tokens = max_tokens
        self.count = count
        self.units: list[_Unit] = []
        if blocks:
            self._add_blocks(blocks)
            return
        body_start = 0
        position = 0
        for line in text.splitlines(keepends=True):
            end = position + len(line)
            if line_key(line) in running:
                tokens = count(line) if line.strip() else 0.0
                if 0 < tokens <= max_tokens:
                    self._add_sentences(body_start, position)
                    self.units.append(_Unit(position, end, tokens, running=True))
                    body_start = end
            elif (heading := detect_heading(line)) is not None:
                if plain and line.startswith("  "):
                    # An indented line of a plain-text document (an RFC's numbered steps,
                    # examples, reference lists) may end a clause but never names one.
                    heading = UNNAMED_CLAUSE
                self._add_sentences(body_start, position)
                self._add(position, end, heading)
                body_start = end
            position = end
        self._add_sentences(body_start, len(text))

    def _add_blocks(self, blocks: tuple[TextBlock, ...]) -> None:
        for block in blocks:
            if block.kind is BlockKind.HEADING:
                entry = " ".join(self.text[block.char_start:block.char_end].split())
                if len(entry) > _ENTRY_CHARS:
                    entry = entry[: _ENTRY_CHARS - 1] + "…"
                self._add(block.char_start, block.char_end, Heading(block.level, entry, named=True))
            elif block.kind is BlockKind.CODE:
                self._add(block.char_start, block.char_end)
            else:
                self._add_sentences(block.char_start, block.char_end)

    def _add_sentences(self, start: int, end: int) -> None:
        cut = start
        for match in _SENTENCE_END.finditer(self.text, start, end):
            self._add(cut, match.end())
            cut = match.end()
        self._add(cut, end)

    def _add(self, start: int, end: int, heading: Heading | None = None, depth: int = 0) -> None:
        if start >= end:
            return
        tokens = self.count(self.text[start:end])
        if tokens <= self.max_tokens:
            self.units.append(_Unit(start, end, tokens, heading))
            return
        if depth < len(_SPLITTERS):
            cuts = [m.end() for m in _SPLITTERS[depth].finditer(self.text, start, end)]
            cuts = [c for c in cuts if start < c < end]
            if cuts:
                for index, (a, b) in enumerate(zip([start, *cuts], [*cuts, end], strict=True)):
                    self._add(a, b, heading if index == 0 else None, depth + 1)
                return
            self._add(start, end, heading, depth + 1)
            return
        self._hard_split(start, end, heading)

    def _hard_split(self, start: int, end: int, heading: Heading | None) -> None:
        while start < end:
            low, high = start + 1, end  # the longest prefix that fits (at least one char)
            while low < high:
                middle = (low + high + 1) // 2
                if self.count(self.text[start:middle]) <= self.max_tokens:
                    low = middle
                else:
                    high = middle - 1
            self.units.append(_Unit(start, low, self.count(self.text[start:low]), heading))
            heading = None
            start = low


# --------------------------------------------------------------------------- chunks


def chunk_document(
    doc: ExtractedDocument,
    max_tokens: int = 220,
    overlap_chars: int = 80,
    count_tokens: TokenCounter | None = None,
) -> list[Chunk]:
    """Chunks of ``doc``'s OK pages, in page order, ids ``chunk_id(doc_id, page, 0..)``."""
    pages = [p for p in doc.pages if p.quality == PageQuality.OK]
    count = count_tokens or functools.partial(
        wordpiece_tokens, english=looks_english([p.text for p in pages[:50]])
    )
    min_tokens = max_tokens / 4
    reflowable = doc.format != PDF_FORMAT or any(p.blocks for p in pages)
    running = running_lines(pages) if len(pages) >= 3 and not reflowable else frozenset()
    plain = plain_text_layout(pages) and not reflowable
    stack: list[Heading] = []
    chunks: list[Chunk] = []
    for page in pages:
        units = _Page(page.text, max_tokens, count, running, plain, page.blocks).units
        contents = None if reflowable else contents_title(page.text, running)
        sections: list[str] = []
        for unit in units:  # the section path in effect after each unit
            if contents is not None:  # a table of contents: its entries head nothing
                sections.append(contents)
                continue
            if unit.heading is not None:
                while stack and stack[-1].level >= unit.heading.level:
                    stack.pop()
                stack.append(unit.heading)
            sections.append(_section_path(stack))
        spans = _pack(units, max_tokens, min_tokens, overlap_chars)
        index = 0
        for first, last in spans:
            start, end = units[first].start, units[last].end
            raw = page.text[start:end]
            stripped = raw.strip()
            if not stripped:
                continue
            start += len(raw) - len(raw.lstrip())
            body = _body(units, first, last, min_tokens / 4)
            chunks.append(Chunk(
                chunk_id=chunk_id(doc.doc_id, page.page, index),
                doc_id=doc.doc_id,
                page=page.page,
                index=index,
                text=stripped,
                char_start=start,
                char_end=start + len(stripped),
                section=sections[body],
            ))
            index += 1
    return chunks


def _section_path(stack: list[Heading]) -> str:
    """The innermost named headings, outermost first; a heading repeated right under
    itself (a document's title styled again as its first heading) named once."""
    entries: list[str] = []
    for heading in stack[-_SECTION_DEPTH:]:
        if heading.entry and (not entries or entries[-1] != heading.entry):
            entries.append(heading.entry)
    return SECTION_SEPARATOR.join(entries)


def _body(units: list[_Unit], first: int, last: int, lead_max: float) -> int:
    """The unit whose section path a chunk carries: its first text after any leading
    headings; and when a heading follows a short lead (a "Table of Contents" link, a
    company name above "Consolidated Balance Sheets"), the first text after that heading."""
    lead = 0.0
    for i in range(first, last + 1):
        if units[i].heading is not None:
            return next((j for j in range(i, last + 1) if units[j].heading is None), last)
        lead += 0.0 if units[i].running else units[i].tokens
        if lead >= lead_max:
            break
    return next((i for i in range(first, last + 1) if units[i].heading is None), last)


def _pack(
    units: list[_Unit], max_tokens: float, min_tokens: float, overlap_chars: int
) -> list[tuple[int, int]]:
    """Greedy spans ``(first, last)`` of units, each within ``max_tokens``."""
    spans: list[tuple[int, int]] = []
    first = 0
    while first < len(units):
        total = units[first].tokens
        body = 0.0 if units[first].running else total  # running heads do not count
        last = first
        while last + 1 < len(units):
            following = units[last + 1]
            # A heading starts a new chunk once this one holds enough; a named chapter or
            # contract clause ("Clause 4 Deposit", "第三章") even sooner, so that it is not
            # the tail of the previous clause's chunk. (All-caps lines, level 1 too, do not:
            # in reports they are as often table rows; bench/retrieval.py --sets mml,
            # docs/evaluation.md, "Constants and their figures".)
            following_named = following.heading is not None and following.heading.named
            if following.heading is not None and (
                body >= min_tokens
                or (following_named and following.heading.level <= 1 and body >= min_tokens / 4)
            ):
                break
            if total + following.tokens > max_tokens:
                break
            total += following.tokens
            body += 0.0 if following.running else following.tokens
            last += 1
        spans.append((first, last))
        if last + 1 >= len(units):
            break
        following_first = last + 1
        if units[following_first].heading is None:  # overlap: whole trailing sentences
            chars = 0
            tokens = units[following_first].tokens
            while following_first - 1 > first:
                unit = units[following_first - 1]
                size = unit.end - unit.start
                if (unit.heading is not None or chars + size > overlap_chars
                        or tokens + unit.tokens > max_tokens):
                    break
                chars += size
                tokens += unit.tokens
                following_first -= 1
        first = following_first
    return spans


def sections_of(
    doc: ExtractedDocument,
    spans: Sequence[tuple[int, int, int, int]],
    max_tokens: int = 220,
    count_tokens: TokenCounter | None = None,
) -> dict[int, str]:
    """The section path of stored chunks ``(key, page, char_start, char_end)`` by today's
    rules, from the document's stored pages: a chunk the chunker would still cut the same
    takes its section; any other the section of the chunk it would now start in."""
    fresh: dict[int, list[Chunk]] = {}
    for chunk in chunk_document(doc, max_tokens=max_tokens, count_tokens=count_tokens):
        fresh.setdefault(chunk.page, []).append(chunk)
    sections: dict[int, str] = {}
    for key, page, start, end in spans:
        on_page = fresh.get(page, [])
        same = next((c for c in on_page if c.char_start == start and c.char_end == end), None)
        if same is None:
            before = [c for c in on_page if c.char_start <= start]
            same = before[-1] if before else (on_page[0] if on_page else None)
        if same is not None:
            sections[key] = same.section
    return sections
