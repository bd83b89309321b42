"""The interfaces between the pipeline's stages, as Protocols. Qt-free.

Callers are annotated with these, never with a backend class: the answer stage asks a
``Retriever`` and a ``Generator``, the indexer an ``Embedder``; each has one real backend
(core/search/retrieve.py, core/models/worker.py and generate.py, core/models/embed.py,
core/answer/verify.py) and fakes in the tests. Adding a reranker, an HTTP model server
or another verifier means writing one more class that satisfies its Protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

from desktop_app.core.types import Citations, ClaimVerdict, Retrieval, Steering

if TYPE_CHECKING:
    import numpy as np

Message = dict[str, str]


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors (one row per text, input order).
    Questions and the passages that answer them are embedded differently (e5 prefixes
    ``query: `` and ``passage: ``), so callers say which they hold."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


class Generator(Protocol):
    """An answer model: counts tokens, renders a chat, streams text deltas, and reads a
    prompt head into its cache ahead of the question (``prime``)."""

    model_id: str
    context_tokens: int

    def count_tokens(self, text: str) -> int: ...

    def render(self, messages: Sequence[Message]) -> str: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = ...,
        steering: Steering | None = None,
    ) -> Iterator[str]: ...

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = ...) -> int: ...


class Retriever(Protocol):
    """Finds the passages for a question, with the signals the evidence gate reads; with a
    ``scope`` (file and folder paths), only in the documents at or under them."""

    def search(self, query: str, k: int, scope: Sequence[str] = ()) -> Retrieval: ...


class Verifier(Protocol):
    """Checks the sentences of a growing answer against the passages they cite; each
    sentence's verdict is returned once, when the sentence is complete."""

    def feed(self, text: str, citations: Citations) -> list[ClaimVerdict]: ...

    def finish(self, text: str | None = None, citations: Citations | None = None) -> list[ClaimVerdict]: ...
