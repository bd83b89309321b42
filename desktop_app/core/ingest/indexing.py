"""One index run over a folder: scan, detect changes, parse (worker processes), chunk,
embed and store, committing per file. Qt-free, no asyncio: the facade runs it on a thread.

Three stages overlap. Worker processes parse PDFs (``parse_pool``); a feeder thread
takes their results as they complete, chunks them and counts their terms, and keeps up
to :data:`PREFETCH_DOCS` documents ready; the calling thread embeds and writes. The
embedder (onnxruntime releases the GIL) therefore never waits for a parse unless the
parser really is behind. Every file is written in one transaction: a crash or a cancel
leaves whole files only, and the next run finds them unchanged and goes on with the rest.

Cancellation is checked between embedder calls, which are sized to last well under a
second, so a cancelled run returns promptly and writes nothing half-embedded.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.ids import sha256_file
from desktop_app.core.ingest import chunking, parse_pool
from desktop_app.core.ingest.ocr import OCR_TRIED
from desktop_app.core.ingest.text_quality import GARBLE_REASONS
from desktop_app.core.library.store import Store
from desktop_app.core.stages import Embedder
from desktop_app.core.text import words as termlib
from desktop_app.core.types import (
    Chunk,
    DocStatus,
    ExtractedDocument,
    FileIndexed,
    IndexEvent,
    IndexProgress,
    IndexSummary,
)

logger = logging.getLogger(__name__)

EMBED_BATCH = 32  # texts per embedder call when rebuilding vectors (``reindex``)
PREFETCH_DOCS = 3  # parsed and chunked documents kept ready for the embedder
CALL_SECONDS = 0.3  # target length of one embedder call: the cancel latency while embedding
CALL_MIN, CALL_MAX = 4, 16  # chunks per embedder call (8-16 measured as cheap per chunk as 32)
_POLL_S = 0.1
# Statuses worth another try when the bytes did not change but the situation did.
_RETRY_WITH_PASSWORD = {DocStatus.NEEDS_PASSWORD.value}
# The version of the rules a document's title (titles.py) and its chunks' section names
# (chunking.py) are made by. Bump it when either changes: an index run re-derives them for
# the unchanged documents of its folder (the title from the first page, in a parse worker;
# the sections from the stored pages), without parsing or embedding anything again.
# 1: metadata titles; 2: titles.choose_title, separators and running heads never named.
INGEST_RULES = 2


def scan_folder(folder: Path) -> list[Path]:
    """Every PDF under ``folder`` (recursively, hidden folders skipped), sorted."""
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(".pdf") and not name.startswith("."):
                found.append(Path(root) / name)
    return found


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


@dataclass(frozen=True)
class _Prepared:
    """A parsed document, chunked, with the BM25 term counts of each chunk."""

    doc: ExtractedDocument
    chunks: list[Chunk]
    terms: list[dict[str, int]]


@dataclass(frozen=True)
class _FeedFailed:  # what the feeder thread hands over instead of a document when it crashed
    error: BaseException


_END = object()


@dataclass
class StageSeconds:
    """Where the indexing thread's time went in the last run (wall seconds).

    ``waiting`` is time the embedder sat idle for want of a parsed document: near zero
    when parsing keeps ahead. ``chunking`` runs on the feeder thread, in parallel."""

    waiting: float = 0.0
    embedding: float = 0.0
    writing: float = 0.0
    chunking: float = 0.0
    embedded_chunks: int = 0


class Indexer:
    def __init__(self, store: Store, embedder: Embedder | None, *, parse_timeout_s: float = 60.0,
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
        return str(getattr(self.embedder, "model_id", "")) if self.embedder is not None else ""

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
                outcome = self._unchanged(path, passwords)
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
        with closing(self._prepared(queue_order, passwords, should_cancel)) as items:
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
        removed = self._mark_removed(folder, {str(p) for p in paths})
        self._apply_rules(folder, passwords, should_cancel)
        self.rechunk(emit, should_cancel, folder)
        return self._summary(tally, removed, cancelled=should_cancel())

    # ------------------------------------------------------------------ the pipeline

    def _prepared(
        self, paths: list[str], passwords: dict[str, str], should_cancel: Callable[[], bool]
    ) -> Generator[_Prepared, None, None]:
        """Chunked documents, as the feeder thread makes them; stops on cancel."""
        if not paths:
            return
        ready: queue.Queue[Any] = queue.Queue(maxsize=PREFETCH_DOCS)
        stop = threading.Event()

        def halted() -> bool:
            return stop.is_set() or should_cancel()

        feeder = threading.Thread(
            target=self._feed, args=(paths, passwords, halted, ready), name="folio-parse-feed",
            daemon=True,
        )
        feeder.start()
        try:
            while not should_cancel():
                began = time.perf_counter()
                try:
                    item = ready.get(timeout=_POLL_S)
                except queue.Empty:
                    self.stages.waiting += time.perf_counter() - began
                    if not feeder.is_alive() and ready.empty():
                        return  # the feeder died without a word (cannot happen, but never hang)
                    continue
                self.stages.waiting += time.perf_counter() - began
                if item is _END:
                    return
                if isinstance(item, _FeedFailed):
                    raise item.error
                yield item
        finally:
            stop.set()
            while feeder.is_alive():  # unblock a feeder waiting for room, then let it stop
                try:
                    ready.get(timeout=_POLL_S)
                except queue.Empty:
                    pass
            feeder.join()

    def _feed(self, paths: list[str], passwords: dict[str, str], halted: Callable[[], bool],
              ready: queue.Queue[Any]) -> None:
        """Feeder thread: parse (in worker processes), chunk, count terms, hand over."""

        def password_list(p: str) -> list[str]:
            given = passwords.get(str(Path(p).resolve()))
            return [given] if given else []

        docs = parse_pool.parse_many(
            paths, passwords_for=password_list, timeout_s=self.parse_timeout_s,
            workers=self.workers, should_cancel=halted, ocr=self.ocr,
        )
        last: Any = _END
        try:
            for doc in docs:
                if halted():
                    return
                began = time.perf_counter()
                item = self._chunk(doc)
                self.stages.chunking += time.perf_counter() - began
                if not _put(ready, item, halted):
                    return
        except BaseException as exc:  # handed to the indexing thread, raised there
            last = _FeedFailed(exc)
        finally:
            docs.close()  # stops the parse workers now, not when garbage-collected
        _put(ready, last, halted)

    def _chunk(self, doc: ExtractedDocument) -> _Prepared:
        if not doc.status.searchable:
            return _Prepared(doc, [], [])
        count = self.embedder.count_tokens if self.embedder is not None else None
        chunks = chunking.chunk_document(doc, max_tokens=self._chunk_tokens(), count_tokens=count)
        return _Prepared(doc, chunks, [dict(termlib.term_counts(c.text)) for c in chunks])

    def _chunk_tokens(self) -> int:
        return min(220, (self.embedder.max_tokens if self.embedder is not None else 256) - 16)

    def _embed(
        self, texts: list[str], should_cancel: Callable[[], bool], done: Callable[[int], None]
    ) -> Any:
        """Vectors of ``texts`` (input order), or None if cancelled first.

        Texts go to the embedder shortest first (so each call pads little) in calls
        sized to last about :data:`CALL_SECONDS`, with a cancel check between calls."""
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: Any = None
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

    def _store_document(self, item: _Prepared, tally: _Tally, emit: Callable[[IndexEvent], None],
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
                                       status=DocStatus.INDEXED, page_count=len(pages), pages=pages)
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
                                       status=DocStatus.INDEXED, page_count=len(pages), pages=pages)
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

    # ------------------------------------------------------------------ change detection

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
        """A FileIndexed(unchanged=True) if nothing needs doing for ``path``, else None.

        Size and mtime first; when they differ, the sha256 of the bytes decides (a touched
        file, or the same bytes moved or copied here, keeps its chunks)."""
        stat = path.stat()
        record = self.store.file_record(str(path))
        retry = str(path) in passwords
        if (
            record is not None and not record.removed and record.size == stat.st_size
            and record.mtime == stat.st_mtime and not retry
            # A file that timed out is tried again: the machine may only have been busy.
            and record.status != DocStatus.TIMED_OUT
            and not self._awaits_ocr(record.status, record.error)
            and (record.doc_id is None or self.store.has_document(record.doc_id)
                 or record.status not in (DocStatus.INDEXED, DocStatus.INDEXED_PARTIALLY))
        ):
            return self._as_event(str(path), record.doc_id, record.status, record.error)
        doc_id = sha256_file(path)
        if record is not None and record.doc_id == doc_id and not retry and (
            self.store.has_document(doc_id) or record.status not in _RETRY_WITH_PASSWORD
        ) and record.status != DocStatus.TIMED_OUT and not self._awaits_ocr(record.status, record.error):
            # Touched but not changed, or restored after removal.
            self.store.set_file(str(path), doc_id, stat.st_size, stat.st_mtime, record.status, record.error)
            return self._as_event(str(path), doc_id, record.status, record.error)
        if self.store.has_document(doc_id):
            # The same bytes are already indexed under another path: a move, rename or copy.
            status = self.store.document_status(doc_id) or DocStatus.INDEXED.value
            self.store.set_file(str(path), doc_id, stat.st_size, stat.st_mtime, status)
            return self._as_event(str(path), doc_id, status, "")
        return None

    def _awaits_ocr(self, status: str, error: str) -> bool:
        """A scanned or garbled file last read without OCR, now that OCR is on (a file
        OCR has already tried says so in its message, and is not read again)."""
        if not self.ocr or any(mark in error for mark in OCR_TRIED):
            return False
        if status in (DocStatus.NO_TEXT_LAYER, DocStatus.GARBLED_TEXT):
            return True
        return status == DocStatus.INDEXED_PARTIALLY and any(r in error for r in GARBLE_REASONS)

    def _as_event(self, path: str, doc_id: str | None, status: str, error: str) -> FileIndexed:
        pages = chunks = ocr = 0
        bad: tuple[int, ...] = ()
        if doc_id:
            totals = self.store.document_totals(doc_id)
            if totals:
                pages, chunks, bad = totals
            ocr = self.store.document_ocr_pages(doc_id)
        return FileIndexed(
            path=path, status=DocStatus(status), pages=pages, chunks=chunks, unchanged=True,
            error=error, bad_pages=bad, ocr_pages=ocr,
        )

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


def _put(ready: queue.Queue[Any], item: object, halted: Callable[[], bool]) -> bool:
    """Hand ``item`` over, waiting for room; False if the run stopped meanwhile."""
    while True:
        try:
            ready.put(item, timeout=_POLL_S)
            return True
        except queue.Full:
            if halted():
                return False
