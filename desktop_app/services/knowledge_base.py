"""The one facade the window and the CLI use: the composition root. Qt-free.

``KnowledgeBase`` builds what the areas share: the settings, the parts opened lazily on
worker threads (services/parts.py: the library and answers files, the embedder, the
retriever) and the thread bridge (services/bridge.py). It hands each area's service —
``library`` (services/library.py), ``answers`` (services/answers.py), ``checking``
(services/checking.py), ``models`` (services/model_run.py) — the ones it uses, as
constructor arguments, and shuts it all down.
``cancel()`` stops whatever runs; ``close()`` ends the threads, the answer model it
started and the files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core import paths
from desktop_app.core import settings as settings_mod
from desktop_app.core.settings import Settings
from desktop_app.core.stages import Embedder, Generator
from desktop_app.services.answers import AnswersService
from desktop_app.services.bridge import ThreadBridge
from desktop_app.services.checking import CheckingService
from desktop_app.services.library import LibraryService
from desktop_app.services.model_run import ModelService
from desktop_app.services.parts import SharedParts

if TYPE_CHECKING:
    from desktop_app.services.api import KnowledgeBaseAPI


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
        self.parts = SharedParts(self.db_path, self.settings, embedder)
        self.bridge = ThreadBridge(self.parts.known)
        # Each area is handed what it reads: the settings, the shared parts, the threads,
        # and the areas it asks (answers: the library's scope and the model; checking: the model).
        self.library = LibraryService(self.settings, self.parts, self.bridge)
        self.models = ModelService(self.settings, self.parts, self.bridge, generator, keep_model_s)
        self.answers = AnswersService(self.settings, self.parts, self.bridge, self.library, self.models)
        self.checking = CheckingService(self.settings, self.parts, self.bridge, self.models)

    def cancel(self) -> None:
        self.bridge.cancel()

    async def close(self) -> None:
        self.bridge.shutdown()
        self.models.close()
        self.parts.close()


def _conforms(kb: KnowledgeBase) -> KnowledgeBaseAPI:
    """Where mypy checks that the facade is what the window and its fakes are written
    against (services/api.py): every area's every method, by signature."""
    return kb
