"""What the store's mixins need of :class:`~desktop_app.core.library.store.Store`: a
cursor per thread, a query helper, the write lock and the generation counter. Qt-free.

:class:`LibraryQueries`, :class:`LibraryReading`, :class:`LibraryVectors` and
:class:`AnswerRecords` each hold one part of the library's SQL; ``Store`` inherits them
all and provides the connection.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection


class StoreConnection:
    """The store's connection as its mixins see it (``Store`` provides it)."""

    _write_lock: threading.Lock  # one writer at a time
    generation: int  # bumped on every write that changes searchable content
    _adopted_ids: set[str]  # embedder ids adopt_vectors has checked

    def adopt_vectors(self, model_id: str) -> int:  # pragma: no cover - LibraryVectors provides it
        raise NotImplementedError

    def _cursor(self) -> DuckDBPyConnection:  # pragma: no cover - Store provides it
        raise NotImplementedError

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:  # pragma: no cover
        raise NotImplementedError
