"""One index run over a folder: scan, detect changes, parse (worker processes), chunk,
embed and store, committing per file. Qt-free, no asyncio: the facade runs it on a thread.

Parsing happens in worker processes while this thread embeds the previous file, so
the two overlap. Every file is written in one transaction: a crash or a cancel leaves
whole files only, and the next run picks up where this one stopped.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from desktop_app.core import chunking, parse_pool
from desktop_app.core import terms as termlib
from desktop_app.core.ids import sha256_file
from desktop_app.core.store import Store
from desktop_app.core.types import (
    DocStatus,
    ExtractedDocument,
    FileIndexed,
    IndexEvent,
    IndexProgress,
    IndexSummary,
)

logger = logging.getLogger(__name__)

EMBED_BATCH = 32
# Statuses worth another try when the bytes did not change but the situation did.
_RETRY_WITH_PASSWORD = {DocStatus.NEEDS_PASSWORD.value}


def scan_folder(folder: Path) -> list[Path]:
    """Every PDF under ``folder`` (recursively, hidden folders skipped), sorted."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(".pdf") and not name.startswith("."):
                found.append(Path(root) / name)
    return found


@dataclass
class _Tally:
    started: float = field(default_factory=time.monotonic)
    files_total: int = 0
    files_done: int = 0
    pages_done: int = 0
    chunks_done: int = 0
    bytes_total: int = 0
    bytes_done: int = 0
    documents: int = 0
    pages: int = 0
    chunks: int = 0
    unchanged: int = 0
    failed: list[FileIndexed] = field(default_factory=list)

    def progress(self, current: str) -> IndexProgress:
        elapsed = time.monotonic() - self.started
        eta = None
        if self.bytes_done > 0 and self.bytes_total > self.bytes_done:
            eta = elapsed * (self.bytes_total - self.bytes_done) / self.bytes_done
        elif self.files_done >= self.files_total:
            eta = 0.0
        return IndexProgress(
            files_done=self.files_done, files_total=self.files_total, pages_done=self.pages_done,
            chunks_done=self.chunks_done, current_file=current, elapsed=elapsed, eta_seconds=eta,
        )


class Indexer:
    def __init__(
        self,
        store: Store,
        embedder: object | None,
        *,
        parse_timeout_s: float = 60.0,
        workers: int | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.parse_timeout_s = parse_timeout_s
        self.workers = workers or max(1, min(2, (os.cpu_count() or 2) - 1))

    @property
    def model_id(self) -> str:
        return str(getattr(self.embedder, "model_id", "")) if self.embedder is not None else ""

    def run(
        self,
        folder: Path | str,
        emit: Callable[[IndexEvent], None],
        should_cancel: Callable[[], bool] = lambda: False,
        passwords: dict[str, str] | None = None,
    ) -> IndexSummary:
        folder = Path(folder).expanduser().resolve()
        passwords = {str(Path(k).resolve()): v for k, v in (passwords or {}).items()}
        tally = _Tally()
        paths = scan_folder(folder)
        tally.files_total = len(paths)
        to_parse: list[Path] = []
        for path in paths:
            if should_cancel():
                return self._summary(tally, [], cancelled=True)
            size = path.stat().st_size
            tally.bytes_total += size
            outcome = self._unchanged(path, passwords)
            if outcome is None:
                to_parse.append(path)
                continue
            tally.files_done += 1
            tally.bytes_done += size
            tally.unchanged += 1
            emit(outcome)
            emit(tally.progress(str(path)))

        def password_list(p: str) -> list[str]:
            given = passwords.get(str(Path(p).resolve()))
            return [given] if given else []

        docs: Iterator[ExtractedDocument] = parse_pool.parse_many(
            [str(p) for p in to_parse],
            passwords_for=password_list,
            timeout_s=self.parse_timeout_s,
            workers=self.workers,
            should_cancel=should_cancel,
        )
        for doc in docs:
            if should_cancel():
                break
            event = self._store_document(doc, tally, emit, should_cancel)
            if event is None:  # cancelled while embedding: the file was not written
                break
            tally.files_done += 1
            tally.bytes_done += doc.size
            emit(event)
            emit(tally.progress(doc.path))
        if should_cancel():
            return self._summary(tally, [], cancelled=True)
        # Last, so that a file moved inside the folder is first found at its new path and
        # keeps its chunks; only then is the old path retired.
        removed = self._mark_removed(folder, {str(p) for p in paths})
        return self._summary(tally, removed, cancelled=False)

    # ------------------------------------------------------------------ steps

    def _mark_removed(self, folder: Path, present: set[str]) -> list[str]:
        prefix = str(folder) + os.sep
        gone = [
            r.path for r in self.store.file_records()
            if r.path.startswith(prefix) and r.path not in present and not r.removed
        ]
        if gone:
            self.store.mark_removed(gone)
        return gone

    def _unchanged(self, path: Path, passwords: dict[str, str]) -> FileIndexed | None:
        """A FileIndexed(unchanged=True) if nothing needs doing for ``path``, else None."""
        stat = path.stat()
        record = self.store.file_record(str(path))
        retry = str(path) in passwords
        if (
            record is not None and not record.removed and record.size == stat.st_size
            and record.mtime == stat.st_mtime and not retry
            and (record.doc_id is None or self.store.has_document(record.doc_id)
                 or record.status not in (DocStatus.INDEXED, DocStatus.INDEXED_PARTIALLY))
        ):
            return self._as_event(str(path), record.doc_id, record.status, record.error)
        doc_id = sha256_file(path)
        if record is not None and record.doc_id == doc_id and not retry and (
            self.store.has_document(doc_id) or record.status not in _RETRY_WITH_PASSWORD
        ) and record.status != DocStatus.TIMED_OUT:
            # Touched but not changed, or restored after removal.
            self.store.set_file(str(path), doc_id, stat.st_size, stat.st_mtime, record.status, record.error)
            return self._as_event(str(path), doc_id, record.status, record.error)
        if self.store.has_document(doc_id):
            # The same bytes are already indexed under another path: a move, rename or copy.
            status = self.store.document_status(doc_id) or DocStatus.INDEXED.value
            self.store.set_file(str(path), doc_id, stat.st_size, stat.st_mtime, status)
            return self._as_event(str(path), doc_id, status, "")
        return None

    def _as_event(self, path: str, doc_id: str | None, status: str, error: str) -> FileIndexed:
        pages = chunks = 0
        bad: tuple[int, ...] = ()
        if doc_id:
            rows = self.store.query(
                "SELECT pages, chunks, bad_pages FROM documents WHERE doc_id = ?", [doc_id]
            )
            if rows:
                pages, chunks = int(rows[0][0]), int(rows[0][1])
                bad = tuple(int(x) for x in str(rows[0][2]).split(",") if x)
        return FileIndexed(
            path=path, status=DocStatus(status), pages=pages, chunks=chunks, unchanged=True,
            error=error, bad_pages=bad,
        )

    def _store_document(
        self,
        doc: ExtractedDocument,
        tally: _Tally,
        emit: Callable[[IndexEvent], None],
        should_cancel: Callable[[], bool],
    ) -> FileIndexed | None:
        if not doc.status.searchable:
            self.store.set_file(doc.path, doc.doc_id or None, doc.size, doc.mtime, str(doc.status), doc.error)
            event = FileIndexed(
                path=doc.path, status=doc.status, pages=doc.page_count, chunks=0, error=doc.error,
                bad_pages=tuple(doc.bad_pages),
            )
            tally.failed.append(event)
            return event
        count = getattr(self.embedder, "count_tokens", None)
        max_tokens = int(getattr(self.embedder, "max_tokens", 256)) - 16
        chunks = chunking.chunk_document(doc, max_tokens=min(220, max_tokens), count_tokens=count)
        chunk_terms = [dict(termlib.term_counts(c.text)) for c in chunks]
        vectors = None
        if self.embedder is not None and chunks:
            import numpy as np

            parts = []
            for start in range(0, len(chunks), EMBED_BATCH):
                if should_cancel():
                    return None
                batch = [c.text for c in chunks[start : start + EMBED_BATCH]]
                parts.append(self.embedder.embed(batch))  # type: ignore[attr-defined]
                tally.chunks_done += len(batch)
                emit(tally.progress(doc.path))
            vectors = np.vstack(parts)
        else:
            tally.chunks_done += len(chunks)
        version = self.store.next_version(doc.path, doc.doc_id)
        self.store.write_document(doc, chunks, chunk_terms, vectors, self.model_id, version)
        tally.documents += 1
        tally.pages += doc.page_count
        tally.pages_done += doc.page_count
        tally.chunks += len(chunks)
        return FileIndexed(
            path=doc.path, status=doc.status, pages=doc.page_count, chunks=len(chunks),
            error=doc.error, bad_pages=tuple(doc.bad_pages),
        )

    def _summary(self, tally: _Tally, removed: list[str], cancelled: bool) -> IndexSummary:
        counts = self.store.counts()
        return IndexSummary(
            documents=counts["documents"], pages=counts["pages"], chunks=counts["chunks"],
            unchanged=tally.unchanged, failed=tuple(tally.failed), removed=tuple(removed),
            cancelled=cancelled, seconds=time.monotonic() - tally.started,
        )

    # ------------------------------------------------------------------ rebuild derived data

    def reindex(self, emit: Callable[[IndexEvent], None], should_cancel: Callable[[], bool] = lambda: False) -> int:
        """Rebuild the BM25 postings and any missing vectors from the chunks table."""
        texts = self.store.all_chunk_texts()
        self.store.rebuild_postings((k, dict(termlib.term_counts(t))) for k, t in texts)
        if self.embedder is None:
            return 0
        missing = self.store.chunks_without_vectors(self.model_id)
        done = 0
        for start in range(0, len(missing), EMBED_BATCH * 4):
            if should_cancel():
                break
            batch = missing[start : start + EMBED_BATCH * 4]
            vectors = self.embedder.embed([t for _, t in batch])  # type: ignore[attr-defined]
            self.store.add_vectors([k for k, _ in batch], vectors, self.model_id)
            done += len(batch)
            emit(IndexProgress(files_done=0, files_total=0, pages_done=0, chunks_done=done,
                               current_file="", elapsed=0.0, eta_seconds=None))
        return done
