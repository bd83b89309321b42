"""The one facade the window and the CLI use. Qt-free.

Blocking work runs on named single-thread executors: ``folio-index`` (scan, embed,
write; PDF parsing itself happens in worker processes), ``folio-query`` (search and
library reads) and ``folio-llm`` (the one thread that talks to the answer model, which
runs in its own worker process: core/models/worker.py).
Worker threads hand events back to the event loop with ``call_soon_threadsafe``;
each operation has its own cancel flag, and ``cancel()`` raises all of them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_app.core import paths
from desktop_app.core import settings as settings_mod
from desktop_app.core.errors import DiskFullError, KnownError, LibraryError
from desktop_app.core.library import opening
from desktop_app.core.library.answer_records import AnswerArchive, answers_path
from desktop_app.core.library.store import Store
from desktop_app.core.settings import Settings
from desktop_app.core.stages import Embedder, Generator, JudgeCache, Retriever
from desktop_app.core.text import lang
from desktop_app.core.types import (
    AnswerEvent,
    AnswerFailed,
    AnswerFinished,
    CitationStyle,
    DocumentInfo,
    DocumentPart,
    FirstWordClock,
    IndexEvent,
    JsonObject,
    LibraryMovedAside,
    OcrLine,
    Passage,
    SourceState,
)

if TYPE_CHECKING:
    from desktop_app.core.answer.followup import Conversation
    from desktop_app.core.models.worker import WorkerGenerator
    from desktop_app.core.verdicts import Judge
    from desktop_app.services.checking import CheckEvent

logger = logging.getLogger(__name__)

T = TypeVar("T")
E = TypeVar("E")


@dataclass(frozen=True)
class _Done:
    """The end of a stream: the worker returned, or raised ``error``."""

    error: BaseException | None


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
        # The command line's answer model outlives the command for this many idle seconds
        # (core/models/keep_alive.py); 0: a process of its own, ended with the facade (the window).
        self._keep_model_s = keep_model_s
        self.db_path = Path(db_path) if db_path else paths.db_path(self.settings.data_dir)
        self._store: Store | None = None
        self._archive: AnswerArchive | None = None
        self._embedder = embedder
        self._generator = generator
        # A generator handed in belongs to the caller (a test or a server shares one model
        # across several knowledge bases): close() frees only what this facade started.
        self._owns_generator = generator is None
        self._worker: WorkerGenerator | None = None  # the local model's process, once started
        self._ready: Future[int] | None = None  # the first prompt head primed (prime_answer_model)
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()
        self._archive_lock = threading.Lock()
        self._index_pool = ThreadPoolExecutor(1, thread_name_prefix="folio-index")
        self._query_pool = ThreadPoolExecutor(1, thread_name_prefix="folio-query")
        self._llm_pool = ThreadPoolExecutor(1, thread_name_prefix="folio-llm")
        self._closing = threading.Event()
        self._active: set[threading.Event] = set()

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
            self._drop_store()
        if known is not exc:
            logger.info("%s failed: %s", doing, exc, exc_info=exc)  # the log keeps the detail
        return known

    def _drop_store(self) -> None:
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

    def generator(self) -> Generator:
        """The answer model; only ever called on the folio-llm thread."""
        if self._generator is None and self.settings.answer_model == settings_mod.SERVER:
            from desktop_app.core.models.server_client import ServerGenerator

            # A shared model server (OpenAI-compatible): only the prompt (the question and
            # its passages) goes to it. The key comes from its own private file.
            self._generator = ServerGenerator(
                self.settings.server_url, self.settings.server_model,
                api_key=settings_mod.load_server_key(), context_tokens=self.settings.context_tokens,
            )
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
        if self._generator is not None or self.settings.answer_model == settings_mod.SERVER:
            return
        from desktop_app.core.models import catalog as models
        from desktop_app.core.models.worker import WorkerGenerator

        # In its own process: a GGUF that crashes llama.cpp ends one answer, not the window.
        path = models.resolve_answer_model(self.settings.answer_model)
        if self._keep_model_s > 0:
            from desktop_app.core.models import keep_alive

            if keep_alive.supported():
                self._worker = keep_alive.KeepAliveGenerator(
                    path, context_tokens=self.settings.context_tokens, threads=self.settings.threads,
                    prompt_lookup=self.settings.prompt_lookup, idle_s=self._keep_model_s, wait=False,
                )
                self._generator = self._worker
                return
        self._worker = WorkerGenerator(
            path, context_tokens=self.settings.context_tokens, threads=self.settings.threads,
            prompt_lookup=self.settings.prompt_lookup, wait=False,
        )
        self._generator = self._worker

    def warm_up(self) -> None:
        """Open the library and load the embedder now, on the calling thread.

        The window calls this before it shows: creating the ONNX session on a worker
        thread later held the GIL long enough to freeze the window for ~250 ms. A
        missing model is not an error here; the first index or question reports it.
        """
        try:
            self.store  # noqa: B018
            self.embedder  # noqa: B018
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
        chosen = self.settings.prompt_language
        languages = list(lang.codes()) if chosen == "auto" else [chosen]  # every registered one

        def prime(language: str, rest: list[str]) -> int:
            if self.settings.citation_style != CitationStyle.LABEL or self._closing.is_set():
                return 0
            if self.settings.answer_model == settings_mod.SERVER:
                return 0  # a server keeps its own cache; no network traffic at start-up
            from desktop_app.core.answer import prompts

            try:
                generator = self.generator()
                packed = prompts.build_prompt(
                    "", [], count_tokens=generator.count_tokens, context_tokens=generator.context_tokens,
                    answer_tokens=self.settings.max_tokens, language=language,
                )
                cached = int(generator.prime(packed.messages, self._closing.is_set))
            except KnownError as exc:  # reported when the first question is asked
                logger.info("answer model not primed: %s", exc)
                return 0
            logger.info("answer model primed for %s: %d prompt tokens cached", language, cached)
            if rest and not self._closing.is_set():
                try:
                    self._llm_pool.submit(prime, rest[0], rest[1:])
                except RuntimeError:  # the pool is shutting down
                    pass
            return cached

        self._ready = self._llm_pool.submit(prime, languages[0], languages[1:])
        return self._ready

    def _prime_kept(self, generator: Generator, language: str, settings: Settings,
                    cancelled: Callable[[], bool]) -> bool:
        """A kept model (the command line's) keeps the fixed head of each prompt language it
        has read, as the window's primed one does: the next command's question in that
        language reads only what follows it. Quick when the head is kept already; when not,
        it is the reading the prompt needed anyway. True when the head is cached."""
        if settings.citation_style != CitationStyle.LABEL:
            return False
        from desktop_app.core.answer import prompts

        packed = prompts.build_prompt(
            "", [], count_tokens=generator.count_tokens, context_tokens=generator.context_tokens,
            answer_tokens=settings.max_tokens, language=language,
        )
        try:
            return generator.prime(packed.messages, cancelled) > 0
        except KnownError as exc:  # the answer reports it
            logger.info("kept answer model not primed: %s", exc)
            return False

    async def answer_model_ready(self) -> int:
        """Wait until the answer model is loaded and its first prompt head read (the window
        says so in its status bar); the tokens cached, 0 when it was not primed (a model
        server, a missing model: the first question says why)."""
        ready = self._ready
        if ready is None:
            return 0
        return await asyncio.wrap_future(ready)

    # ------------------------------------------------------------------ streaming bridge

    async def _stream(
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

    async def _call(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        def call() -> T:
            try:
                return fn()
            except Exception as exc:
                known = self._known(exc, "reading the library")
                if known is exc:
                    raise
                raise known from exc

        return await asyncio.get_running_loop().run_in_executor(pool, call)

    # ------------------------------------------------------------------ API

    async def index(
        self, folder: str | Path, passwords: dict[str, str] | None = None
    ) -> AsyncIterator[IndexEvent]:
        folder = Path(folder).expanduser()
        if not folder.is_dir():
            raise KnownError(f"{folder} is not a folder.", "Pick a folder that holds documents (PDF, HTML, EPUB, DOCX, ODT, PPTX, Markdown, text).")

        def work(emit: Callable[[IndexEvent], None], cancelled: Callable[[], bool]) -> None:
            from desktop_app.core.ingest.indexing import Indexer

            store, embedder = self.store, self.embedder
            self.archive.remember_folder(str(folder.resolve()))  # what a repair rebuilds from
            indexer = Indexer(store, embedder, parse_timeout_s=self.settings.parse_timeout_s,
                              ocr=self.settings.ocr)
            emit(indexer.run(folder, emit, cancelled, passwords))

        async for event in self._stream(self._index_pool, work, "indexing"):
            yield event

    async def library_problem(self) -> KnownError | None:
        """Open the library and read it whole; what keeps it from being used (damaged, not
        a library, busy, …), or None. Reads every row: a damaged file often opens and
        fails only where its lost blocks are read."""

        def probe() -> KnownError | None:
            try:
                self.store.verify()
            except KnownError as exc:
                if isinstance(exc, LibraryError):
                    self._drop_store()
                return exc
            return None

        return await self._call(self._query_pool, probe)

    async def repair(self, folders: Sequence[str | Path] = ()) -> AsyncIterator[IndexEvent | LibraryMovedAside]:
        """Move a library that cannot be read aside (renamed ``<name>.damaged-<time>``, never
        deleted) and rebuild the index from the folders it was indexed from (and
        ``folders``); the saved answers, kept in their own file, stay. Yields
        LibraryMovedAside, then each folder's index events. A library that reads whole is
        left alone (a KnownError says so), as is one another process holds."""
        from desktop_app.core.library import repair

        extra = [str(Path(f).expanduser().resolve()) for f in folders]
        for folder in extra:
            if not Path(folder).is_dir():
                raise KnownError(f"{folder} is not a folder.", "Name the folders the library was indexed from.")

        def work(emit: Callable[[IndexEvent | LibraryMovedAside], None], cancelled: Callable[[], bool]) -> None:
            from desktop_app.core.ingest.indexing import Indexer

            self._drop_store()
            problem = repair.check(self.db_path)
            if problem is None:
                raise KnownError(f"The library {self.db_path} reads whole: nothing to repair.",
                                 "Use `folio index FOLDER` to bring it up to date.")
            if not repair.needs_repair(problem):
                raise problem  # busy, a full disk, permissions: moving the file would not help
            archive = self.archive
            moved = repair.move_aside(self.db_path)
            repair.salvage_answers(moved, archive)
            known = archive.folders()
            todo = list(dict.fromkeys(known + extra))
            emit(LibraryMovedAside(path=str(self.db_path), moved_to=str(moved), problem=str(problem),
                                   folders=tuple(todo), answers=len(archive.answers())))
            store, embedder = self.store, self.embedder
            for folder in todo:
                if cancelled():
                    break
                if not Path(folder).is_dir():
                    logger.warning("cannot rebuild from %s: it is gone", folder)
                    continue
                archive.remember_folder(folder)
                indexer = Indexer(store, embedder, parse_timeout_s=self.settings.parse_timeout_s,
                                  ocr=self.settings.ocr)
                emit(indexer.run(folder, emit, cancelled))

        async for event in self._stream(self._index_pool, work, "rebuilding the library"):
            yield event

    async def reindex(self) -> AsyncIterator[IndexEvent]:
        def work(emit: Callable[[IndexEvent], None], cancelled: Callable[[], bool]) -> None:
            from desktop_app.core.ingest.indexing import Indexer

            Indexer(self.store, self.embedder).reindex(emit, cancelled)

        async for event in self._stream(self._index_pool, work, "rebuilding the search data"):
            yield event

    def within(self, scope: Sequence[str | Path]) -> tuple[str, ...]:
        """The absolute paths of ``scope`` (files and folders); a KnownError names a path that
        holds no indexed document. Reads the library: call it on a worker thread."""
        resolved = tuple(dict.fromkeys(str(Path(p).expanduser().resolve()) for p in scope))
        for path in resolved:
            if not self.store.files_within([path]):
                raise KnownError(
                    f"{path} holds no document of the library.",
                    "Ask within a PDF or a folder that was indexed (folio index FOLDER).",
                )
        return resolved

    async def search(self, query: str, k: int = 10, scope: Sequence[str | Path] = ()) -> list[Passage]:
        def find() -> list[Passage]:
            return self.retriever.search(query, k, scope=self.within(scope)).passages

        return await self._call(self._query_pool, find)

    def conversation_of(self, follow_up: str, question: str, searched: str | None = None,
                        ) -> tuple[Conversation, tuple[str, ...]]:
        """The conversation a question asked after the saved answer ``follow_up`` continues:
        its id, the turns up to that answer, the question as searched (``searched``, else
        followup.standalone's) and the scope of that answer. A KnownError when there is no
        such answer. Reads the answers file: call it on a worker thread."""
        from desktop_app.core.answer import followup

        record = self.archive.answer(follow_up)
        if record is None:
            raise KnownError(f"No saved answer {follow_up} to follow up.",
                             "Name an answer id from `folio history` (or --json's answer_started).")
        turns = self.archive.conversation(str(record["conversation_id"]))
        ids = [str(t["answer_id"]) for t in turns]
        turns = turns[: ids.index(record["answer_id"]) + 1] if record["answer_id"] in ids else [record]
        previous = [str(t.get("searched") or t["question"]) for t in turns]
        chosen = (searched or "").strip() or followup.standalone(question, previous).searched
        return (followup.Conversation(str(record["conversation_id"]),
                                      tuple((str(t["question"]), str(t["text"])) for t in turns), chosen),
                tuple(record.get("scope") or ()))

    async def ask(
        self, question: str, *, style: str | None = None, max_tokens: int | None = None,
        scope: Sequence[str | Path] = (), follow_up: str | None = None, searched: str | None = None,
        replaces: str | None = None,
    ) -> AsyncIterator[AnswerEvent]:
        from desktop_app.core.answer import answering
        from desktop_app.core.verdicts import Verifier

        settings = self.settings
        if style:
            settings = settings.replace(citation_style=style)
        if max_tokens:
            settings = settings.replace(max_tokens=max_tokens)

        asked = time.perf_counter()

        def work(emit: Callable[[AnswerEvent], None], cancelled: Callable[[], bool]) -> None:
            clock = FirstWordClock(asked)
            clock.add("model_busy_s", time.perf_counter() - asked)  # the model's thread was priming
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

            try:
                conversation, asked_within = None, tuple(str(p) for p in scope)
                if follow_up:
                    with clock.timing("follow_up_s"):
                        conversation, earlier_scope = self.conversation_of(follow_up, question, searched)
                    asked_within = asked_within or earlier_scope  # the scope is the conversation's
                elif searched and searched.strip():
                    from desktop_app.core.answer.followup import Conversation as Turns

                    conversation = Turns(searched=searched.strip())
                if conversation is not None and replaces:
                    conversation = dataclasses.replace(conversation, replaces=replaces)
                with clock.timing("embedder_load_s"):
                    self.embedder  # noqa: B018
                retriever = self.retriever
                within = self.within(asked_within)
            except KnownError as exc:
                emit(AnswerFailed(error=str(exc), known=True))
                return
            finished: list[str] = []

            def watch(event: AnswerEvent) -> None:
                if isinstance(event, AnswerFinished):
                    finished.append(event.answer_id)
                emit(event)

            archive = self.archive
            failures = archive.write_failures
            answering.answer(
                question, retriever=retriever, store=self.store, generator_factory=generator,
                settings=settings, emit=watch, should_cancel=cancelled, verifier=Verifier(), scope=within,
                clock=clock, conversation=conversation,
            )
            if finished and archive.write_failures > failures and archive.answer(finished[-1]) is None:
                problem = archive.last_failure
                emit(AnswerFailed(error=f"This answer is shown but was not saved: {problem}", known=True))

        async for event in self._stream(self._llm_pool, work):
            yield event

    async def check_text(self, text: str, name: str = "", judge: bool | None = None) -> AsyncIterator[CheckEvent]:
        """Check each sentence of ``text`` (an exported answer, Markdown or plain text)
        against the library: the text as read, then a verdict event per sentence with its
        best supporting passage, then the totals (services/checking.py). ``judge`` (default:
        Settings) asks the answer model about the sentences the rules are unsure of."""
        from desktop_app.services import checking

        use_judge = self.settings.judge if judge is None else judge

        def work(emit: Callable[[CheckEvent], None], cancelled: Callable[[], bool]) -> None:
            checking.check_text(text, name, self.retriever, self.store, emit, cancelled,
                                self._judge(use_judge, judge is True, cancelled, self.store),
                                self.settings.judge_budget_s)

        # With the judge, on the answer model's one thread (retrieval runs there for ask too).
        async for event in self._stream(self._llm_pool if use_judge else self._query_pool, work):
            yield event

    async def check_claims(self, lines: Sequence[str], judge: bool | None = None) -> AsyncIterator[JsonObject]:
        """A verdict per ``--claims`` JSONL line (sentence, passages, cited ids), in order;
        needs no library. ``judge`` (default: Settings) as for an answer's sentences."""
        from desktop_app.services import checking

        use_judge = self.settings.judge if judge is None else judge

        def work(emit: Callable[[JsonObject], None], cancelled: Callable[[], bool]) -> None:
            checking.check_claims(lines, emit, cancelled, self._judge(use_judge, judge is True, cancelled, None))

        async for result in self._stream(self._llm_pool if use_judge else self._query_pool, work):
            yield result

    def _judge(self, wanted: bool, required: bool, cancelled: Callable[[], bool],
               cache: JudgeCache | None) -> Judge | None:
        """The judge over the answer model (on the folio-llm thread), one question per
        sentence; None when not wanted, or when the model is missing and it was not asked
        for explicitly (the rules' verdicts stand; the log says why)."""
        if not wanted:
            return None
        try:
            generator = self.generator()
        except KnownError as exc:
            if required:
                raise
            logger.warning("checking without the judge: %s", exc)
            return None
        from desktop_app.core.verdicts import Judge

        return Judge(generator, cache, cancelled, max_judged=1, budget_s=self.settings.judge_budget_s)

    async def completion(self, messages: list[dict[str, str]], max_tokens: int = 256) -> AsyncIterator[str]:
        """Raw streamed completion from the answer model (no retrieval, no citations)."""

        def work(emit: Callable[[Any], None], cancelled: Callable[[], bool]) -> None:
            for delta in self.generator().stream(
                messages, max_tokens=max_tokens, temperature=self.settings.temperature,
                should_cancel=cancelled,
            ):
                emit(delta)

        async for delta in self._stream(self._llm_pool, work):
            yield delta

    async def embedding(self, text: str, passage: bool = False) -> list[float]:
        """The embedder's vector of ``text`` read as a question (or as a passage)."""
        embed = self.embedder.embed_passages if passage else self.embedder.embed_queries
        vec = await self._call(self._query_pool, lambda: embed([text])[0])
        return [float(x) for x in vec]

    def cancel(self) -> None:
        for flag in list(self._active):
            flag.set()

    async def documents(self, folder: str | Path | None = None) -> list[DocumentInfo]:
        where = str(Path(folder).expanduser().resolve()) if folder else None
        return await self._call(self._query_pool, lambda: self.store.documents(where))

    async def source_state(self, chunk_id: str, doc_id: str) -> SourceState:
        from desktop_app.core.library.history import source_state

        return await self._call(self._query_pool, lambda: source_state(self.store, chunk_id, doc_id))

    async def ocr_lines(self, doc_id: str, page: int, char_start: int, char_end: int) -> list[OcrLine]:
        """The OCR lines of a page holding ``char_start:char_end`` of its text (none on a
        page with its own text layer), boxed as the viewer draws them."""
        from desktop_app.core.ingest.ocr import view_lines

        def work() -> list[OcrLine]:
            geometry = self.store.page_geometry(doc_id, page)
            if geometry is None:
                return []
            lines = self.store.ocr_lines(doc_id, page, char_start, char_end)
            return view_lines(lines, *geometry)

        return await self._call(self._query_pool, work)

    async def document_part(self, document: str, page: int) -> DocumentPart | None:
        """Part ``page`` of a reflowable document (by its doc_id, or the path of a file in
        the library) with its blocks, for the document view; None when not stored."""
        def work() -> DocumentPart | None:
            doc_id = document
            if "/" in document or "\\" in document:
                record = self.store.file_record(str(Path(document).expanduser().resolve()))
                if record is None or record.doc_id is None:
                    return None
                doc_id = record.doc_id
            return self.store.document_part(doc_id, page)

        return await self._call(self._query_pool, work)

    async def history(self) -> list[JsonObject]:
        """Saved answers, from their own file: they list while another process holds the
        index, and after the index is lost."""
        return await self._call(self._query_pool, lambda: self.archive.answers())

    async def conversation(self, answer_id: str) -> list[JsonObject]:
        """Every saved answer of the conversation ``answer_id`` belongs to, oldest first,
        each with its sources' state as of now (empty: no such answer)."""
        from desktop_app.core.library.history import annotate_staleness

        def read() -> list[JsonObject]:
            record = self.archive.answer(answer_id)
            if record is None:
                return []
            turns = self.archive.conversation(str(record["conversation_id"]))
            try:
                store = self.store
            except KnownError as exc:
                logger.info("sources of conversation %s not checked: %s", answer_id, exc)
                return turns
            return [annotate_staleness(store, turn) for turn in turns]

        return await self._call(self._query_pool, read)

    async def export_conversation(self, answer_id: str, fmt: str = "markdown") -> str | None:
        """The whole conversation ``answer_id`` belongs to: Markdown, each turn with its
        footnotes, or (``"json"``) a list of audit records; None if there is no such answer."""
        from desktop_app.core.library.history import export_conversation

        turns = await self.conversation(answer_id)
        return export_conversation(turns, fmt) if turns else None

    async def answer_record(self, answer_id: str) -> JsonObject | None:
        from desktop_app.core.library.history import annotate_staleness

        def read() -> JsonObject | None:
            record = self.archive.answer(answer_id)
            if record is None:
                return None
            try:
                store = self.store
            except KnownError as exc:  # busy or damaged: the answer without its sources' state
                logger.info("sources of answer %s not checked: %s", answer_id, exc)
                return record
            return annotate_staleness(store, record)

        return await self._call(self._query_pool, read)

    async def export_answer(self, answer_id: str, fmt: str = "markdown") -> str | None:
        """A saved answer as Markdown with footnotes (``"markdown"``) or as its audit record
        (``"json"``); None if there is no such answer."""
        from desktop_app.core.library.history import export_json, export_markdown

        record = await self.answer_record(answer_id)
        if record is None:
            return None
        return export_json(record) + "\n" if fmt == "json" else export_markdown(record)

    async def delete_answer(self, answer_id: str) -> bool:
        return await self._call(self._query_pool, lambda: self.archive.delete_answer(answer_id))

    async def close(self) -> None:
        self._closing.set()
        self.cancel()
        for pool in (self._index_pool, self._query_pool, self._llm_pool):
            pool.shutdown(wait=True, cancel_futures=True)
        if self._generator is not None and self._owns_generator:
            self._generator.close()
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._archive is not None:
            self._archive.close()
            self._archive = None
