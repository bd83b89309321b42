"""The models area of the facade: the answer model chosen and started (a model server, a
model kept alive between commands, or a worker process of the facade's own), the
library and embedder warmed up, the prompt heads primed, and the models' raw passthroughs
(completion, embedding). Qt-free."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from desktop_app.core import settings as settings_mod
from desktop_app.core.errors import KnownError
from desktop_app.core.settings import Settings
from desktop_app.core.stages import Generator
from desktop_app.core.text import lang
from desktop_app.core.types import CitationStyle, FirstWordClock
from desktop_app.services.bridge import ThreadBridge
from desktop_app.services.parts import SharedParts

if TYPE_CHECKING:
    from desktop_app.core.models.worker import WorkerGenerator

logger = logging.getLogger(__name__)

class ModelService:
    def __init__(self, settings: Settings, parts: SharedParts, bridge: ThreadBridge,
                 generator: Generator | None = None, keep_model_s: float = 0.0) -> None:
        self._settings = settings
        self._parts = parts  # the library file and the embedder (warm-up, the embedding passthrough)
        self._bridge = bridge
        # The command line's answer model outlives the command for this many idle seconds
        # (core/models/keep_alive.py); 0: a process of its own, ended with the facade (the window).
        self._keep_model_s = keep_model_s
        self._generator = generator
        # A generator handed in belongs to the caller (a test or a server shares one model
        # across several knowledge bases): close() frees only what this facade started.
        self._owns_generator = generator is None
        self._worker: WorkerGenerator | None = None  # the local model's process, once started
        self._ready: Future[int] | None = None  # the first prompt head primed (prime_answer_model)

    def generator(self) -> Generator:
        """The answer model; only ever called on the folio-llm thread."""
        if self._generator is None and self._settings.answer_model == settings_mod.SERVER:
            from desktop_app.core.models.catalog import open_generator

            self._generator = open_generator(self._settings)  # a model server's client
        self._start_generator()
        if self._worker is not None:
            try:
                self._worker.wait_ready()
            except KnownError:
                self._worker.close()
                self._worker = self._generator = None
                raise
        assert self._generator is not None
        return self._generator

    def _start_generator(self) -> None:
        """Start the local answer model's process without waiting for it to load (on the
        folio-llm thread): a question's search runs while the model loads."""
        if self._generator is not None or self._settings.answer_model == settings_mod.SERVER:
            return
        from desktop_app.core.models.catalog import open_generator
        from desktop_app.core.models.worker import WorkerGenerator

        # In its own process (kept alive between commands for the command line).
        generator = open_generator(self._settings, keep_alive_s=self._keep_model_s)
        self._worker = generator if isinstance(generator, WorkerGenerator) else None
        self._generator = generator

    def for_answer(self, settings: Settings, clock: FirstWordClock,
                   cancelled: Callable[[], bool]) -> Callable[[str], Generator]:
        """Start the answer model for one answer (on the folio-llm thread: its process loads
        while the question is searched) and hand back what the answer calls when it needs
        the model: it waits for it, puts its load time on the answer's ``clock`` and, for a
        model kept between commands, primes the prompt head of the question's language (the
        answer decides it and passes it) first."""
        starts_model = self._generator is None
        try:
            # The model loads in its own process while the question is searched.
            self._start_generator()
        except KnownError as exc:  # reported by generator_factory when the model is needed
            logger.info("answer model not started: %s", exc)

        primed: list[bool] = []

        def generator(language: str) -> Generator:
            model = self.generator()
            if starts_model and self._worker is not None and self._worker.load_s:  # 0: kept loaded
                clock.counts["model_load_ms"] = round(self._worker.load_s * 1000)
            if self._keep_model_s > 0 and not primed:
                primed.append(self._prime_kept(model, language, settings, cancelled))
            return model

        return generator

    def warm_up(self) -> None:
        """Open the library and load the embedder now, on the calling thread.

        The window calls this before it shows: creating the ONNX session on a worker
        thread later held the GIL long enough to freeze the window for ~250 ms. A
        missing model is not an error here; the first index or question reports it.
        """
        try:
            self._parts.store  # noqa: B018
            self._parts.embedder  # noqa: B018
        except KnownError as exc:
            logger.info("warm-up skipped: %s", exc)
        self.prime_answer_model()

    def prime_answer_model(self) -> Future[int]:
        """Load the answer model and read the fixed head of every prompt (system prompt
        and worked examples) into its KV cache, on the answer model's own thread, in the
        background: a question then waits only for its sources to be read (on 2 cores a
        head alone is 3-8 s of prefill). One head per prompt language ("auto": every
        registered language, core/text/lang/: English, German, Chinese), each kept by the model process; each language is its
        own job on the model's thread, so a question asked meanwhile waits for one head at
        most. Only for the numbered-label style, whose head is the same for every question.
        Returns the number of tokens cached for the first head (answer_model_ready)."""
        chosen = self._settings.prompt_language
        languages = list(lang.codes()) if chosen == "auto" else [chosen]  # every registered one

        def prime(language: str, rest: list[str]) -> int:
            if self._settings.citation_style != CitationStyle.LABEL or self._bridge.closing.is_set():
                return 0
            if self._settings.answer_model == settings_mod.SERVER:
                return 0  # a server keeps its own cache; no network traffic at start-up
            try:
                cached = self._prime_head(self.generator(), language, self._settings.max_tokens,
                                          self._bridge.closing.is_set)
            except KnownError as exc:  # reported when the first question is asked
                logger.info("answer model not primed: %s", exc)
                return 0
            logger.info("answer model primed for %s: %d prompt tokens cached", language, cached)
            if rest and not self._bridge.closing.is_set():
                try:
                    self._bridge.llm_pool.submit(prime, rest[0], rest[1:])
                except RuntimeError:  # the pool is shutting down
                    pass
            return cached

        self._ready = self._bridge.llm_pool.submit(prime, languages[0], languages[1:])
        return self._ready

    def _prime_kept(self, generator: Generator, language: str, settings: Settings,
                    cancelled: Callable[[], bool]) -> bool:
        """A kept model (the command line's) keeps the fixed head of each prompt language it
        has read, as the window's primed one does: the next command's question in that
        language reads only what follows it. Quick when the head is kept already; when not,
        it is the reading the prompt needed anyway. True when the head is cached."""
        if settings.citation_style != CitationStyle.LABEL:
            return False
        try:
            return self._prime_head(generator, language, settings.max_tokens,
                                    cancelled) > 0
        except KnownError as exc:  # the answer reports it
            logger.info("kept answer model not primed: %s", exc)
            return False

    @staticmethod
    def _prime_head(generator: Generator, language: str, answer_tokens: int,
                    cancelled: Callable[[], bool]) -> int:
        """The one way a prompt head is primed, the window's and the command line's: the
        head core/answer builds for ``language`` (decided) read into
        ``generator``'s cache; the tokens cached. A KnownError when the model fails."""
        from desktop_app.core.answer.prompts import prompt_head

        head = prompt_head(language, count_tokens=generator.count_tokens,
                           context_tokens=generator.context_tokens, answer_tokens=answer_tokens)
        return int(generator.prime(head, cancelled))

    async def answer_model_ready(self) -> int:
        """Wait until the answer model is loaded and its first prompt head read (the window
        says so in its status bar); the tokens cached, 0 when it was not primed (a model
        server, a missing model: the first question says why)."""
        ready = self._ready
        if ready is None:
            return 0
        return await asyncio.wrap_future(ready)

    async def completion(self, messages: list[dict[str, str]], max_tokens: int = 256) -> AsyncIterator[str]:
        """Raw streamed completion from the answer model (no retrieval, no citations)."""

        def work(emit: Callable[[str], None], cancelled: Callable[[], bool]) -> None:
            for delta in self.generator().stream(
                messages, max_tokens=max_tokens, temperature=self._settings.temperature,
                should_cancel=cancelled,
            ):
                emit(delta)

        async for delta in self._bridge.stream(self._bridge.llm_pool, work):
            yield delta

    async def embedding(self, text: str, passage: bool = False) -> list[float]:
        """The embedder's vector of ``text`` read as a question (or as a passage)."""
        embed = self._parts.embedder.embed_passages if passage else self._parts.embedder.embed_queries
        vec = await self._bridge.call(self._bridge.query_pool, lambda: embed([text])[0])
        return [float(x) for x in vec]

    def close(self) -> None:
        """End the answer model this facade started (one handed in is the caller's)."""
        if self._generator is not None and self._owns_generator:
            self._generator.close()
