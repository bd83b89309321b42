"""The answers area of the facade: ask (a question, or a follow-up in a saved answer's
conversation), and the saved answers: history, a conversation, one answer's record, their
export, deleting one. Qt-free."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.errors import KnownError
from desktop_app.core.settings import Settings
from desktop_app.core.types import (
    AnswerEvent,
    AnswerFailed,
    AnswerFinished,
    FirstWordClock,
    HistoryEntry,
    SavedAnswer,
)
from desktop_app.services.bridge import ThreadBridge
from desktop_app.services.library import LibraryService
from desktop_app.services.model_run import ModelService
from desktop_app.services.parts import SharedParts

if TYPE_CHECKING:
    from desktop_app.core.answer.followup import Conversation

logger = logging.getLogger(__name__)


class AnswersService:
    def __init__(self, settings: Settings, parts: SharedParts, bridge: ThreadBridge, library: LibraryService,
                 models: ModelService) -> None:
        self._settings = settings
        self._parts = parts  # the answers file, the library file, the embedder, the retriever
        self._bridge = bridge
        self._library = library  # a question's scope
        self._models = models  # the answer model

    def conversation_of(self, follow_up: str, question: str, searched: str | None = None,
                        ) -> tuple[Conversation, tuple[str, ...]]:
        """The conversation a question asked after the saved answer ``follow_up`` continues:
        its id, the turns up to that answer, the question as searched (``searched``, else
        followup.standalone's) and the scope of that answer. A KnownError when there is no
        such answer. Reads the answers file: call it on a worker thread."""
        from desktop_app.core.answer import followup

        record = self._parts.archive.answer(follow_up)
        if record is None:
            raise KnownError(f"No saved answer {follow_up} to follow up.",
                             "Name an answer id from `folio history` (or --json's answer_started).")
        turns = self._parts.archive.conversation(record.conversation)
        ids = [t.answer_id for t in turns]
        turns = turns[: ids.index(record.answer_id) + 1] if record.answer_id in ids else [record]
        chosen = (searched or "").strip() or followup.standalone(question, [t.asked for t in turns]).searched
        return (followup.Conversation(record.conversation, tuple((t.question, t.text) for t in turns), chosen),
                record.scope)

    async def ask(
        self, question: str, *, style: str | None = None, max_tokens: int | None = None,
        scope: Sequence[str | Path] = (), follow_up: str | None = None, searched: str | None = None,
        replaces: str | None = None, quote_only: bool = False,
    ) -> AsyncIterator[AnswerEvent]:
        from desktop_app.core.answer import answering
        from desktop_app.core.answer.finder import PageFinder
        from desktop_app.core.verdicts import Verifier

        settings = self._settings
        if style:
            settings = settings.replace(citation_style=style)
        if max_tokens:
            settings = settings.replace(max_tokens=max_tokens)

        asked = time.perf_counter()

        def find_only(emit: Callable[[AnswerEvent], None]) -> None:
            """The document's own answer without a model (Settings.quote_only, --quote-only)."""
            try:
                conversation, asked_within = None, tuple(str(p) for p in scope)
                if follow_up:
                    conversation, earlier_scope = self.conversation_of(follow_up, question, searched)
                    asked_within = asked_within or earlier_scope
                retriever = self._parts.retriever
                within = self._library.within(asked_within)
            except KnownError as exc:
                emit(AnswerFailed(error=str(exc), known=True))
                return
            answering.find_only(question, retriever=retriever, finder=PageFinder(self._parts.store, self._parts.embedder),
                                settings=settings, emit=emit, scope=within, conversation=conversation)

        def work(emit: Callable[[AnswerEvent], None], cancelled: Callable[[], bool]) -> None:
            if quote_only or settings.quote_only:
                find_only(emit)
                return
            clock = FirstWordClock(asked)
            clock.add("model_busy_s", time.perf_counter() - asked)  # the model's thread was priming
            generator = self._models.for_answer(settings, clock, cancelled)

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
                    self._parts.embedder  # noqa: B018
                retriever = self._parts.retriever
                within = self._library.within(asked_within)
            except KnownError as exc:
                emit(AnswerFailed(error=str(exc), known=True))
                return
            finished: list[str] = []

            def watch(event: AnswerEvent) -> None:
                if isinstance(event, AnswerFinished):
                    finished.append(event.answer_id)
                emit(event)

            archive = self._parts.archive
            failures = archive.write_failures
            answering.answer(
                question, retriever=retriever, store=self._parts.store, generator_factory=generator,
                settings=settings, emit=watch, should_cancel=cancelled, verifier=Verifier(), scope=within,
                clock=clock, conversation=conversation, finder=PageFinder(self._parts.store, self._parts.embedder),
            )
            if finished and archive.write_failures > failures and archive.answer(finished[-1]) is None:
                problem = archive.last_failure
                emit(AnswerFailed(error=f"This answer is shown but was not saved: {problem}", known=True))

        pool = self._bridge.query_pool if quote_only or settings.quote_only else self._bridge.llm_pool  # no model: no wait
        async for event in self._bridge.stream(pool, work):
            yield event

    async def history(self) -> list[HistoryEntry]:
        """Saved answers, from their own file: they list while another process holds the
        index, and after the index is lost."""
        return await self._bridge.call(self._bridge.query_pool, lambda: self._parts.archive.answers())

    async def conversation(self, answer_id: str) -> list[SavedAnswer]:
        """Every saved answer of the conversation ``answer_id`` belongs to, oldest first,
        each with its sources' state as of now (empty: no such answer)."""
        from desktop_app.core.library.history import annotate_staleness

        def read() -> list[SavedAnswer]:
            record = self._parts.archive.answer(answer_id)
            if record is None:
                return []
            turns = self._parts.archive.conversation(record.conversation)
            try:
                store = self._parts.store
            except KnownError as exc:
                logger.info("sources of conversation %s not checked: %s", answer_id, exc)
                return turns
            return [annotate_staleness(store, turn) for turn in turns]

        return await self._bridge.call(self._bridge.query_pool, read)

    async def export_conversation(self, answer_id: str, fmt: str = "markdown") -> str | None:
        """The whole conversation ``answer_id`` belongs to: Markdown, each turn with its
        footnotes, or (``"json"``) a list of audit records; None if there is no such answer."""
        from desktop_app.core.library.history import export_conversation

        turns = await self.conversation(answer_id)
        return export_conversation(turns, fmt) if turns else None

    async def answer_record(self, answer_id: str) -> SavedAnswer | None:
        from desktop_app.core.library.history import annotate_staleness

        def read() -> SavedAnswer | None:
            record = self._parts.archive.answer(answer_id)
            if record is None:
                return None
            try:
                store = self._parts.store
            except KnownError as exc:  # busy or damaged: the answer without its sources' state
                logger.info("sources of answer %s not checked: %s", answer_id, exc)
                return record
            return annotate_staleness(store, record)

        return await self._bridge.call(self._bridge.query_pool, read)

    async def export_answer(self, answer_id: str, fmt: str = "markdown") -> str | None:
        """A saved answer as Markdown with footnotes (``"markdown"``) or as its audit record
        (``"json"``); None if there is no such answer."""
        from desktop_app.core.library.history import export_json, export_markdown

        record = await self.answer_record(answer_id)
        if record is None:
            return None
        return export_json(record) + "\n" if fmt == "json" else export_markdown(record)

    async def delete_answer(self, answer_id: str) -> bool:
        return await self._bridge.call(self._bridge.query_pool,
                                       lambda: self._parts.archive.delete_answer(answer_id))
