"""The interfaces between the pipeline's stages, as Protocols. Qt-free.

Callers are annotated with these, never with a backend class: the answer stage asks a
``Retriever`` and a ``Generator``, the indexer an ``Embedder``; each has one real backend
(core/search/retrieve.py, core/models/worker.py and generate.py, core/models/embed.py,
core/answer/verify.py) and fakes in the tests. Adding a reranker, an HTTP model server
or another verifier means writing one more class that satisfies its Protocol.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from desktop_app.core.types import Citations, ClaimVerdict, GenerationStats, Retrieval, Steering

if TYPE_CHECKING:
    import numpy as np

Message = dict[str, str]
# What ``Generator.stream`` returns: text deltas, and ``close()`` stops the model early.
Deltas = collections.abc.Generator[str, None, None]


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
    prompt head into its cache ahead of the question (``prime``).

    Its capabilities are declared here, not probed: ``scores_replies`` says whether
    ``reply_logprob`` can weigh a reply (a local model can, a model server cannot),
    ``last_stats`` holds the figures of the last streamed answer, and ``estimate_s`` the
    seconds an answer should take at this machine's measured speed (0.0: no measure)."""

    model_id: str
    context_tokens: int
    scores_replies: bool
    last_stats: GenerationStats | None

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
    ) -> Deltas: ...

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = ...) -> int: ...

    def reply_logprob(self, messages: Sequence[Message], reply: str,
                      should_cancel: Callable[[], bool] = ...) -> float:
        """The log probability of the model answering ``messages`` with ``reply``; raises
        KnownError when ``scores_replies`` is False."""
        ...

    def estimate_s(self, prompt_tokens: int) -> float: ...

    def close(self) -> None: ...


class Retriever(Protocol):
    """Finds the passages for a question, with the signals the evidence gate reads; with a
    ``scope`` (file and folder paths), only in the documents at or under them."""

    def search(self, query: str, k: int, scope: Sequence[str] = ()) -> Retrieval: ...


class Verifier(Protocol):
    """Checks the sentences of a growing answer against the passages they cite; each
    sentence's verdict is returned once, when the sentence is complete."""

    def feed(self, text: str, citations: Citations) -> list[ClaimVerdict]: ...

    def finish(self, text: str | None = None, citations: Citations | None = None) -> list[ClaimVerdict]: ...
