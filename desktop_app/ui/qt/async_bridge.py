"""Small bridges between Qt signals and asyncio (the qasync loop drives both)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import SignalInstance

logger = logging.getLogger(__name__)


class SignalWaiter:
    """Connect first, act, then await: no emission between the two is lost.

    >>> waiter = SignalWaiter(viewer.settled)
    >>> viewer.show_source(...)
    >>> highlighted, = await waiter.wait(10)
    """

    def __init__(self, signal: SignalInstance) -> None:
        self._signal = signal
        self._future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()
        signal.connect(self._fire)
        self._connected = True

    def _fire(self, *args: Any) -> None:
        if not self._future.done():
            self._future.set_result(args)

    async def wait(self, timeout: float) -> tuple[Any, ...]:
        try:
            return await asyncio.wait_for(asyncio.shield(self._future), timeout)
        finally:
            self.close()

    def close(self) -> None:
        if not self._connected:
            return
        self._connected = False
        try:
            self._signal.disconnect(self._fire)
        except (RuntimeError, TypeError):  # the sender is gone
            pass


class TaskSet:
    """Keeps handles of fire-and-forget tasks (so they are not collected mid-flight) and
    logs their failures instead of losing them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            logger.error("task %s failed", task.get_name(), exc_info=error)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)
