"""What every area service of the facade shares: the root's parts and its thread bridge.
Qt-free.

An area (library, answers, checking, models) is handed the root (``KnowledgeBase``, seen
through :class:`Root`) the way Anki's managers are handed the collection: the settings,
the library and answers files, the embedder and the retriever are the root's (opened
lazily, on worker threads), and work runs on the root's threads (services/bridge.py). An
area that needs another is handed it by the root, so no area imports the root.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import threading

    from desktop_app.core.library.answer_records import AnswerArchive
    from desktop_app.core.library.store import Store
    from desktop_app.core.settings import Settings
    from desktop_app.core.stages import Embedder, Retriever
    from desktop_app.services.bridge import ThreadBridge

T = TypeVar("T")
E = TypeVar("E")


class Root(Protocol):
    """What an area reads of the root: its shared parts and its threads."""

    settings: Settings
    db_path: Path
    bridge: ThreadBridge

    @property
    def store(self) -> Store: ...
    @property
    def archive(self) -> AnswerArchive: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def retriever(self) -> Retriever: ...
    def drop_store(self) -> None: ...


class Area:
    def __init__(self, kb: Root) -> None:
        self._kb = kb

    @property
    def settings(self) -> Settings:
        return self._kb.settings

    @property
    def db_path(self) -> Path:
        return self._kb.db_path

    @property
    def store(self) -> Store:
        return self._kb.store

    @property
    def archive(self) -> AnswerArchive:
        return self._kb.archive

    @property
    def embedder(self) -> Embedder:
        return self._kb.embedder

    @property
    def retriever(self) -> Retriever:
        return self._kb.retriever

    def _drop_store(self) -> None:
        self._kb.drop_store()

    # ------------------------------------------------------------------ the root's threads

    @property
    def _index_pool(self) -> ThreadPoolExecutor:
        return self._kb.bridge.index_pool

    @property
    def _query_pool(self) -> ThreadPoolExecutor:
        return self._kb.bridge.query_pool

    @property
    def _llm_pool(self) -> ThreadPoolExecutor:
        return self._kb.bridge.llm_pool

    @property
    def _closing(self) -> threading.Event:
        return self._kb.bridge.closing

    def _stream(
        self, pool: ThreadPoolExecutor, work: Callable[[Callable[[E], None], Callable[[], bool]], object],
        doing: str = "working on the library",
    ) -> AsyncIterator[E]:
        return self._kb.bridge.stream(pool, work, doing)

    async def _call(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await self._kb.bridge.call(pool, fn)
