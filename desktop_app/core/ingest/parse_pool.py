"""Parse documents (PDF and the other formats of core/ingest/formats) in worker processes, each file under a time limit and every worker under a
memory cap. Qt-free; no asyncio (services wrap the iterator in an executor).

Workers are long-lived ``spawn`` processes (the GUI process has Qt threads, so ``fork``
is unsafe): each takes one file at a time over its own pipe and sends back the
:class:`ExtractedDocument`. A worker that runs past the time limit is terminated and
the file is reported TIMED_OUT; a worker that dies (segfault, out of memory) is
reported UNREADABLE with the reason; either way a fresh worker takes the next file
and the run goes on. Cancelling terminates every worker within about 0.2 s.

Results are yielded **as they complete, not in input order**.

With ``spawn``, a worker imports the parent's ``__main__`` module: entry points must
keep their work under ``if __name__ == "__main__":`` (frozen apps also need
``multiprocessing.freeze_support()``).
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop_app.core.ids import sha256_file
from desktop_app.core.types import DocStatus, ExtractedDocument

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 2048
# A file whose pages need OCR gets this much more time per page to read (a page takes
# 1.5-3 s on one core here: bench/ocr.py), on top of the file's time limit.
OCR_SECONDS_PER_PAGE = 15.0
# And a long document this much more per page beyond its first PAGES_IN_LIMIT to read its
# text layer (a page takes ~0.03 s of CPU on one core, several times that on a loaded machine:
# bench/ingest.py), at most PAGES_EXTRA_MAX_S: a 250-page manual read on a busy laptop is not
# "timed out", while a file that claims a million pages still ends within a bounded time.
PAGES_IN_LIMIT = 100
TEXT_SECONDS_PER_PAGE = 0.5
PAGES_EXTRA_MAX_S = 600.0
_POLL_S = 0.1  # how often cancellation is checked while waiting for workers
_STOP_GRACE_S = 0.5

PasswordsFor = Callable[[str], Sequence[str]]


def default_workers() -> int:
    """One worker per core but one (left for the GUI and the embedder), at most four."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


@dataclass(frozen=True)
class _PagesNotice:
    """Sent by a worker before it reads the text of a document of ``pages`` pages."""

    pages: int


@dataclass(frozen=True)
class _OcrNotice:
    """Sent by a worker before it reads ``pages`` pages of its file with OCR."""

    pages: int


def _worker_main(connection: Connection, memory_mb: int | None) -> None:
    """Run :func:`_worker_loop`; past the memory cap (or on any error outside a reader, such
    as an import that fails under the cap) the worker ends quietly (no traceback on the
    person's terminal) and the pool reports the file with the reason."""
    try:
        _worker_loop(connection, memory_mb)
    except MemoryError:
        os._exit(1)
    except Exception:  # noqa: BLE001 - e.g. a module compiled under the cap: the pool says so
        os._exit(1)


def _worker_loop(connection: Connection, memory_mb: int | None) -> None:
    """Worker loop: receive ``(path, passwords, title_only, ocr)``, send back an
    :class:`_OcrNotice` when pages need OCR, then the extracted document."""
    # The readers are imported before the memory cap: under it, loading a shared object
    # (zipfile's binascii, lxml) fails with an ImportError, not a MemoryError.
    from desktop_app.core.ingest.formats import read_document

    if memory_mb:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError) as exc:  # not on this platform
            logger.debug("memory cap not set: %r", exc)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the parent's to handle
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # pypdf warns on every odd font

    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        path, passwords, title_only, ocr = job
        document = read_document(path, passwords, title_only=title_only, ocr=ocr,
                                 on_ocr=lambda n: connection.send(_OcrNotice(n)),
                                 on_pages=lambda n: connection.send(_PagesNotice(n)))
        try:
            try:
                connection.send(document)
            except MemoryError:  # too big to pickle under the cap: send the verdict alone
                connection.send(dataclasses.replace(
                    document, status=DocStatus.UNREADABLE, pages=(), page_count=0,
                    error=f"Cannot read this {_kind(path)}: it needs more memory than Folio allows a file.",
                ))
        except (BrokenPipeError, OSError):
            return


@dataclass
class _Worker:
    process: BaseProcess  # from the spawn (or given) context
    connection: Connection
    path: str | None = None
    deadline: float = 0.0
    limit: float = 0.0  # the time limit of the file in hand (longer when it needs OCR)

    def stop(self) -> None:
        try:
            self.connection.close()
        except OSError:
            pass
        if self.process.is_alive():
            self.process.terminate()

    def kill(self) -> None:
        """Stop now and reap the process (SIGKILL if SIGTERM did not end it)."""
        self.stop()
        self.process.join(_STOP_GRACE_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(0.1)


def _kind(path: str) -> str:
    """What the user calls the file: "PDF", "DOCX", "Markdown file"..."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"md": "Markdown file", "markdown": "Markdown file", "txt": "text file",
            "htm": "HTML page", "html": "HTML page", "xhtml": "HTML page"}.get(suffix, suffix.upper() or "file")


def _failed(path: str, status: DocStatus, error: str) -> ExtractedDocument:
    """A result the worker could not send: identity from the file, status from the pool."""
    file = Path(path)
    try:
        stat = file.stat()
        doc_id, size, mtime = sha256_file(file), stat.st_size, stat.st_mtime
    except OSError:
        doc_id, size, mtime = "", 0, 0.0
    from desktop_app.core.ingest.formats import format_of

    return ExtractedDocument(
        path=path, doc_id=doc_id, size=size, mtime=mtime, title=file.stem,
        status=status, error=error, format=format_of(path) or "pdf",
    )


def _death_reason(exitcode: int | None, kind: str = "PDF") -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the {kind} reader crashed on this file ({name})"
    return f"the {kind} reader stopped on this file (exit code {exitcode}); it may need too much memory"


class ParsePool:
    """A set of worker processes; use :meth:`parse_many` (also as a context manager)."""

    def __init__(
        self,
        workers: int | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_limit_mb: int | None = DEFAULT_MEMORY_MB,
        start_method: str = "spawn",
        ocr: bool = False,
    ) -> None:
        self.workers = max(1, workers or default_workers())
        self.timeout_s = timeout_s
        self.ocr = ocr  # read pages without a text layer, and garbled ones, with OCR
        self.memory_limit_mb = memory_limit_mb
        self._context: Any = multiprocessing.get_context(start_method)  # BaseContext declares no Process
        self._idle: list[_Worker] = []

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the idle workers (busy ones are stopped when their run ends)."""
        idle, self._idle = self._idle, []
        _stop_all(idle)

    def _start_worker(self) -> _Worker:
        parent, child = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=_worker_main, args=(child, self.memory_limit_mb),
            name="folio-parse", daemon=True,
        )
        process.start()
        child.close()
        return _Worker(process, parent)

    def parse_many(
        self,
        paths: Iterable[str],
        passwords_for: PasswordsFor | None = None,
        should_cancel: Callable[[], bool] | None = None,
        title_only: bool = False,
    ) -> Generator[ExtractedDocument, None, None]:
        """Yield one document per path, in completion order. Stops (without results for
        the files in flight) soon after ``should_cancel()`` turns true. ``title_only``:
        read each file's title only (metadata and first page; no pages in the result)."""
        pending = deque(str(p) for p in paths)
        busy: list[_Worker] = []
        try:
            while pending or busy:
                if should_cancel is not None and should_cancel():
                    logger.info("parse cancelled with %d files left", len(pending) + len(busy))
                    return
                while pending and len(busy) < self.workers:
                    worker = self._idle.pop() if self._idle else self._start_worker()
                    path = pending.popleft()
                    passwords = tuple(passwords_for(path)) if passwords_for else ()
                    try:
                        worker.connection.send((path, passwords, title_only,
                                                self.ocr and not title_only))
                    except (BrokenPipeError, OSError) as exc:
                        worker.stop()
                        yield _failed(path, DocStatus.UNREADABLE,
                                      f"Cannot read this {_kind(path)}: the reader did not start ({exc}).")
                        continue
                    worker.path, worker.deadline = path, time.monotonic() + self.timeout_s
                    worker.limit = self.timeout_s
                    busy.append(worker)
                if busy:
                    yield from self._collect(busy)
        finally:
            _stop_all(busy)

    def _collect(self, busy: list[_Worker]) -> Iterator[ExtractedDocument]:
        """Wait up to ``_POLL_S`` and hand out what finished, died or timed out."""
        now = time.monotonic()
        timeout = max(0.0, min(_POLL_S, min(w.deadline for w in busy) - now))
        handles: list[Connection | int] = [w.connection for w in busy] + [w.process.sentinel for w in busy]
        ready = set(wait(handles, timeout))
        now = time.monotonic()
        for worker in list(busy):
            path = worker.path or ""
            result: ExtractedDocument | None = None
            if worker.connection in ready or worker.process.sentinel in ready:
                received: object = None
                try:
                    if worker.connection.poll():
                        received = worker.connection.recv()
                except (EOFError, OSError) as exc:
                    logger.debug("worker pipe broke: %r", exc)
                if isinstance(received, _PagesNotice):
                    extra = min(max(0, received.pages - PAGES_IN_LIMIT) * TEXT_SECONDS_PER_PAGE,
                                PAGES_EXTRA_MAX_S)
                    worker.deadline += extra
                    worker.limit += extra
                    continue
                if isinstance(received, _OcrNotice):
                    extra = received.pages * OCR_SECONDS_PER_PAGE
                    worker.deadline += extra
                    worker.limit += extra
                    logger.info("%s: %d pages to read by OCR; time limit now %.0f s",
                                path, received.pages, worker.limit)
                    continue
                assert received is None or isinstance(received, ExtractedDocument), received
                result = received
                if result is None:
                    worker.process.join(_STOP_GRACE_S)
                    kind = _kind(path)
                    reason = _death_reason(worker.process.exitcode, kind)
                    logger.warning("parse worker died on %s: %s", path, reason)
                    result = _failed(path, DocStatus.UNREADABLE, f"Cannot read this {kind}: {reason}.")
                    worker.kill()
                else:
                    worker.path = None
                    self._idle.append(worker)
            elif now >= worker.deadline:
                logger.warning("parsing %s took over %.0f s; stopped", path, worker.limit)
                worker.kill()
                result = _failed(path, DocStatus.TIMED_OUT, (
                    f"Reading this {_kind(path)} took longer than {worker.limit:g} s, so it was skipped."
                ))
            if result is not None:
                busy.remove(worker)
                yield result


def _stop_all(workers: list[_Worker]) -> None:
    """Terminate, then wait briefly, then kill what is left: bounded, about 0.5 s."""
    for worker in workers:
        worker.stop()
    deadline = time.monotonic() + _STOP_GRACE_S
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(0.1)


def parse_many(
    paths: Iterable[str],
    passwords_for: PasswordsFor | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    workers: int | None = None,
    should_cancel: Callable[[], bool] | None = None,
    memory_limit_mb: int | None = DEFAULT_MEMORY_MB,
    title_only: bool = False,
    ocr: bool = False,
) -> Generator[ExtractedDocument, None, None]:
    """One-shot :meth:`ParsePool.parse_many`: the workers end with the iteration."""
    with ParsePool(workers, timeout_s, memory_limit_mb, ocr=ocr) as pool:
        yield from pool.parse_many(paths, passwords_for, should_cancel, title_only)
