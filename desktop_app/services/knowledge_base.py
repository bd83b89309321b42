"""The one facade the window and the CLI use: the composition root. Qt-free.

``KnowledgeBase`` builds the parts every area shares (the settings, the library and
answers files, the embedder, the retriever; opened lazily, on worker threads) and the
thread bridge (services/bridge.py), hands each area to its service — ``library``
(services/library.py), ``answers`` (services/answers.py), ``checking``
(services/checking.py), ``models`` (services/model_run.py) — and shuts it all down.
``cancel()`` stops whatever runs; ``close()`` ends the threads, the answer model it
started and the files.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core import paths
from desktop_app.core import settings as settings_mod
from desktop_app.core.errors import DiskFullError, LibraryError
from desktop_app.core.library import opening
from desktop_app.core.library.answer_records import AnswerArchive, answers_path
from desktop_app.core.library.store import Store
from desktop_app.core.settings import Settings
from desktop_app.core.stages import Embedder, Generator, Retriever
from desktop_app.services.answers import AnswersService
from desktop_app.services.bridge import ThreadBridge
from desktop_app.services.checking import CheckingService
from desktop_app.services.library import LibraryService
from desktop_app.services.model_run import ModelService

if TYPE_CHECKING:
    from desktop_app.services.api import KnowledgeBaseAPI

logger = logging.getLogger(__name__)

def preload() -> None:
    """Import the heavy native libraries now, on the calling thread.

    Importing them later on a worker thread holds the GIL for hundreds of milliseconds
    while their extension modules initialise, which freezes the window (measured: 0.8 s
    stalls at the start of the first index run). The window calls this before it shows.
    """
    import duckdb  # noqa: F401
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import pyarrow  # noqa: F401
    import pypdf  # noqa: F401
    import tokenizers  # noqa: F401

    from desktop_app.core.answer import answering  # noqa: F401
    from desktop_app.core.ingest import indexing  # noqa: F401
    from desktop_app.core.search import retrieve  # noqa: F401
    from desktop_app.core.verdicts import verify  # noqa: F401

    try:
        import llama_cpp  # noqa: F401
    except ImportError:  # reported when a model is first loaded
        pass




class KnowledgeBase:
    def __init__(
        self,
        db_path: Path | str | None = None,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        generator: Generator | None = None,
        keep_model_s: float = 0.0,
    ) -> None:
        self.settings = settings or settings_mod.load()
        self.db_path = Path(db_path) if db_path else paths.db_path(self.settings.data_dir)
        self._store: Store | None = None
        self._archive: AnswerArchive | None = None
        self._embedder = embedder
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()
        self._archive_lock = threading.Lock()
        self.bridge = ThreadBridge(self._known)
        self.library = LibraryService(self)
        self.models = ModelService(self, generator, keep_model_s)
        self.answers = AnswersService(self, self.library, self.models)
        self.checking = CheckingService(self, self.models)

    # ------------------------------------------------------------------ lazy parts (worker threads)

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

    def _known(self, exc: BaseException, doing: str) -> BaseException:
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
                self._embedder = open_embedder(self.settings.embedder)
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

    def cancel(self) -> None:
        self.bridge.cancel()

    async def close(self) -> None:
        self.bridge.shutdown()
        self.models.close()
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._archive is not None:
            self._archive.close()
            self._archive = None


def _conforms(kb: KnowledgeBase) -> KnowledgeBaseAPI:
    """Where mypy checks that the facade is what the window and its fakes are written
    against (services/api.py): every area's every method, by signature."""
    return kb
