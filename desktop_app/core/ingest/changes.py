"""Change detection for an index run: the documents of a folder (every format
core/ingest/formats reads), whether a file needs parsing
again, and the paths that are gone. Qt-free, no asyncio. A file that timed out, or a
scanned one last read without OCR now that OCR is on, is parsed again.
"""

from __future__ import annotations

import os
from pathlib import Path

from desktop_app.core.ids import sha256_file
from desktop_app.core.ingest.ocr import OCR_TRIED
from desktop_app.core.ingest.text_quality import GARBLE_REASONS
from desktop_app.core.stages import LibraryWriter
from desktop_app.core.types import DocStatus, FileIndexed, is_document_file, is_hidden

__all__ = ["awaits_ocr", "mark_removed", "scan_folder", "unchanged"]

# Statuses worth another try when the bytes did not change but the situation did.
_RETRY_WITH_PASSWORD = {DocStatus.NEEDS_PASSWORD.value}


def scan_folder(folder: Path) -> list[Path]:
    """Every document Folio reads under ``folder`` (PDF, HTML, EPUB, DOCX, ODT, PPTX,
    Markdown, text; recursively, hidden folders and files and Office lock files skipped),
    sorted."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not is_hidden(d))
        for name in sorted(files):
            if is_document_file(name):
                found.append(Path(root) / name)
    return found


def mark_removed(store: LibraryWriter, folder: Path, present: set[str]) -> list[str]:
    """Retire the live paths under ``folder`` that are not ``present``; returns them."""
    prefix = str(folder) + os.sep
    gone = [
        r.path for r in store.file_records()
        if r.path.startswith(prefix) and r.path not in present and not r.removed
    ]
    if gone:
        store.mark_removed(gone)
    return gone


def unchanged(store: LibraryWriter, path: Path, passwords: dict[str, str], ocr: bool) -> FileIndexed | None:
    """A FileIndexed(unchanged=True) if nothing needs doing for ``path``, else None.

    Size and mtime first; when they differ, the sha256 of the bytes decides (a touched
    file, or the same bytes moved or copied here, keeps its chunks). ``ocr``: whether this
    run reads scanned and garbled pages with OCR."""
    stat = path.stat()
    record = store.file_record(str(path))
    retry = str(path) in passwords
    if (
        record is not None and not record.removed and record.size == stat.st_size
        and record.mtime == stat.st_mtime and not retry
        # A file that timed out is tried again: the machine may only have been busy.
        and record.status != DocStatus.TIMED_OUT
        and not awaits_ocr(ocr, record.status, record.error)
        and (record.doc_id is None or store.has_document(record.doc_id)
             or record.status not in (DocStatus.INDEXED, DocStatus.INDEXED_PARTIALLY))
    ):
        return _as_event(store, str(path), record.doc_id, record.status, record.error)
    doc_id = sha256_file(path)
    if record is not None and record.doc_id == doc_id and not retry and (
        store.has_document(doc_id) or record.status not in _RETRY_WITH_PASSWORD
    ) and record.status != DocStatus.TIMED_OUT and not awaits_ocr(ocr, record.status, record.error):
        # Touched but not changed, or restored after removal.
        store.set_file(str(path), doc_id, stat.st_size, stat.st_mtime, record.status, record.error)
        return _as_event(store, str(path), doc_id, record.status, record.error)
    if store.has_document(doc_id):
        # The same bytes are already indexed under another path: a move, rename or copy.
        status = store.document_status(doc_id) or DocStatus.INDEXED.value
        store.set_file(str(path), doc_id, stat.st_size, stat.st_mtime, status)
        return _as_event(store, str(path), doc_id, status, "")
    return None


def awaits_ocr(ocr: bool, status: str, error: str) -> bool:
    """A scanned or garbled file last read without OCR, now that OCR is on (a file
    OCR has already tried says so in its message, and is not read again)."""
    if not ocr or any(mark in error for mark in OCR_TRIED):
        return False
    if status in (DocStatus.NO_TEXT_LAYER, DocStatus.GARBLED_TEXT):
        return True
    return status == DocStatus.INDEXED_PARTIALLY and any(r in error for r in GARBLE_REASONS)


def _as_event(store: LibraryWriter, path: str, doc_id: str | None, status: str, error: str) -> FileIndexed:
    pages = chunks = ocr = 0
    bad: tuple[int, ...] = ()
    if doc_id:
        totals = store.document_totals(doc_id)
        if totals:
            pages, chunks, bad = totals
        ocr = store.document_ocr_pages(doc_id)
    return FileIndexed(
        path=path, status=DocStatus(status), pages=pages, chunks=chunks, unchanged=True,
        error=error, bad_pages=bad, ocr_pages=ocr,
    )
