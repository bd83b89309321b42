"""A fake knowledge base for the window tests: indexes by listing PDFs and streams a
scripted answer (the document's own quote when scripted, tokens and citation events) with
small asyncio sleeps, or only its quote when asked to find the passage only; and a fake
model installer."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdf

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.ids import chunk_id, sha256_file
from desktop_app.core.models import catalog as models
from desktop_app.core.models.catalog import InstallProgress, InstallStep
from desktop_app.core.types import (
    AnswerCancelled,
    AnswerEvent,
    AnswerFinished,
    AnswerQuoted,
    AnswerStarted,
    CheckEvent,
    CheckFinished,
    CitationFound,
    ClaimVerdict,
    DocStatus,
    DocumentInfo,
    FileIndexed,
    HistoryEntry,
    IndexEvent,
    IndexProgress,
    IndexSummary,
    JsonObject,
    LibraryMovedAside,
    NoBasis,
    OcrLine,
    Passage,
    QuotePayload,
    SavedAnswer,
    SentenceCheck,
    SourcePayload,
    SourceState,
    TokenDelta,
    Verdict,
)
from desktop_app.core.verdicts import read_text
from desktop_app.services.api import KnowledgeBaseAPI
from desktop_app.services.checking import check_claims

MARKER = re.compile(r"\[(\d+)\]")


def payload(
    label: str, pdf: Path, page: int, text: str, section: str = "", title: str = ""
) -> SourcePayload:
    """A source as the facade would report it; ``text`` is pypdf's text of the passage."""
    doc_id = sha256_file(pdf)
    page_text = pypdf.PdfReader(pdf).pages[page - 1].extract_text()
    start = max(0, page_text.find(text[:20]))
    return SourcePayload(
        id=label,
        chunk_id=chunk_id(doc_id, page, 0),
        doc_id=doc_id,
        doc_path=str(pdf),
        doc_title=title or pdf.stem,
        page=page,
        page_label=str(page),
        section=section,
        text=text,
        char_start=start,
        char_end=start + len(text),
    )


def quote(source: SourcePayload, sentence: str, score: float = 0.8, kind: str = "") -> QuotePayload:
    """``sentence`` of ``source`` as the answer finder reports it: the source's own words
    (pypdf's tabs and all; ``sentence``'s spaces match any run of white space), their span
    in the source's text and in its page's."""
    found = re.search(r"\s+".join(re.escape(word) for word in sentence.split()), source.text)
    assert found is not None, f"{sentence!r} is not in source {source.id}"
    start, end = found.span()
    return QuotePayload(source.id, source.text[start:end], (start, end), source.doc_path, source.page,
                        (source.char_start + start, source.char_start + end), score, kind)


def pypdf_passage(pdf: Path, page: int, first: str, last: str) -> str:
    """The text pypdf extracts from ``first`` to the end of the line holding ``last`` on a
    page (tabs, ligatures and all)."""
    text: str = pypdf.PdfReader(pdf).pages[page - 1].extract_text()
    flat = text.replace("\t", " ")
    start = flat.index(first)
    end = flat.find("\n", flat.index(last, start))
    return text[start : end if end >= 0 else len(text)]


@dataclass
class ScriptedAnswer:
    text: str
    sources: list[SourcePayload]
    verdicts: list[ClaimVerdict] = field(default_factory=list)
    chunk: int = 4  # characters per token
    quotes: list[QuotePayload] = field(default_factory=list)  # sent right after answer_started

    def events(self, question: str, scope: tuple[str, ...] = ()) -> list[AnswerEvent]:
        labels = {s.id: s for s in self.sources}
        events: list[AnswerEvent] = [
            AnswerStarted(question=question, sources=tuple(self.sources), answer_id="a1", scope=scope)
        ]
        if self.quotes:
            events.append(AnswerQuoted(tuple(self.quotes)))
        markers = [(m.group(1), m.span()) for m in MARKER.finditer(self.text)]
        reported: set[str] = set()
        emitted = 0
        for start in range(0, len(self.text), self.chunk):
            piece = self.text[start : start + self.chunk]
            events.append(TokenDelta(piece))
            emitted = start + len(piece)
            for cid, span in list(markers):
                if span[1] <= emitted:
                    markers.remove((cid, span))
                    valid = cid in labels
                    first = cid not in reported
                    reported.add(cid)
                    source = labels[cid] if valid and first else None
                    events.append(
                        CitationFound(cid, span, is_new=first, valid=valid, source=source)
                    )
        citations: dict[str, list[tuple[int, int]]] = {}
        hallucinated: list[str] = []
        for match in MARKER.finditer(self.text):
            if match.group(1) in labels:
                citations.setdefault(match.group(1), []).append(match.span())
            elif match.group(1) not in hallucinated:
                hallucinated.append(match.group(1))
        events.append(AnswerFinished(self.text, citations, tuple(hallucinated), answer_id="a1"))
        events.extend(self.verdicts)
        return events

    def quote_only_events(self, question: str, scope: tuple[str, ...] = ()) -> list[AnswerEvent]:
        """As the facade finds the passage only: the sources, the quotes (or no basis when
        there are none) and an empty finish; no model, nothing saved."""
        found: AnswerEvent = (AnswerQuoted(tuple(self.quotes)) if self.quotes
                              else NoBasis(reason="No sentence in the sources answers the question surely enough."))
        return [AnswerStarted(question=question, sources=tuple(self.sources), answer_id="q1", scope=scope), found,
                AnswerFinished(text="", citations={}, hallucinated=(), answer_id="q1")]


def saved_record(
    question: str, script: ScriptedAnswer, answer_id: str, created_at: str = "2024-05-01 10:00:00"
) -> SavedAnswer:
    """The record the real store keeps for ``script`` answered to ``question``, read back
    from its payload as the real answers file reads it."""
    events = script.events(question)
    finished = next(e for e in events if isinstance(e, AnswerFinished))
    return SavedAnswer.from_row(answer_id, question, finished.text, "label", "fake-generator", "finished",
                                created_at, _payload(script, finished))


def _payload(script: ScriptedAnswer, finished: AnswerFinished) -> JsonObject:
    return {
        "sources": [s.to_json() for s in script.sources],
        # Like the real resolver: every id the answer named, hallucinated ones included.
        "citations": {
            cid: [list(m.span()) for m in MARKER.finditer(finished.text) if m.group(1) == cid]
            for cid in dict.fromkeys(m.group(1) for m in MARKER.finditer(finished.text))
        },
        "hallucinated": list(finished.hallucinated),
        "claims": [c.to_json() for c in script.verdicts],
        "reason": "",
        "quotes": [q.to_json() for q in script.quotes],
    }


class FakeLibrary:
    """Indexes by listing PDFs; holds no passages (search finds none)."""

    def __init__(self, kb: FakeKnowledgeBase) -> None:
        self.kb = kb  # the scripted state lives on the root, where the tests set it

    async def index(
        self, folder: str | Path, passwords: dict[str, str] | None = None
    ) -> AsyncIterator[IndexEvent]:
        self.kb._cancelled = False
        self.kb.index_calls.append((str(folder), passwords))
        files = sorted(Path(folder).rglob("*.pdf"))
        started = time.monotonic()
        pages_done = 0
        failed: list[FileIndexed] = []
        done = 0
        for position, pdf in enumerate(files):
            elapsed = time.monotonic() - started
            eta = elapsed / position * (len(files) - position) if position else None
            yield IndexProgress(
                position, len(files), pages_done, pages_done, str(pdf), elapsed, eta
            )
            await asyncio.sleep(self.kb.file_delay)
            if position == 1 and self.kb.index_gate is not None:
                await self.kb.index_gate.wait()
            if self.kb._cancelled:
                yield IndexSummary(
                    done, pages_done, pages_done, 0, tuple(failed), (), True, elapsed
                )
                return
            pages = len(pypdf.PdfReader(pdf).pages)
            password = self.kb.locked.get(pdf.name)
            if password is not None and (passwords or {}).get(str(pdf)) != password:
                event = FileIndexed(str(pdf), DocStatus.NEEDS_PASSWORD, 0, 0, error="encrypted")
                failed.append(event)
            else:
                event = FileIndexed(str(pdf), DocStatus.INDEXED, pages, pages)
                pages_done += pages
                done += 1
            self.kb.documents_by_path[str(pdf)] = DocumentInfo(
                doc_id=sha256_file(pdf),
                path=str(pdf),
                title=pdf.stem.title(),
                status=event.status,
                pages=pages if event.status.searchable else 0,
                chunks=event.chunks,
            )
            yield event
        elapsed = time.monotonic() - started
        yield IndexProgress(len(files), len(files), pages_done, pages_done, "", elapsed, 0.0)
        yield IndexSummary(done, pages_done, pages_done, 0, tuple(failed), (), False, elapsed)

    async def problem(self) -> KnownError | None:
        return self.kb.problem

    async def repair(self, folders: Sequence[str | Path] = ()) -> AsyncIterator[IndexEvent | LibraryMovedAside]:
        """Keep nothing broken: the problem goes, and the folders are indexed again."""
        self.kb.problem = None
        for folder in folders:
            async for event in self.index(folder):
                yield event

    async def reindex(self) -> AsyncIterator[IndexEvent]:
        """Re-embed every stored passage: one progress event per document."""
        self.kb._cancelled = False
        self.kb.reindex_calls += 1
        done = 0
        for info in list(self.kb.documents_by_path.values()):
            await asyncio.sleep(self.kb.file_delay)
            if self.kb._cancelled:
                return
            done += max(1, info.chunks)
            yield IndexProgress(0, 0, 0, done, "", 0.0, None)

    async def documents(self, folder: str | Path | None = None) -> list[DocumentInfo]:
        await asyncio.sleep(0)
        return sorted(self.kb.documents_by_path.values(), key=lambda d: d.path)

    async def search(self, query: str, k: int = 10, scope: Sequence[str | Path] = ()) -> list[Passage]:
        return []

    async def source_state(self, chunk_id: str, doc_id: str) -> SourceState:
        await asyncio.sleep(0.01)  # hashing happens off the GUI thread in the real one
        if chunk_id in self.kb.state_overrides:
            return self.kb.state_overrides[chunk_id]
        for info in self.kb.documents_by_path.values():
            if info.doc_id == doc_id:
                path = Path(info.path)
                if not path.is_file():
                    return SourceState.REMOVED
                return SourceState.CURRENT if sha256_file(path) == doc_id else SourceState.CHANGED
        return SourceState.REMOVED

    async def document_part(self, document: str, page: int) -> Any:
        return None

    async def ocr_lines(self, doc_id: str, page: int, char_start: int, char_end: int) -> list[OcrLine]:
        await asyncio.sleep(0)
        return [line for line in self.kb.ocr_lines_by_page.get((doc_id, page), [])
                if line.char_end > char_start and line.char_start < char_end]


class FakeAnswers:
    """Streams the root's scripted answers and keeps its saved records."""

    def __init__(self, kb: FakeKnowledgeBase) -> None:
        self.kb = kb  # the scripted state lives on the root, where the tests set it

    async def ask(
        self, question: str, *, style: str | None = None, max_tokens: int | None = None,
        scope: Sequence[str | Path] = (), follow_up: str | None = None, searched: str | None = None,
        replaces: str | None = None, quote_only: bool = False,
    ) -> AsyncIterator[AnswerEvent]:
        self.kb._cancelled = False
        self.kb.questions.append(question)
        self.kb.follow_ups.append((follow_up, searched))
        self.kb.replaced.append(replaces)
        self.kb.quote_only_asks.append(quote_only)
        conversation_id = follow_up or ""
        within = tuple(str(p) for p in scope)
        self.kb.scopes.append(within)
        script = (
            self.kb.scripted.pop(0)
            if self.kb.scripted
            else ScriptedAnswer("The documents say nothing about it.", [])
        )
        events = (script.quote_only_events(question, within) if quote_only
                  else script.events(question, within) if within else script.events(question))
        for count, event in enumerate(events):
            if self.kb.pause_at is not None and count == self.kb.pause_at:
                self.kb.paused.set()
                await self.kb.resume.wait()
            if self.kb._cancelled:
                yield AnswerCancelled()
                return
            if isinstance(event, TokenDelta):
                await asyncio.sleep(self.kb.token_delay)
            if isinstance(event, AnswerStarted):  # as the facade says what it searched for
                event = dataclasses.replace(event, searched=searched or question,
                                            conversation_id=conversation_id or event.answer_id)
            yield event
        if self.kb.hold_after_finish:  # the answer is written; the model checks its sentences
            self.kb.paused.set()
            await self.kb.resume.wait()

    async def history(self) -> list[HistoryEntry]:
        await asyncio.sleep(0)
        rows = [HistoryEntry(r.answer_id, r.question, str(r.status), r.created_at, r.model_id, r.scope, r.conversation)
                for r in self.kb.saved.values()]
        return sorted(rows, key=lambda r: r.created_at, reverse=True)

    async def conversation(self, answer_id: str) -> list[SavedAnswer]:
        record = await self.answer_record(answer_id)
        if record is None:
            return []
        turns = [await self.answer_record(r.answer_id) for r in sorted(self.kb.saved.values(),
                 key=lambda r: r.created_at) if r.conversation == record.conversation]
        return [t for t in turns if t is not None]

    async def export_conversation(self, answer_id: str, fmt: str = "markdown") -> str | None:
        turns = await self.conversation(answer_id)
        return "\n".join(t.question for t in turns) or None

    async def answer_record(self, answer_id: str) -> SavedAnswer | None:
        record = self.kb.saved.get(answer_id)
        if record is None:
            return None
        states = {s.id: await self.kb.library.source_state(s.chunk_id, s.doc_id) for s in record.sources}
        return dataclasses.replace(record, source_states=states)

    async def delete_answer(self, answer_id: str) -> bool:
        await asyncio.sleep(0)
        self.kb.deleted.append(answer_id)
        return self.kb.saved.pop(answer_id, None) is not None

    async def export_answer(self, answer_id: str, fmt: str = "markdown") -> str | None:
        record = await self.answer_record(answer_id)
        if record is None:
            return None
        return json.dumps(record.to_json()) + "\n" if fmt == "json" else f"# {record.question}\n\n{record.text}\n"


class FakeChecking:
    """Reads a text as the real checker does; with the fake library's passages (none) every
    sentence is not confirmed. Claims lines are checked by the real rules (no library)."""

    def __init__(self, kb: FakeKnowledgeBase) -> None:
        self.kb = kb  # the scripted state lives on the root, where the tests set it

    async def check_text(self, text: str, name: str = "") -> AsyncIterator[CheckEvent]:
        document = read_text(text, name)
        yield document
        for index, sentence in enumerate(document.sentences):
            await asyncio.sleep(0)
            if self.kb._cancelled:
                yield CheckFinished({}, len(document.sentences), cancelled=True)
                return
            yield SentenceCheck(index, (sentence.start, sentence.end), sentence.text, Verdict.NOT_CONFIRMED,
                                reason="no passage in the library matches it", cited=document.cited[index])
        count = len(document.sentences)
        yield CheckFinished({Verdict.NOT_CONFIRMED.value: count} if count else {}, count)

    async def check_claims(self, lines: Sequence[str]) -> AsyncIterator[JsonObject]:
        results: list[JsonObject] = []
        check_claims(lines, results.append, lambda: self.kb._cancelled)
        for result in results:
            yield result


class FakeModels:
    """The answer model's readiness as the root's ``model_ready`` says; raw passthroughs
    that answer from the script."""

    def __init__(self, kb: FakeKnowledgeBase) -> None:
        self.kb = kb  # the scripted state lives on the root, where the tests set it

    async def answer_model_ready(self) -> int:
        await self.kb.model_ready.wait()
        return self.kb.cached_head

    async def completion(self, messages: list[dict[str, str]], max_tokens: int = 256) -> AsyncIterator[str]:
        text = self.kb.scripted.pop(0).text if self.kb.scripted else "The documents say nothing about it."
        for start in range(0, len(text), 4):
            await asyncio.sleep(self.kb.token_delay)
            yield text[start : start + 4]

    async def embedding(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()[:4]
        norm = math.sqrt(sum(b * b for b in digest)) or 1.0
        return [b / norm for b in digest]


class FakeKnowledgeBase:
    """The window's facade, faked area by area as services/api.py splits it: ``library``,
    ``answers``, ``checking`` and ``models``; the scripted state they play is set here."""

    def __init__(self, token_delay: float = 0.002, file_delay: float = 0.01) -> None:
        self.model_ready = asyncio.Event()  # set: the answer model is loaded and primed
        self.model_ready.set()
        self.cached_head = 0  # the tokens answer_model_ready reports
        self.token_delay = token_delay
        self.file_delay = file_delay
        self.scripted: list[ScriptedAnswer] = []  # the answers ask streams, in turn
        self.locked: dict[str, str] = {}  # file name -> password
        self.cancel_calls = 0
        self.index_calls: list[tuple[str, dict[str, str] | None]] = []
        self.follow_ups: list[tuple[str | None, str | None]] = []  # (follow_up, searched) of each ask
        self.replaced: list[str | None] = []  # the answer each ask was asked again for
        self.quote_only_asks: list[bool] = []  # whether each ask found the passage only
        self.questions: list[str] = []
        self.scopes: list[tuple[str, ...]] = []  # the scope each question was asked within
        self.documents_by_path: dict[str, DocumentInfo] = {}
        self.state_overrides: dict[str, SourceState] = {}
        self.ocr_lines_by_page: dict[tuple[str, int], list[OcrLine]] = {}  # (doc_id, page)
        self.pause_at: int | None = None  # hold the answer stream after this many events
        self.hold_after_finish = False  # hold after the last event, as the judge's checks do
        self.resume = asyncio.Event()
        self.paused = asyncio.Event()
        self.index_gate: asyncio.Event | None = None  # hold indexing after the first file
        self.closed = False
        self._cancelled = False
        self.saved: dict[str, SavedAnswer] = {}  # answer id -> record, oldest first
        self.deleted: list[str] = []
        self.reindex_calls = 0
        self.problem: KnownError | None = None  # what library.problem() reports

        self.library = FakeLibrary(self)
        self.answers = FakeAnswers(self)
        self.checking = FakeChecking(self)
        self.models = FakeModels(self)

    def cancel(self) -> None:
        self.cancel_calls += 1
        self._cancelled = True
        self.resume.set()
        if self.index_gate is not None:
            self.index_gate.set()

    async def close(self) -> None:
        self.closed = True


def _conforms(kb: FakeKnowledgeBase) -> KnowledgeBaseAPI:
    """Where mypy checks that the fake is the facade's Protocols, area by area (this file
    is in mypy's files; tests/ui/test_fakes.py checks the same at run time)."""
    return kb


class FakeInstaller:
    """Stands in for ``models.install``: reports progress like it, then writes every file of
    the set at its manifest size (sparse, so instantly). It can hold half-way through the
    first file until ``release`` is set (cancelling meanwhile raises ``Cancelled``), or
    fail there with ``fail``."""

    def __init__(self, hold: bool = False, fail: Exception | None = None) -> None:
        self.calls: list[str] = []
        self.threads: list[str] = []
        self.halfway = threading.Event()
        self.release = threading.Event()
        self.fail = fail
        if not hold:
            self.release.set()

    def __call__(
        self,
        which: str = "small",
        progress: Callable[[InstallProgress], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
    ) -> list[Path]:
        self.calls.append(which)
        self.threads.append(threading.current_thread().name)
        specs = models.select(models.load_manifest(), which)

        def report(step: InstallStep, spec: models.ModelSpec, done: int, index: int) -> None:
            if progress is not None:
                progress(InstallProgress(step, spec.id, done, spec.size, index, len(specs)))

        for index, spec in enumerate(specs):
            report(InstallStep.DOWNLOAD, spec, 0, index)
            report(InstallStep.ASSEMBLE, spec, spec.size // 2, index)
            self.halfway.set()
            while not self.release.wait(0.01):
                if should_cancel is not None and should_cancel():
                    raise Cancelled()
            if self.fail is not None:
                raise self.fail
            path = spec.path()
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as handle:
                handle.truncate(spec.size)
            report(InstallStep.INSTALLED, spec, spec.size, index + 1)
        return [spec.path() for spec in specs]
