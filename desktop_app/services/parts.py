"""What the areas of the facade share, each opened on first use (on a worker thread): the
library file (``Store``), the answers file (``AnswerArchive``), the embedder and the
retriever over them. Qt-free.

The composition root (services/knowledge_base.py) builds one :class:`SharedParts` and hands
it to each area service that reads them, with the settings and the thread bridge
(services/bridge.py). A failure of the library file closes it (:meth:`SharedParts.known`),
so the next use opens it afresh.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from desktop_app.core.errors import DiskFullError, LibraryError
from desktop_app.core.library import opening
from desktop_app.core.library.answer_records import AnswerArchive, answers_path
from desktop_app.core.library.store import Store
from desktop_app.core.settings import Settings
from desktop_app.core.stages import Embedder, Retriever

logger = logging.getLogger(__name__)


class SharedParts:
    def __init__(self, db_path: Path, settings: Settings, embedder: Embedder | None = None) -> None:
        self.db_path = db_path
        self._settings = settings  # which embedder to open
        self._store: Store | None = None
        self._archive: AnswerArchive | None = None
        self._embedder = embedder
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()
        self._archive_lock = threading.Lock()

    @property
    def archive(self) -> AnswerArchive:
        """The saved answers (their own file: readable while another process indexes)."""
        with self._archive_lock:
            if self._archive is None:
                self._archive = AnswerArchive(answers_path(self.db_path))
            return self._archive

    @property
    def store(self) -> Store:
        with self._lock:
            if self._store is None:
                # The answers file is opened once the library file did (not beside a junk file).
                self._store = Store(self.db_path, archive=lambda: self.archive)
            return self._store

    def known(self, exc: BaseException, doing: str) -> BaseException:
        """What to raise for ``exc`` from the library: its KnownError (disk full, damaged,
        busy, …) or ``exc`` itself (a bug). After a failure of the library file itself the
        store is closed, so the next call opens it afresh (DuckDB refuses every statement
        after a fatal write error)."""
        known = opening.classify(exc, self.db_path, doing) if isinstance(exc, Exception) else None
        if known is None:
            return exc
        if isinstance(known, LibraryError | DiskFullError) or "invalidated" in str(exc):
            self.drop_store()
        if known is not exc:
            logger.info("%s failed: %s", doing, exc, exc_info=exc)  # the log keeps the detail
        return known

    def drop_store(self) -> None:
        with self._lock:
            store, self._store, self._retriever = self._store, None, None
        if store is not None:
            try:
                store.close()
            except Exception:  # noqa: BLE001 - it failed already; closing is best effort
                logger.debug("closing a failed store", exc_info=True)

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from desktop_app.core.models.catalog import open_embedder

                # open_embedder names the default model by its manifest id, the same id
                # whoever builds the library (CLI, window, benches).
                self._embedder = open_embedder(self._settings.embedder)
            return self._embedder

    @property
    def retriever(self) -> Retriever:
        embedder = self.embedder
        store = self.store
        with self._lock:
            if self._retriever is None:
                from desktop_app.core.search import glossary
                from desktop_app.core.search.retrieve import Retriever

                # The built-in glossary and the user's own (config folder).
                self._retriever = Retriever(store, embedder, glossary=glossary.load_default())
            return self._retriever

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._archive is not None:
            self._archive.close()
            self._archive = None
