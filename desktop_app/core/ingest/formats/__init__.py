"""One reader per document format behind one interface. Qt-free.

:func:`read_document` picks the reader by the file's suffix and never raises for a bad file:
a damaged or hostile one (truncated zip, zip bomb, entity bomb, binary junk named ``.md``)
ends as a status with a message. The PDF reader is core/ingest/extract.py; every other
format is reflowable: its pages are parts (core/ingest/formats/parts.py) with blocks. Each
runs in a parse worker (core/ingest/parse_pool.py) under the per-file time limit and memory
cap.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from desktop_app.core.ids import sha256_file
from desktop_app.core.ingest.formats.containers import BadContainer
from desktop_app.core.ingest.formats.parts import PartBuilder
from desktop_app.core.ingest.titles import usable_metadata
from desktop_app.core.types import DOCUMENT_SUFFIXES, PDF_FORMAT, DocStatus, ExtractedDocument

__all__ = ["READERS", "SUFFIXES", "DocumentReader", "format_of", "read_document"]

logger = logging.getLogger(__name__)

# Bigger text files than this are not documents a person reads (logs, dumps).
MAX_TEXT_BYTES = 64 * 1024 * 1024


class DocumentReader(Protocol):
    """Reads one format: ``formats`` are its names, ``suffixes`` the file names it takes."""

    format: str
    suffixes: tuple[str, ...]

    def read(self, path: str, passwords: Sequence[str] = (), *, title_only: bool = False,
             ocr: bool = False, on_ocr: Callable[[int], None] | None = None,
             on_pages: Callable[[int], None] | None = None) -> ExtractedDocument:
        """The document at ``path``; never raises for a bad file. ``on_ocr(n)``: told before
        n pages are read by OCR; ``on_pages(n)``: told the page count of a paged document
        before its pages are read (the parse pool gives a long document more time)."""
        ...


class PdfReader:
    format: str = PDF_FORMAT
    suffixes: tuple[str, ...] = (".pdf",)

    def read(self, path: str, passwords: Sequence[str] = (), *, title_only: bool = False,
             ocr: bool = False, on_ocr: Callable[[int], None] | None = None,
             on_pages: Callable[[int], None] | None = None) -> ExtractedDocument:
        from desktop_app.core.ingest.extract import extract_document

        return extract_document(path, passwords, title_only=title_only, ocr=ocr, on_ocr=on_ocr,
                                on_pages=on_pages)


def _read_text_file(path: str, kind: str) -> str:
    from desktop_app.core.ingest.formats.text import decode_text

    with open(path, "rb") as handle:
        data = handle.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise BadContainer(f"not a {kind} Folio reads: over {MAX_TEXT_BYTES // 2**20} MB of text")
    return decode_text(data, kind)[0]


def _html(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.html import html_title, parse_html, walk_html

    with open(path, "rb") as handle:
        data = handle.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise BadContainer(f"not an HTML page Folio reads: over {MAX_TEXT_BYTES // 2**20} MB")
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise BadContainer("not a valid HTML page: it holds binary data")
    try:
        root = parse_html(data)
    except Exception as exc:  # noqa: BLE001 - lxml's ParserError for an empty or binary page
        raise BadContainer(f"not a valid HTML page ({exc})") from exc
    builder = PartBuilder()
    walk_html(root, builder)
    return html_title(root), builder


def _markdown(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.markdown import read_markdown

    return read_markdown(_read_text_file(path, "Markdown file"))


def _text(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.text import read_text_blocks

    builder = PartBuilder()
    read_text_blocks(_read_text_file(path, "text file"), builder)
    return "", builder


def _epub(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.epub import read_epub

    return read_epub(path)


def _docx(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.docx import read_docx

    return read_docx(path)


def _odt(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.odt import read_odt

    return read_odt(path)


def _pptx(path: str) -> tuple[str, PartBuilder]:
    from desktop_app.core.ingest.formats.pptx import read_pptx

    return read_pptx(path)


class ReflowableReader:
    """A format read into parts and blocks by ``parse(path) -> (metadata title, builder)``."""

    def __init__(self, fmt: str, name: str, suffixes: tuple[str, ...],
                 parse: Callable[[str], tuple[str, PartBuilder]]) -> None:
        self.format = fmt
        self.name = name  # what the user calls it: "DOCX", "EPUB"
        self.suffixes = suffixes
        self._parse = parse

    def read(self, path: str, passwords: Sequence[str] = (), *, title_only: bool = False,
             ocr: bool = False, on_ocr: Callable[[int], None] | None = None,
             on_pages: Callable[[int], None] | None = None) -> ExtractedDocument:
        file = Path(path)
        base = ExtractedDocument(path=str(path), doc_id="", size=0, mtime=0.0, title=file.stem,
                                 status=DocStatus.UNREADABLE, format=self.format)
        try:
            stat = os.stat(file)
            digest = sha256_file(file)  # streamed: a huge file is refused later, not loaded
        except OSError as exc:
            return _replace(base, error=f"Cannot open the file: {exc.strerror or exc}.")
        base = _replace(base, doc_id=digest, size=stat.st_size, mtime=stat.st_mtime)
        try:
            metadata, builder = self._parse(str(path))
            pages = builder.parts()
        except BadContainer as exc:
            status = (DocStatus.DRM_PROTECTED if exc.drm
                      else DocStatus.NEEDS_PASSWORD if exc.password else DocStatus.UNREADABLE)
            message = str(exc)
            if status is DocStatus.UNREADABLE:
                message = f"Unreadable: {message}."
            return _replace(base, status=status, error=message)
        except MemoryError:
            return _replace(base, error=f"Unreadable: this {self.name} needs more memory than "
                                        "Folio allows a file.")
        except RecursionError:
            return _replace(base, error=f"Unreadable: this {self.name} nests too deeply.")
        except Exception as exc:  # noqa: BLE001 - a bad file becomes a status, never a crash
            logger.info("cannot read %s: %r", path, exc)
            return _replace(base, error=f"Unreadable: not a valid {self.name} "
                                        f"({type(exc).__name__}: {str(exc)[:200]}).")
        title = usable_metadata(metadata) or builder.first_heading[:200] or file.stem
        if not pages:
            return _replace(base, title=title, status=DocStatus.NO_TEXT_LAYER,
                            error=f"This {self.name} holds no text Folio can read "
                                  "(images only, or empty).")
        return _replace(base, title=title, status=DocStatus.INDEXED, page_count=len(pages),
                        pages=() if title_only else tuple(pages))


def _replace(doc: ExtractedDocument, **changes: object) -> ExtractedDocument:
    import dataclasses

    return dataclasses.replace(doc, **changes)  # type: ignore[arg-type]


READERS: tuple[DocumentReader, ...] = (
    PdfReader(),
    ReflowableReader("html", "HTML page", (".html", ".htm", ".xhtml"), _html),
    ReflowableReader("epub", "EPUB", (".epub",), _epub),
    ReflowableReader("docx", "DOCX", (".docx",), _docx),
    ReflowableReader("odt", "ODT", (".odt",), _odt),
    ReflowableReader("pptx", "PPTX", (".pptx",), _pptx),
    ReflowableReader("md", "Markdown file", (".md", ".markdown"), _markdown),
    ReflowableReader("txt", "text file", (".txt",), _text),
)
SUFFIXES: frozenset[str] = frozenset(s for r in READERS for s in r.suffixes)
assert SUFFIXES == DOCUMENT_SUFFIXES, "core/types.DOCUMENT_SUFFIXES names every reader's suffixes"
_BY_SUFFIX = {s: r for r in READERS for s in r.suffixes}


def format_of(path: str | Path) -> str:
    """The format Folio reads ``path`` as ("" when it reads no such file)."""
    reader = _BY_SUFFIX.get(Path(path).suffix.lower())
    return reader.format if reader is not None else ""


def read_document(path: str, passwords: Sequence[str] = (), *, title_only: bool = False,
                  ocr: bool = False, on_ocr: Callable[[int], None] | None = None,
                  on_pages: Callable[[int], None] | None = None) -> ExtractedDocument:
    """Read ``path`` with the reader of its suffix (PDF when none matches)."""
    reader = _BY_SUFFIX.get(Path(path).suffix.lower(), READERS[0])
    return reader.read(path, passwords, title_only=title_only, ocr=ocr, on_ocr=on_ocr,
                       on_pages=on_pages)
