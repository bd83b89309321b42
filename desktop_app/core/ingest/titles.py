"""A document's title as a person would name it. Qt-free.

PDF metadata titles are often not titles: a file name ("10811.exe", "rfc2616.txt",
"Binder1.pdf", "zhlineskip-man"), a tool's default ("Microsoft Word - …", "untitled") or
nothing. The rule (:func:`choose_title`):

1. The metadata title, unless it looks like a file name or a tool's default, or has fewer
   than three words while the first page's title line says something else.
2. The first page's title line: the largest font among its first lines, clearly larger
   than the page's body text (a title set over two or three lines is joined). On a page
   set in one size (a plain-text RFC), a line centred over the text, alone between blank
   lines ("Hypertext Transfer Protocol -- HTTP/1.1").
3. The file name without its extension.

Font sizes are the text runs' (text_runs.py; a run's box height when the size is unknown).
The window always shows the file name beside the title. A change here bumps
``indexing.INGEST_RULES``: the next index run re-derives older titles (first page only).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from desktop_app.core.text.words import CJK_CHAR
from desktop_app.core.types import PageQuality, PageText, TextRun

FIRST_LINES = 25  # where a title line may be: among this many lines from the top,
TOP_SHARE = 0.6  # and in this upper share of the page
LARGER = 1.2  # a title line's font is at least this much larger than the body's
SAME_TITLE = 0.87  # a neighbouring line this near the title's size continues it
COVER_CHARS = 300  # a first page with less text than this is a cover
COLUMN_GAP = 2.0  # a gap this many font sizes wide splits a line (columns, a header's ends)
MAX_TITLE_LINES = 3
MAX_TITLE_CHARS = 200
MIN_WORDS = 3  # a metadata title shorter than this yields to the page's title line

_EXTENSION = re.compile(
    r"\.(?:pdf|docx?|dotx?|rtf|txt|odt|ott|xlsx?|pptx?|html?|tex|dvi|ps|eps|indd|qxd|p65|"
    r"pm\d|wpd|pages|key|exe|zip|tmp|fm|mif|xps|md)$", re.IGNORECASE,
)
_FILE_TOKEN = re.compile(r"[^\s/\\]+\.[A-Za-z0-9]{1,5}")  # "10811.exe", "report.v2"
_PATH = re.compile(r"^[A-Za-z]:\\|^/|\\")  # "C:\Users\…", "/tmp/x.dvi"
_TOOL_PREFIX = re.compile(
    r"^(?:microsoft\s+(?:word|powerpoint|excel)(?:\s*-\s*|\s+)|untitled\s*-\s*)", re.IGNORECASE
)
_TOOL_DEFAULT = re.compile(
    r"(?:binder|document|untitled|title|book|presentation|workbook|slide|doc|pdf|"
    r"new\s+document|untitled\s+document|no\s+title|unknown|none|null)[\s_-]*\d*",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Line:
    """A line of the page: the runs that share a baseline band, left to right."""

    text: str
    size: float  # the font height most of its characters have (points)
    x0: float
    x1: float
    bottom: float
    top: float

    @property
    def centre(self) -> float:
        return (self.x0 + self.x1) / 2


# --------------------------------------------------------------------------- metadata


def clean(title: str) -> str:
    """Spaces collapsed, a tool's prefix ("Microsoft Word - ") removed."""
    title = re.sub(r"\s+", " ", title).strip()
    return _TOOL_PREFIX.sub("", title).strip()


def looks_like_file_name(title: str) -> bool:
    """"rfc2616.txt", "10811.exe", "Binder1.pdf", "C:\\docs\\x", "zhlineskip-man",
    "final_report_v2": a name a file had, not a title."""
    title = title.strip()
    if _EXTENSION.search(title) or _PATH.search(title):
        return True
    if " " in title:
        return False
    if _FILE_TOKEN.fullmatch(title) and not title.endswith("."):
        return True
    # One token joined by underscores, or a lower-case one joined by hyphens.
    return "_" in title or ("-" in title and title == title.lower() and any(c.isalpha() for c in title))


def is_placeholder(title: str) -> bool:
    """No title at all: empty, a tool's default ("Binder1", "untitled", "Document3"),
    no letters, or characters the PDF could not map."""
    title = title.strip()
    if not title or "\ufffd" in title or not any(c.isalpha() for c in title):
        return True
    return bool(_TOOL_DEFAULT.fullmatch(title))


def word_count(text: str) -> float:
    """Words of a title: Latin words, and two CJK characters to a word."""
    cjk = len(CJK_CHAR.findall(text))
    rest = CJK_CHAR.sub(" ", text)
    return len(_WORD.findall(rest)) + cjk / 2


def usable_metadata(title: str) -> str:
    """The metadata title cleaned, or "" when it is not a title."""
    title = clean(title)
    if is_placeholder(title) or looks_like_file_name(title):
        return ""
    return title[:MAX_TITLE_CHARS]


# --------------------------------------------------------------------------- the first page


def _upright(run: TextRun, text: str) -> bool:
    """A run set horizontally: its box is wider than tall once it holds a few characters
    (a rotated table header's box is a tall, narrow strip)."""
    width, height = run.x1 - run.x0, run.y1 - run.y0
    if height <= 0:
        return False
    return len(text) < 3 or width >= height


def _size(run: TextRun) -> float:
    """The run's font size; its box height when the extraction did not know it."""
    return run.size if run.size > 0 else run.y1 - run.y0


def page_lines(page: PageText) -> list[Line]:
    """The page's lines from the top, built from its text runs (runs on one baseline band
    but a wide gap apart, such as two columns, are separate lines)."""
    runs = []
    for run in page.runs:
        text = page.text[run.char_start : run.char_end].strip()
        if text and _upright(run, text):
            runs.append((run, text))
    runs.sort(key=lambda item: -(item[0].y0 + item[0].y1) / 2)
    bands: list[list[tuple[TextRun, str]]] = []
    for run, text in runs:
        middle = (run.y0 + run.y1) / 2
        if bands:
            lowest = min(r.y0 for r, _ in bands[-1])
            highest = max(r.y1 for r, _ in bands[-1])
            if lowest <= middle <= highest:
                bands[-1].append((run, text))
                continue
        bands.append([(run, text)])
    lines: list[Line] = []
    for band in bands:
        band.sort(key=lambda item: item[0].x0)
        segment = [band[0]]
        for item in band[1:]:
            previous = segment[-1][0]
            if item[0].x0 - previous.x1 > COLUMN_GAP * max(_size(item[0]), _size(previous)):
                lines.append(_line(segment))
                segment = []
            segment.append(item)
        lines.append(_line(segment))
    return lines


def _line(group: list[tuple[TextRun, str]]) -> Line:
    parts: list[str] = []
    previous: TextRun | None = None
    for run, text in group:
        if previous is not None:
            gap = run.x0 - previous.x1
            if gap > 0.15 * min(_size(run), _size(previous)):
                parts.append(" ")
        parts.append(text)
        previous = run
    sizes = [_size(run) for run, text in group for _ in text]
    return Line(
        text=re.sub(r"\s+", " ", "".join(parts)).strip(),
        size=statistics.median_low(sizes),
        x0=min(run.x0 for run, _ in group),
        x1=max(run.x1 for run, _ in group),
        bottom=min(run.y0 for run, _ in group),
        top=max(run.y1 for run, _ in group),
    )


def _body_size(lines: list[Line]) -> float:
    sizes = [line.size for line in lines for _ in line.text]
    return statistics.median_low(sizes) if sizes else 0.0


def _one_size(lines: list[Line]) -> bool:
    """Whether the page is set in one font size (plain text, such as an RFC)."""
    sizes = [round(line.size, 1) for line in lines for _ in line.text]
    return bool(sizes) and sizes.count(statistics.mode(sizes)) >= 0.95 * len(sizes)


def _readable(text: str) -> bool:
    letters = sum(1 for c in text if c.isalpha())
    if text[:1].islower() and text.rstrip().endswith("."):
        return False  # the end of a sentence ("ametdapibus justo." on a scan), not a title
    return letters >= 3 and letters >= 0.4 * len(text.replace(" ", ""))


def title_line(page: PageText | None) -> tuple[str, bool]:
    """The first page's title and whether it is set larger than the body: its largest line
    near the top (True), or on a page in one size a centred line standing alone (False);
    ``("", False)`` when the page shows none."""
    if page is None or page.quality != PageQuality.OK or page.rotation % 180 or not page.runs:
        return "", False
    lines = page_lines(page)
    first = [line for line in lines[:FIRST_LINES] if line.bottom >= (1 - TOP_SHARE) * page.height]
    candidates = [line for line in first if _readable(line.text)]
    if not candidates:
        return "", False
    biggest = max(candidates, key=lambda line: line.size)
    body = _body_size(lines)
    if sum(len(line.text) for line in lines) < COVER_CHARS:
        # A cover: its body is what is not set as large as the title (a date, a publisher).
        body = _body_size([line for line in lines if line.size < SAME_TITLE * biggest.size])
    if body > 0 and biggest.size >= LARGER * body:
        return _join_title(lines, lines.index(biggest), body), True
    if _one_size(lines):
        return _centred_line(lines, first), False
    return "", False


def _join_title(lines: list[Line], at: int, body: float) -> str:
    """The title line and its neighbours set about as large (a title over two lines, a
    report's company name above its period)."""
    size = lines[at].size

    def continues(line: Line, gap: float) -> bool:
        return line.size >= max(SAME_TITLE * size, LARGER * body) and gap <= 1.5 * size

    start = end = at
    while (start > 0 and end - start + 1 < MAX_TITLE_LINES
           and continues(lines[start - 1], lines[start - 1].bottom - lines[start].top)):
        start -= 1
    while (end + 1 < len(lines) and end - start + 1 < MAX_TITLE_LINES
           and continues(lines[end + 1], lines[end].bottom - lines[end + 1].top)):
        end += 1
    text = " ".join(line.text for line in lines[start : end + 1])
    return _trim(text)


def _centred_line(lines: list[Line], first: list[Line]) -> str:
    """A line centred over the text block, with a blank line above and below it."""
    if len(lines) < 5:
        return ""
    left = min(line.x0 for line in lines)
    right = max(line.x1 for line in lines)
    width = right - left
    steps = [a.bottom - b.bottom for a, b in zip(lines, lines[1:], strict=False) if a.bottom > b.bottom]
    if width <= 0 or not steps:
        return ""
    pitch = statistics.median_low(steps)
    for index, line in enumerate(first):
        if index == 0 or index + 1 >= len(lines) or not _readable(line.text):
            continue
        if word_count(line.text) < 2 or line.x0 < left + 0.1 * width:
            continue
        if abs(line.centre - (left + right) / 2) > 0.04 * width:
            continue
        above = lines[index - 1].bottom - line.bottom
        below = line.bottom - lines[index + 1].bottom
        if above >= 1.5 * pitch and below >= 1.5 * pitch:
            return _trim(line.text)
    return ""


def _trim(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().strip(",;:*†‡").strip()
    if len(text) > MAX_TITLE_CHARS:
        text = text[: MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return text


# --------------------------------------------------------------------------- the rule


def choose_title(metadata: str, first_page: PageText | None, stem: str) -> str:
    """The document's title by the rule above (``stem``: the file name without extension)."""
    from_metadata = usable_metadata(metadata)
    if from_metadata and word_count(from_metadata) >= MIN_WORDS:
        return from_metadata
    from_page, larger = title_line(first_page)
    if from_metadata:
        # A short metadata title yields to a larger title line that says something else
        # ("PDF.js - Wikipedia" keeps its name over the page's "PDF.js").
        if larger and from_page.lower() not in from_metadata.lower():
            return from_page
        return from_metadata
    return from_page or stem
