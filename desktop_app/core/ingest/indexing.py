"""One index run over a folder: scan, detect changes, parse (worker processes), chunk,
embed and store, committing per file. Qt-free, no asyncio: the facade runs it on a thread.

Three stages overlap: worker processes parse PDFs, a feeder thread chunks them
(core/ingest/feed.py), and the calling thread embeds and writes. Which files need parsing
is core/ingest/changes.py's. Every file is written in one transaction: a crash or a cancel
leaves whole files only, and the next run finds them unchanged and goes on with the rest.

Cancellation is checked between embedder calls, which are sized to last well under a
second, so a cancelled run returns promptly and writes nothing half-embedded.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.ingest import changes, chunking, parse_pool
from desktop_app.core.ingest.changes import scan_folder
from desktop_app.core.ingest.feed import Prepared, StageSeconds, prepared_documents
from desktop_app.core.stages import Embedder, LibraryWriter
from desktop_app.core.text import words as termlib
from desktop_app.core.types import (
    DocStatus,
    ExtractedDocument,
    FileIndexed,
    IndexEvent,
    IndexProgress,
    IndexSummary,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "EMBED_BATCH", "INGEST_RULES", "Indexer", "StageSeconds", "default_workers", "scan_folder",
]

logger = logging.getLogger(__name__)

EMBED_BATCH = 32  # texts per embedder call when rebuilding vectors (``reindex``)
CALL_SECONDS = 0.3  # target length of one embedder call: the cancel latency while embedding
CALL_MIN, CALL_MAX = 4, 16  # chunks per embedder call (8-16 measured as cheap per chunk as 32)
# The version of the rules a document's title (titles.py) and its chunks' section names
# (chunking.py) are made by. Bump it when either changes: an index run re-derives them for
# the unchanged documents of its folder (the title from the first page, in a parse worker;
# the sections from the stored pages), without parsing or embedding anything again.
# 1: metadata titles; 2: titles.choose_title, separators and running heads never named;
# 3: a table of contents page heads nothing after it (headings.contents_title); 4: a
# heading repeated right under itself is named once in a section path (chunking).
INGEST_RULES = 4


def default_workers() -> int:
    """Two parse workers even on two cores: a slow file then never stalls the pipeline
    (parsing costs a tenth of embedding, so the second worker is mostly idle)."""
    return max(2, min(4, (os.cpu_count() or 2) - 1))


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
    def __init__(self, store: LibraryWriter, embedder: Embedder | None, *, parse_timeout_s: float = 60.0,
                 workers: int | None = None, ocr: bool = False) -> None:
        self.store = store
        self.embedder = embedder
        self.parse_timeout_s = parse_timeout_s
        self.ocr = ocr  # read scanned and garbled pages with OCR (core/ingest/ocr.py)
        self.workers = workers or default_workers()
        self.stages = StageSeconds()
        self._call_size = CALL_MIN * 2

    @property
    def model_id(self) -> str:
        return self.embedder.model_id if self.embedder is not None else ""

    @property
    def chunking_key(self) -> str:
        """What chunks are cut for: the chunker's version and the embedder (its tokens count
        the chunk sizes). A stored document with another key is cut again (:meth:`rechunk`)."""
        return f"{chunking.CHUNKER_VERSION}:{self.model_id}"

    def run(
        self,
        folder: Path | str,
        emit: Callable[[IndexEvent], None],
        should_cancel: Callable[[], bool] = lambda: False,
        passwords: dict[str, str] | None = None,
    ) -> IndexSummary:
        folder = Path(folder).expanduser().resolve()
        passwords = {str(Path(k).resolve()): v for k, v in (passwords or {}).items()}
        self.stages = StageSeconds()
        tally = _Tally()
        paths = scan_folder(folder)
        tally.files_total = len(paths)
        to_parse: list[tuple[int, str]] = []  # (size, path)
        for path in paths:
            if should_cancel():
                return self._summary(tally, [], cancelled=True)
            try:
                size = path.stat().st_size
                outcome = changes.unchanged(self.store, path, passwords, self.ocr)
            except FileNotFoundError:  # deleted since the scan: the removal pass retires it
                tally.files_total -= 1
                continue
            tally.bytes_total += size
            if outcome is None:
                to_parse.append((size, str(path)))
                continue
            tally.files_done += 1
            tally.bytes_done += size
            tally.unchanged += 1
            emit(outcome)
            emit(tally.progress(str(path)))

        # Smallest first: the embedder starts sooner, and big files are parsed meanwhile.
        queue_order = [path for _, path in sorted(to_parse)]
        items = prepared_documents(
            queue_order, passwords, should_cancel, self._chunk, self.stages,
            timeout_s=self.parse_timeout_s, workers=self.workers, ocr=self.ocr,
        )
        with closing(items):
            for item in items:
                event = self._store_document(item, tally, emit, should_cancel)
                if event is None:  # cancelled while embedding: the file was not written
                    break
                tally.files_done += 1
                tally.bytes_done += item.doc.size
                emit(event)
                emit(tally.progress(item.doc.path))
        if should_cancel():
            return self._summary(tally, [], cancelled=True)
        # Last, so that a file moved inside the folder is first found at its new path and
        # keeps its chunks; only then is the old path retired.
        removed = changes.mark_removed(self.store, folder, {str(p) for p in paths})
        self._apply_rules(folder, passwords, should_cancel)
        self.rechunk(emit, should_cancel, folder)
        return self._summary(tally, removed, cancelled=should_cancel())

    # ------------------------------------------------------------------ the pipeline

    def _chunk(self, doc: ExtractedDocument) -> Prepared:
        if not doc.status.searchable:
            return Prepared(doc, [], [])
        count = self.embedder.count_tokens if self.embedder is not None else None
        chunks = chunking.chunk_document(doc, max_tokens=self._chunk_tokens(), count_tokens=count)
        return Prepared(doc, chunks, [dict(termlib.term_counts(c.text)) for c in chunks])

    def _chunk_tokens(self) -> int:
        return min(220, (self.embedder.max_tokens if self.embedder is not None else 256) - 16)

    def _embed(
        self, texts: list[str], should_cancel: Callable[[], bool], done: Callable[[int], None]
    ) -> np.ndarray | None:
        """Vectors of ``texts`` (input order), or None if cancelled first.

        Texts go to the embedder shortest first (so each call pads little) in calls
        sized to last about :data:`CALL_SECONDS`, with a cancel check between calls."""
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: np.ndarray | None = None
        start = 0
        while start < len(order):
            if should_cancel():
                return None
            picked = order[start : start + self._call_size]
            began = time.perf_counter()
            assert self.embedder is not None  # only called when there is one
            vectors = self.embedder.embed_passages([texts[i] for i in picked])
            spent = time.perf_counter() - began
            self.stages.embedding += spent
            self.stages.embedded_chunks += len(picked)
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[picked] = vectors
            per_chunk = spent / len(picked)
            self._call_size = max(CALL_MIN, min(CALL_MAX, int(CALL_SECONDS / max(per_chunk, 1e-6))))
            start += len(picked)
            done(len(picked))
        return out

    def _store_document(self, item: Prepared, tally: _Tally, emit: Callable[[IndexEvent], None],
                        should_cancel: Callable[[], bool]) -> FileIndexed | None:
        doc, chunks = item.doc, item.chunks
        if not doc.status.searchable:
            self.store.set_file(doc.path, doc.doc_id or None, doc.size, doc.mtime, str(doc.status), doc.error)
            event = FileIndexed(
                path=doc.path, status=doc.status, pages=doc.page_count, chunks=0, error=doc.error,
                bad_pages=tuple(doc.bad_pages),
            )
            tally.failed.append(event)
            return event
        vectors = None
        if self.embedder is not None and chunks:
            def done(n: int) -> None:
                tally.chunks_done += n
                emit(tally.progress(doc.path))

            vectors = self._embed([c.text for c in chunks], should_cancel, done)
            if vectors is None:
                return None
        else:
            tally.chunks_done += len(chunks)
        began = time.perf_counter()
        version = self.store.next_version(doc.path, doc.doc_id)
        self.store.write_document(doc, chunks, item.terms, vectors, self.model_id, version,
                                  rules=INGEST_RULES, chunked_with=self.chunking_key)
        self.stages.writing += time.perf_counter() - began
        tally.documents += 1
        tally.pages_done += doc.page_count
        return FileIndexed(
            path=doc.path, status=doc.status, pages=doc.page_count, chunks=len(chunks),
            error=doc.error, bad_pages=tuple(doc.bad_pages), ocr_pages=doc.ocr_pages,
        )

    # ------------------------------------------------------------------ older ingest rules

    def _apply_rules(self, folder: Path | None, passwords: dict[str, str],
                     should_cancel: Callable[[], bool]) -> int:
        """Re-derive the titles and section names that older rules made, of this folder's
        documents (None: every document); returns how many were brought up to
        :data:`INGEST_RULES`."""
        prefix = str(folder) + os.sep if folder is not None else ""
        stale = [(d, p) for d, p in self.store.documents_before_rules(INGEST_RULES)
                 if p.startswith(prefix)]
        if not stale or should_cancel():
            return 0
        began = time.monotonic()
        paths = {path: doc_id for doc_id, path in stale}
        titles: dict[str, str] = {}
        docs = parse_pool.parse_many(
            list(paths), passwords_for=lambda p: [passwords[p]] if p in passwords else [],
            timeout_s=self.parse_timeout_s, workers=1, should_cancel=should_cancel,
            title_only=True,
        )
        try:
            for doc in docs:
                if doc.status in (DocStatus.INDEXED, DocStatus.INDEXED_PARTIALLY):
                    titles[paths[doc.path]] = doc.title
        finally:
            docs.close()
        count = self.embedder.count_tokens if self.embedder is not None else None
        done = 0
        for doc_id, path in stale:
            if should_cancel():
                break
            pages = tuple(self.store.document_pages(doc_id))
            stored = ExtractedDocument(path=path, doc_id=doc_id, size=0, mtime=0.0, title="",
                                       status=DocStatus.INDEXED, page_count=len(pages), pages=pages,
                                       format=self.store.document_format(doc_id) or "pdf")
            sections = chunking.sections_of(stored, self.store.chunk_spans(doc_id),
                                            max_tokens=self._chunk_tokens(), count_tokens=count)
            self.store.apply_rules(doc_id, titles.get(doc_id), sections, INGEST_RULES)
            done += 1
        logger.info("ingest rules %d applied to %d documents in %.1f s", INGEST_RULES, done,
                    time.monotonic() - began)
        return done

    # ------------------------------------------------------------------ another chunker or embedder

    def rechunk(self, emit: Callable[[IndexEvent], None], should_cancel: Callable[[], bool] = lambda: False,
                folder: Path | None = None) -> int:
        """Cut again, from their stored pages, the chunks of the documents (of ``folder``;
        None: all) that were cut for another chunker version or embedder, and embed them;
        one transaction per document, so a cancel keeps the documents done. Returns how many."""
        prefix = str(folder) + os.sep if folder is not None else ""
        stale = [(d, p) for d, p in self.store.documents_chunked_otherwise(self.chunking_key)
                 if p.startswith(prefix)]
        if not stale or should_cancel():
            return 0
        started, count = time.monotonic(), self.embedder.count_tokens if self.embedder is not None else None
        logger.info("cutting %d documents again for %s", len(stale), self.chunking_key)
        done = chunks_done = 0
        for number, (doc_id, path) in enumerate(stale):
            pages = tuple(self.store.document_pages(doc_id))
            stored = ExtractedDocument(path=path, doc_id=doc_id, size=0, mtime=0.0, title="",
                                       status=DocStatus.INDEXED, page_count=len(pages), pages=pages,
                                       format=self.store.document_format(doc_id) or "pdf")
            chunks = chunking.chunk_document(stored, max_tokens=self._chunk_tokens(), count_tokens=count)
            terms = [dict(termlib.term_counts(c.text)) for c in chunks]

            def progress(n: int, number: int = number, path: str = path) -> None:
                nonlocal chunks_done
                chunks_done += n
                emit(IndexProgress(files_done=number, files_total=len(stale), pages_done=0,
                                   chunks_done=chunks_done, current_file=path,
                                   elapsed=time.monotonic() - started, eta_seconds=None))

            vectors = None
            if self.embedder is not None and chunks:
                vectors = self._embed([c.text for c in chunks], should_cancel, progress)
                if vectors is None:
                    break
            self.store.replace_chunks(doc_id, chunks, terms, vectors, self.model_id, self.chunking_key)
            done += 1
            if should_cancel():
                break
        logger.info("%d documents cut again in %.1f s", done, time.monotonic() - started)
        return done

    def _summary(self, tally: _Tally, removed: list[str], cancelled: bool) -> IndexSummary:
        counts = self.store.counts()
        s = self.stages
        logger.info(
            "index run: %d files parsed, %d chunks embedded in %.1f s; waited %.1f s for parsing,"
            " chunked %.1f s (in parallel), wrote %.1f s", tally.documents, s.embedded_chunks,
            s.embedding, s.waiting, s.chunking, s.writing,
        )
        return IndexSummary(
            documents=counts["documents"], pages=counts["pages"], chunks=counts["chunks"],
            unchanged=tally.unchanged, failed=tuple(tally.failed), removed=tuple(removed),
            cancelled=cancelled, seconds=time.monotonic() - tally.started,
        )

    # ------------------------------------------------------------------ rebuild derived data

    def reindex(self, emit: Callable[[IndexEvent], None], should_cancel: Callable[[], bool] = lambda: False) -> int:
        """Rebuild the BM25 postings and any missing vectors from the chunks table, and the
        titles and section names older ingest rules made.

        Vectors are written every :data:`EMBED_BATCH` chunks, so a cancel or a crash keeps
        what was done and the next ``reindex`` embeds only the rest."""
        started = time.monotonic()
        self._apply_rules(None, {}, should_cancel)
        self.rechunk(emit, should_cancel)
        texts = self.store.all_chunk_texts()
        self.store.rebuild_postings((k, dict(termlib.term_counts(t))) for k, t in texts)
        if self.embedder is None:
            return 0
        missing = self.store.chunks_without_vectors(self.model_id)
        written = embedded = 0

        def progress(n: int) -> None:
            nonlocal embedded
            embedded += n
            emit(IndexProgress(files_done=0, files_total=0, pages_done=0, chunks_done=embedded,
                               current_file="", elapsed=time.monotonic() - started, eta_seconds=None))

        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            vectors = self._embed([t for _, t in batch], should_cancel, progress)
            if vectors is None:
                break
            self.store.add_vectors([k for k, _ in batch], vectors, self.model_id)
            written += len(batch)
        return written

