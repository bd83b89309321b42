"""The contract between the facade and its two clients (the window and the CLI). Qt-free.

The UI is written against these Protocols so that tests can drive real widgets with a
fake knowledge base (tests/ui/fakes.py); ``KnowledgeBase`` in ``knowledge_base.py`` is the
real one, and mypy checks that it conforms (``knowledge_base._conforms``). They split as
the facade does: the root (:class:`KnowledgeBaseAPI`: its areas, cancel, close) and one
Protocol per area (:class:`LibraryAPI`, :class:`AnswersAPI`, :class:`CheckingAPI`,
:class:`ModelsAPI`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Protocol

from desktop_app.core.errors import KnownError
from desktop_app.core.types import (
    AnswerEvent,
    CheckEvent,
    DocumentInfo,
    DocumentPart,
    HistoryEntry,
    IndexEvent,
    JsonObject,
    LibraryMovedAside,
    OcrLine,
    Passage,
    SavedAnswer,
    SourceState,
)


class LibraryAPI(Protocol):
    """The library: index, rebuild, repair, and read it."""

    def index(
        self, folder: str | Path, passwords: dict[str, str] | None = None
    ) -> AsyncIterator[IndexEvent]:
        """Scan ``folder``, parse, chunk, embed and store; yields progress, one ``FileIndexed``
        per file, and a final ``IndexSummary``. Stops promptly after :meth:`cancel`."""
        ...

    async def problem(self) -> KnownError | None:
        """Open the library; the KnownError that keeps it from opening (damaged, not a
        library, in use by a named process, a newer Folio, …), or None."""
        ...

    def repair(self, folders: Sequence[str | Path] = ()) -> AsyncIterator[IndexEvent | LibraryMovedAside]:
        """Move a library that cannot be read aside (renamed, never deleted) and rebuild
        the index from the folders it was indexed from (and ``folders``); the saved
        answers stay. Yields LibraryMovedAside, then index events."""
        ...

    def reindex(self) -> AsyncIterator[IndexEvent]:
        """Rebuild the derived data (search postings, and vectors missing for the current
        embedder) from the stored passages; yields progress. Stops promptly after :meth:`cancel`."""
        ...

    async def search(self, query: str, k: int = 10, scope: Sequence[str | Path] = ()) -> list[Passage]:
        """The best ``k`` passages; with ``scope`` (files and folders), only from the
        documents at or under those paths (a KnownError when one holds none)."""
        ...

    async def documents(self, folder: str | Path | None = None) -> list[DocumentInfo]: ...

    async def source_state(self, chunk_id: str, doc_id: str) -> SourceState: ...

    async def ocr_lines(self, doc_id: str, page: int, char_start: int, char_end: int) -> list[OcrLine]:
        """The OCR lines of a page that hold ``char_start:char_end`` of its text, boxed as
        the viewer draws them (empty for a page with its own text layer)."""
        ...

    async def document_part(self, document: str, page: int) -> DocumentPart | None:
        """Part ``page`` of a reflowable document (HTML, EPUB, DOCX, ODT, PPTX, Markdown,
        text) by doc_id or library path: its text and blocks, for the document view."""
        ...


class AnswersAPI(Protocol):
    """Asking, and the saved answers."""

    def ask(
        self,
        question: str,
        *,
        style: str | None = None,
        max_tokens: int | None = None,
        scope: Sequence[str | Path] = (),
        follow_up: str | None = None,
        searched: str | None = None,
        replaces: str | None = None,
        quote_only: bool = False,
    ) -> AsyncIterator[AnswerEvent]:
        """Stream the events of one answer: answer_started, quote (the document's own
        answering sentence, when one answers), token*, citation*, claim*,
        answer_finished (or no_basis / failed / cancelled). With ``scope`` (files and
        folders) the question is asked within those documents only: retrieval, the
        evidence gate and the sources; answer_started and the history record the scope.
        ``follow_up`` (a saved answer's id) continues that answer's conversation: the
        question is searched as it stands alone after it, the prompt recalls the earlier
        turns, and the scope is the conversation's unless ``scope`` names one;
        ``searched`` replaces what is searched for; ``replaces`` (with ``searched``) names
        the answer this one is asked again for, which the conversation then leaves out.
        answer_started carries ``searched`` and ``conversation_id``."""
        ...

    async def history(self) -> list[HistoryEntry]:
        """Saved answers, newest first: answer_id, question, status, created_at, model_id,
        scope (the paths it was asked within; empty: the whole library), conversation_id
        (the first answer of its conversation)."""
        ...

    async def conversation(self, answer_id: str) -> list[SavedAnswer]:
        """The saved answers of the conversation ``answer_id`` belongs to, oldest first,
        each as :meth:`answer_record` gives it (empty: no such answer)."""
        ...

    async def export_conversation(self, answer_id: str, fmt: str = "markdown") -> str | None:
        """The conversation ``answer_id`` belongs to, every turn: Markdown or JSON."""
        ...

    async def answer_record(self, answer_id: str) -> SavedAnswer | None:
        """A saved answer (question, text, sources, citations, claims, hallucinated, reason)
        with ``source_states`` (id -> current / changed / removed) as of now."""
        ...

    async def delete_answer(self, answer_id: str) -> bool: ...

    async def export_answer(self, answer_id: str, fmt: str = "markdown") -> str | None:
        """A saved answer as Markdown with footnotes or (``"json"``) its audit record."""
        ...


class CheckingAPI(Protocol):
    """A text's sentences, or claims lines, checked against the library."""

    def check_text(self, text: str, name: str = "") -> AsyncIterator[CheckEvent]:
        """Check each sentence of ``text`` against the library: the text as read
        (check_started), a sentence_check per sentence (verdict, best supporting passage,
        page and highlight), then check_finished."""
        ...

    def check_claims(self, lines: Sequence[str]) -> AsyncIterator[JsonObject]:
        """A verdict per ``--claims`` JSONL line, in order (no library needed)."""
        ...


class ModelsAPI(Protocol):
    """The answer model's readiness and the models' raw passthroughs."""

    def completion(self, messages: list[dict[str, str]], max_tokens: int = 256) -> AsyncIterator[str]:
        """R2R's passthrough: the answer model's raw streamed completion, no retrieval."""
        ...

    async def embedding(self, text: str) -> list[float]:
        """R2R's passthrough: the embedder's unit vector of ``text``."""
        ...

    async def answer_model_ready(self) -> int:
        """Wait until the answer model is loaded and its prompt head read (started when the
        facade warms up); the tokens cached, 0 when nothing was primed."""
        ...


class KnowledgeBaseAPI(Protocol):
    """The root: an area per service, and what stops and ends them all."""

    @property
    def library(self) -> LibraryAPI: ...

    @property
    def answers(self) -> AnswersAPI: ...

    @property
    def checking(self) -> CheckingAPI: ...

    @property
    def models(self) -> ModelsAPI: ...

    def cancel(self) -> None:
        """Stop the running index or answer as soon as possible (within a second)."""
        ...

    async def close(self) -> None: ...
