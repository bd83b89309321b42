"""The thread bridge between the facade's event loop and its worker threads. Qt-free.

Blocking work runs on named single-thread executors: ``folio-index`` (scan, embed,
write; PDF parsing itself happens in worker processes), ``folio-query`` (search and
library reads) and ``folio-llm`` (the one thread that talks to the answer model, which
runs in its own worker process: core/models/worker.py).
Worker threads hand events back to the event loop with ``call_soon_threadsafe``;
each operation has its own cancel flag, and ``cancel()`` raises all of them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
E = TypeVar("E")


@dataclass(frozen=True)
class _Done:
    """The end of a stream: the worker returned, or raised ``error``."""

    error: BaseException | None


class ThreadBridge:
    """The three worker threads, the cancel flags of what runs on them, and the way their
    results reach the event loop. ``known`` turns a worker's exception into what the
    caller is shown (the library's KnownError, or the exception itself)."""

    def __init__(self, known: Callable[[BaseException, str], BaseException]) -> None:
        self._known = known
        self.index_pool = ThreadPoolExecutor(1, thread_name_prefix="folio-index")
        self.query_pool = ThreadPoolExecutor(1, thread_name_prefix="folio-query")
        self.llm_pool = ThreadPoolExecutor(1, thread_name_prefix="folio-llm")
        self.closing = threading.Event()  # set once the facade closes
        self._active: set[threading.Event] = set()

    async def stream(
        self, pool: ThreadPoolExecutor, work: Callable[[Callable[[E], None], Callable[[], bool]], object],
        doing: str = "working on the library",
    ) -> AsyncIterator[E]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[E | _Done] = asyncio.Queue()
        cancel = threading.Event()
        self._active.add(cancel)

        def put(item: E | _Done) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def job() -> None:
            try:
                work(put, cancel.is_set)
                put(_Done(None))
            except BaseException as exc:  # handed to the event loop and re-raised there
                put(_Done(self._known(exc, doing)))

        future = loop.run_in_executor(pool, job)
        try:
            while True:
                item = await queue.get()
                if isinstance(item, _Done):
                    if item.error is not None:
                        raise item.error
                    break
                yield item
        finally:
            cancel.set()
            self._active.discard(cancel)
            if not future.done():
                # The consumer stopped early: let the worker notice the flag and finish.
                await asyncio.shield(future)

    async def call(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        def call() -> T:
            try:
                return fn()
            except Exception as exc:
                known = self._known(exc, "reading the library")
                if known is exc:
                    raise
                raise known from exc

        return await asyncio.get_running_loop().run_in_executor(pool, call)

    def cancel(self) -> None:
        for flag in list(self._active):
            flag.set()

    def shutdown(self) -> None:
        """Raise every cancel flag and wait for the threads to end (queued jobs are dropped)."""
        self.closing.set()
        self.cancel()
        for pool in (self.index_pool, self.query_pool, self.llm_pool):
            pool.shutdown(wait=True, cancel_futures=True)
