"""The feeder of an index run: worker processes parse PDFs (``parse_pool``), a feeder
thread chunks them and counts their terms as they complete, and keeps up to
:data:`PREFETCH_DOCS` documents ready for the indexing thread, which embeds and writes.
Qt-free, no asyncio. The embedder (onnxruntime releases the GIL) therefore never waits
for a parse unless the parser really is behind.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.ingest import parse_pool
from desktop_app.core.types import Chunk, ExtractedDocument

__all__ = ["PREFETCH_DOCS", "Prepared", "StageSeconds", "prepared_documents"]

PREFETCH_DOCS = 3  # parsed and chunked documents kept ready for the embedder
_POLL_S = 0.1


@dataclass(frozen=True)
class Prepared:
    """A parsed document, chunked, with the BM25 term counts of each chunk."""

    doc: ExtractedDocument
    chunks: list[Chunk]
    terms: list[dict[str, int]]


@dataclass(frozen=True)
class _FeedFailed:  # what the feeder thread hands over instead of a document when it crashed
    error: BaseException


class _End:  # what the feeder thread hands over after the last document
    pass


_END = _End()
_Handed = Prepared | _FeedFailed | _End  # what goes through the queue


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


def prepared_documents(
    paths: list[str], passwords: dict[str, str], should_cancel: Callable[[], bool],
    prepare: Callable[[ExtractedDocument], Prepared], stages: StageSeconds, *,
    timeout_s: float, workers: int, ocr: bool,
) -> Generator[Prepared, None, None]:
    """Chunked documents (``prepare`` makes them), as the feeder thread makes them; stops
    on cancel. ``stages`` counts the time waited here and spent in ``prepare``."""
    if not paths:
        return
    ready: queue.Queue[_Handed] = queue.Queue(maxsize=PREFETCH_DOCS)
    stop = threading.Event()

    def halted() -> bool:
        return stop.is_set() or should_cancel()

    feeder = threading.Thread(
        target=_feed, args=(paths, passwords, halted, ready, prepare, stages),
        kwargs={"timeout_s": timeout_s, "workers": workers, "ocr": ocr},
        name="folio-parse-feed", daemon=True,
    )
    feeder.start()
    try:
        while not should_cancel():
            began = time.perf_counter()
            try:
                item = ready.get(timeout=_POLL_S)
            except queue.Empty:
                stages.waiting += time.perf_counter() - began
                if not feeder.is_alive() and ready.empty():
                    return  # the feeder died without a word (cannot happen, but never hang)
                continue
            stages.waiting += time.perf_counter() - began
            if isinstance(item, _End):
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


def _feed(paths: list[str], passwords: dict[str, str], halted: Callable[[], bool],
          ready: queue.Queue[_Handed], prepare: Callable[[ExtractedDocument], Prepared],
          stages: StageSeconds, *, timeout_s: float, workers: int, ocr: bool) -> None:
    """Feeder thread: parse (in worker processes), chunk, count terms, hand over."""

    def password_list(p: str) -> list[str]:
        given = passwords.get(str(Path(p).resolve()))
        return [given] if given else []

    docs = parse_pool.parse_many(
        paths, passwords_for=password_list, timeout_s=timeout_s,
        workers=workers, should_cancel=halted, ocr=ocr,
    )
    last: _Handed = _END
    try:
        for doc in docs:
            if halted():
                return
            began = time.perf_counter()
            item = prepare(doc)
            stages.chunking += time.perf_counter() - began
            if not _put(ready, item, halted):
                return
    except BaseException as exc:  # handed to the indexing thread, raised there
        last = _FeedFailed(exc)
    finally:
        docs.close()  # stops the parse workers now, not when garbage-collected
    _put(ready, last, halted)


def _put(ready: queue.Queue[_Handed], item: _Handed, halted: Callable[[], bool]) -> bool:
    """Hand ``item`` over, waiting for room; False if the run stopped meanwhile."""
    while True:
        try:
            ready.put(item, timeout=_POLL_S)
            return True
        except queue.Full:
            if halted():
                return False
