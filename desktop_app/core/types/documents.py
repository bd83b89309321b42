"""The document model: files, pages and parts, chunks and passages, the sentences of a
text, and where a reader finds them. Qt-free."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from enum import StrEnum

# A JSON object as to_json() returns it (json.dumps writes it; readers narrow its values).
JsonObject = dict[str, object]

Span = tuple[int, int]


@dataclass(frozen=True)
class Sentence:
    """A sentence of a text, as core/text/sentences.py splits it."""

    start: int  # offsets into the text: text[start:end] == self.text
    end: int
    text: str


class DocStatus(StrEnum):
    """How a file ended after an index run. Exactly one per file."""

    INDEXED = "indexed"
    INDEXED_PARTIALLY = "indexed_partially"
    NEEDS_PASSWORD = "needs_password"
    NO_TEXT_LAYER = "no_text_layer"
    GARBLED_TEXT = "garbled_text"
    UNREADABLE = "unreadable"
    TIMED_OUT = "timed_out"
    DRM_PROTECTED = "drm_protected"  # an EPUB whose content is encrypted (META-INF/encryption.xml)
    REMOVED = "removed"

    @property
    def searchable(self) -> bool:
        return self in (DocStatus.INDEXED, DocStatus.INDEXED_PARTIALLY)


class PageQuality(StrEnum):
    OK = "ok"
    EMPTY = "empty"  # no text layer (scanned image) or blank page
    GARBLED = "garbled"  # text that is not language: glyph names, mojibake
    ERROR = "error"  # the page could not be parsed


# --------------------------------------------------------------------------- ingestion


@dataclass(frozen=True)
class TextRun:
    """A run of text on a page (pypdf gives about one per line) and its box.

    The box is in PDF user space of the unrotated page (points, origin bottom-left);
    ``char_start``/``char_end`` index into :attr:`PageText.text`. ``size`` is the font size
    the run is drawn at on the page (points; 0 when unknown).
    """

    char_start: int
    char_end: int
    x0: float
    y0: float
    x1: float
    y1: float
    size: float = 0.0


class BlockKind(StrEnum):
    """What a block of a reflowable document's part is: the viewer renders it so."""

    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    TABLE_ROW = "table_row"  # cells joined by TABLE_CELL_SEPARATOR in the part text
    CODE = "code"


# How a table row's cells are joined in a part's text (the viewer splits them again).
TABLE_CELL_SEPARATOR = " | "


@dataclass(frozen=True)
class TextBlock:
    """A block of a reflowable part: ``PageText.text[char_start:char_end]`` is its text.
    ``level``: a heading's level (1 = h1), a list item's depth (1 = top)."""

    kind: BlockKind
    char_start: int
    char_end: int
    level: int = 0


# The formats Folio reads; "pdf" has pages, every other is reflowable (parts + blocks).
PDF_FORMAT = "pdf"
# The file names Folio indexes (core/ingest/formats has a reader for each; the folder scan
# and the window's folder watcher both look for these).
DOCUMENT_SUFFIXES = frozenset({".pdf", ".html", ".htm", ".xhtml", ".epub", ".docx", ".odt",
                               ".pptx", ".md", ".markdown", ".txt"})


def is_hidden(name: str) -> bool:
    """Whether a file or folder named ``name`` is hidden: the folder scan skips it."""
    return name.startswith(".")


def is_document_file(name: str) -> bool:
    """Whether a file named ``name`` is a document Folio indexes: a reader's suffix, not
    hidden and not an Office lock file ("~$report.docx"). The one rule the folder scan
    (core/ingest/changes.py) and the window's folder watcher both follow."""
    return (os.path.splitext(name)[1].lower() in DOCUMENT_SUFFIXES and not is_hidden(name)
            and not name.startswith("~$"))


@dataclass(frozen=True)
class FileRecord:
    """What the library knows of a file at a path: the document it holds, and how its last
    index run ended."""

    path: str
    doc_id: str | None
    size: int
    mtime: float
    status: str
    error: str
    removed: bool


@dataclass(frozen=True)
class PageText:
    """A PDF page, or a part of a reflowable document (an EPUB spine item's or a
    heading-bounded section, a slide): ``page`` is then the part's ordinal, ``label`` its
    section number or heading, and ``blocks`` its structure."""

    page: int  # 1-based physical page number (reflowable: the part's ordinal)
    label: str  # the printed page label (/PageLabels), else str(page)
    width: float
    height: float
    rotation: int
    text: str
    quality: PageQuality = PageQuality.OK
    runs: tuple[TextRun, ...] = ()  # on an OCR page: one per recognised line
    error: str = ""
    ocr_confidence: float = 0.0  # > 0: the text was read by OCR (mean line confidence)
    blocks: tuple[TextBlock, ...] = ()  # a reflowable part's headings, paragraphs, rows...

    @property
    def ocr(self) -> bool:
        return self.ocr_confidence > 0.0


@dataclass(frozen=True)
class OcrLine:
    """A line OCR read on a page, for the viewer: where its text sits in the page text,
    and its box in points on the page as viewers show it (rotation applied, origin
    top-left)."""

    char_start: int
    char_end: int
    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True)
class ExtractedDocument:
    path: str
    doc_id: str  # sha256 of the bytes
    size: int
    mtime: float
    title: str
    status: DocStatus
    error: str = ""
    page_count: int = 0
    pages: tuple[PageText, ...] = ()
    format: str = PDF_FORMAT  # "pdf", "html", "epub", "docx", "odt", "pptx", "md", "txt"

    @property
    def bad_pages(self) -> list[int]:
        return [p.page for p in self.pages if p.quality in (PageQuality.GARBLED, PageQuality.ERROR)]

    @property
    def ocr_pages(self) -> int:
        """How many pages were read by OCR."""
        return sum(1 for p in self.pages if p.ocr)


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    page: int
    index: int
    text: str
    char_start: int  # offsets into the page text
    char_end: int
    section: str = ""


# How a chunk's section path joins its headings, outermost first:
# "5 Data Framing > 5.5 Control Frames".
SECTION_SEPARATOR = " > "


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk with what a reader needs to find it again."""

    chunk_id: str
    doc_id: str
    doc_path: str
    doc_title: str
    page: int
    page_label: str
    section: str
    char_start: int
    char_end: int
    score: float
    text: str
    version: int = 1
    # What the model reads of ``text`` when the prompt carries evidence, not the whole chunk:
    # (start, end) offsets into ``text``, in order (core/answer/evidence.py). Empty: all of it.
    read: tuple[Span, ...] = ()
    format: str = PDF_FORMAT  # the document's format: "pdf" has pages, the others parts
    locator: str = ""  # where a reader finds it: "p. 12", "section 9.10.1 ¶ 3"

    def to_json(self) -> JsonObject:
        return dataclasses.asdict(self)

    @property
    def where(self) -> str:
        return self.locator or locate(self.format, self.page, self.page_label)


def locate(fmt: str, page: int, label: str, paragraph: int = 0) -> str:
    """A locator a reader understands: "p. iv" for a PDF page; "section 9.10.1 ¶ 3" for the
    third paragraph of a reflowable document's part (a slide: "slide 4 ¶ 2")."""
    if fmt == PDF_FORMAT:
        return f"p. {label or page}"
    name = "slide" if fmt == "pptx" else "section"
    where = f"{name} {label or page}" if label else f"part {page}"
    return f"{where} ¶ {paragraph}" if paragraph > 0 else where


# --------------------------------------------------------------------------- library


class SourceState(StrEnum):
    """Whether a chunk an answer cited still says what it said."""

    CURRENT = "current"
    CHANGED = "changed"  # the file at that path now has other bytes (a new version)
    REMOVED = "removed"  # the file is gone


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    path: str
    title: str
    status: DocStatus
    pages: int
    chunks: int
    version: int = 1
    error: str = ""
    bad_pages: tuple[int, ...] = ()
    size: int = 0
    mtime: float = 0.0
    ocr_pages: int = 0  # pages whose text was read by OCR
    format: str = PDF_FORMAT

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["status"] = str(self.status)
        data["bad_pages"] = list(self.bad_pages)
        return data


@dataclass(frozen=True)
class DocumentPart:
    """One part of a reflowable document as stored, for the document view: its text and
    blocks (offsets into ``text``, the offsets a citation's span uses), its label, and how
    many parts the document has."""

    doc_id: str
    page: int
    label: str
    text: str
    blocks: tuple[TextBlock, ...]
    parts: int
    format: str = ""
