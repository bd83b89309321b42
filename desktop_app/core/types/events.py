"""Events: what an index run, an answer and a check report as they go; ``to_json()`` gives
the lines ``folio index --json``, ``folio ask --json`` and ``folio verify`` print. Qt-free."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from desktop_app.core.types.documents import (
    PDF_FORMAT,
    DocStatus,
    JsonObject,
    Sentence,
    Span,
    locate,
)
from desktop_app.core.types.verdicts import ClaimVerdict, Verdict


class CitationStyle(StrEnum):
    LABEL = "label"
    SHORTID = "shortid"


# --------------------------------------------------------------------------- index events


@dataclass(frozen=True)
class IndexProgress:
    files_done: int
    files_total: int
    pages_done: int
    chunks_done: int
    current_file: str
    elapsed: float
    eta_seconds: float | None
    event: str = field(default="progress", init=False)

    def to_json(self) -> JsonObject:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class FileIndexed:
    path: str
    status: DocStatus
    pages: int
    chunks: int
    unchanged: bool = False
    error: str = ""
    bad_pages: tuple[int, ...] = ()
    ocr_pages: int = 0  # pages whose text was read by OCR
    event: str = field(default="file", init=False)

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["status"] = str(self.status)
        data["bad_pages"] = list(self.bad_pages)
        return data


@dataclass(frozen=True)
class IndexSummary:
    documents: int
    pages: int
    chunks: int
    unchanged: int
    failed: tuple[FileIndexed, ...] = ()
    removed: tuple[str, ...] = ()
    cancelled: bool = False
    seconds: float = 0.0
    event: str = field(default="summary", init=False)

    def to_json(self) -> JsonObject:
        return {
            "event": "summary",
            "documents": self.documents,
            "pages": self.pages,
            "chunks": self.chunks,
            "unchanged": self.unchanged,
            "failed": [
                {"path": f.path, "status": str(f.status), "error": f.error} for f in self.failed
            ],
            "removed": list(self.removed),
            "cancelled": self.cancelled,
            "seconds": round(self.seconds, 3),
        }


IndexEvent = IndexProgress | FileIndexed | IndexSummary


@dataclass(frozen=True)
class LibraryMovedAside:
    """A repair began: the library that could not be read was kept at ``moved_to`` (never
    deleted), and the index is rebuilt from ``folders``; ``answers`` saved answers are kept
    in their own file and come back with it."""

    path: str
    moved_to: str
    problem: str
    folders: tuple[str, ...]
    answers: int
    event: str = field(default="moved_aside", init=False)

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["folders"] = list(self.folders)
        return data


# --------------------------------------------------------------------------- answer events


@dataclass(frozen=True)
class SourcePayload:
    """What the first report of a citation id carries: everything needed to open it."""

    id: str  # the label the model saw: "1" or a short id
    chunk_id: str
    doc_id: str
    doc_path: str
    doc_title: str
    page: int
    page_label: str
    section: str
    text: str
    char_start: int
    char_end: int
    version: int = 1
    read: tuple[Span, ...] = ()  # the spans of ``text`` the model read (empty: all of it)
    format: str = PDF_FORMAT  # "pdf" opens the page viewer; the others the document view
    locator: str = ""  # "p. 12", "section 9.10.1 ¶ 3"

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["read"] = [list(s) for s in self.read]
        return data

    @property
    def reflowable(self) -> bool:
        return self.format != PDF_FORMAT

    @property
    def where(self) -> str:
        return self.locator or locate(self.format, self.page, self.page_label)


@dataclass(frozen=True)
class AnswerStarted:
    question: str
    sources: tuple[SourcePayload, ...]
    answer_id: str = ""
    style: str = CitationStyle.LABEL
    also_searched: str = ""  # the glossary's words for the question's terms (glossary.py)
    scope: tuple[str, ...] = ()  # the files and folders the question was asked within (none: all)
    # Sent before the model reads the prompt: the tokens it still has to read (those not
    # cached) and how long the answer should take at this machine's measured speed.
    prompt_tokens: int = 0
    estimate_s: float = 0.0
    # What retrieval was asked: the question itself, or a follow-up made to stand alone
    # (core/answer/followup.py); and the conversation it belongs to (its first answer's id).
    searched: str = ""
    conversation_id: str = ""
    event: str = field(default="answer_started", init=False)

    def to_json(self) -> JsonObject:
        return {
            "event": self.event,
            "question": self.question,
            "answer_id": self.answer_id,
            "style": self.style,
            "also_searched": self.also_searched,
            "scope": list(self.scope),
            "sources": [s.to_json() for s in self.sources],
            "prompt_tokens": self.prompt_tokens,
            "estimate_s": round(self.estimate_s, 1),
            "searched": self.searched or self.question,
            "conversation_id": self.conversation_id or self.answer_id,
        }


@dataclass(frozen=True)
class QuotePayload:
    """The document's own sentence that answers the question (core/answer/finder.py), as
    the reader sees it before the model writes: ``id`` is its source's label (the marker
    that opens it), ``span`` its offsets in that source's text, ``page_span`` in its page's."""

    id: str
    text: str
    span: Span
    doc_path: str
    page: int
    page_span: Span
    score: float = 0.0
    kind: str = ""  # what the question asks for ("date", "amount", ...)

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["span"], data["page_span"] = list(self.span), list(self.page_span)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> QuotePayload:
        def span(key: str) -> Span:
            value = data.get(key)
            if isinstance(value, list | tuple) and len(value) >= 2:
                return (int(value[0]), int(value[1]))
            return (0, 0)

        score = data.get("score")
        page = data.get("page")
        return cls(str(data.get("id") or ""), str(data.get("text") or ""), span("span"),
                   str(data.get("doc_path") or ""), int(page) if isinstance(page, int | float | str) else 0,
                   span("page_span"), float(score) if isinstance(score, int | float) else 0.0,
                   str(data.get("kind") or ""))


@dataclass(frozen=True)
class AnswerQuoted:
    """The quotes, sent after ``answer_started`` and before the model's first token."""

    quotes: tuple[QuotePayload, ...]
    event: str = field(default="quote", init=False)

    def to_json(self) -> JsonObject:
        return {"event": self.event, "quotes": [q.to_json() for q in self.quotes]}


@dataclass(frozen=True)
class TokenDelta:
    text: str
    event: str = field(default="token", init=False)

    def to_json(self) -> JsonObject:
        return {"event": self.event, "text": self.text}


@dataclass(frozen=True)
class CitationFound:
    """One (id, span) seen in the answer. ``span`` are character offsets into the whole
    answer text: ``answer[span[0]:span[1]]`` is the marker that names ``id``."""

    id: str
    span: Span
    is_new: bool
    valid: bool
    source: SourcePayload | None = None
    event: str = field(default="citation", init=False)

    def to_json(self) -> JsonObject:
        data: JsonObject = {
            "event": self.event,
            "id": self.id,
            "span": list(self.span),
            "is_new": self.is_new,
            "valid": self.valid,
        }
        if self.source is not None:
            data["source"] = self.source.to_json()
        return data


@dataclass(frozen=True)
class AnswerFinished:
    text: str
    citations: dict[str, list[Span]]
    hallucinated: tuple[str, ...] = ()
    answer_id: str = ""
    # How the model did (GenerationStats.to_json: prompt_tokens, cached_tokens, prefill_s,
    # tokens_per_s, ...) and where the seconds before the first word went ("first_word":
    # FirstWordClock.to_json); empty when no model ran.
    stats: JsonObject = field(default_factory=dict)
    event: str = field(default="answer_finished", init=False)

    def to_json(self) -> JsonObject:
        return {
            "event": self.event,
            "answer_id": self.answer_id,
            "text": self.text,
            "citations": {k: [list(s) for s in v] for k, v in self.citations.items()},
            "hallucinated": list(self.hallucinated),
            "stats": dict(self.stats),
        }


@dataclass(frozen=True)
class NoBasis:
    reason: str
    event: str = field(default="no_basis", init=False)

    def to_json(self) -> JsonObject:
        return {"event": self.event, "reason": self.reason}


@dataclass(frozen=True)
class AnswerFailed:
    error: str
    known: bool
    event: str = field(default="failed", init=False)

    def to_json(self) -> JsonObject:
        return {"event": self.event, "error": self.error, "known": self.known}


@dataclass(frozen=True)
class AnswerCancelled:
    event: str = field(default="cancelled", init=False)

    def to_json(self) -> JsonObject:
        return {"event": self.event}


AnswerEvent = (
    AnswerStarted
    | AnswerQuoted
    | TokenDelta
    | CitationFound
    | AnswerFinished
    | ClaimVerdict
    | NoBasis
    | AnswerFailed
    | AnswerCancelled
)


# --------------------------------------------------------------------------- check events


@dataclass(frozen=True)
class Footnote:
    """A source of an exported answer: ``[^label]: Title (`file.pdf`), p. 5 — … chunk ID``."""

    label: str
    chunk_id: str
    file_name: str
    page_label: str
    passage: str  # the verbatim passage quoted under the definition


@dataclass(frozen=True)
class TextToCheck:
    """A check's first event, the text as read (core/verdicts/check_input.py): plain prose
    and its sentences; ``cited[i]`` are the marker labels of sentence ``i``."""

    title: str
    text: str
    sentences: tuple[Sentence, ...]
    cited: tuple[tuple[str, ...], ...]
    footnotes: Mapping[str, Footnote] = field(default_factory=dict)
    exported: bool = False  # an answer exported by Folio
    headings: frozenset[int] = frozenset()  # indexes of sentences that are headings
    event: str = field(default="check_started", init=False)

    def to_json(self) -> JsonObject:
        return {
            "event": self.event,
            "title": self.title,
            "exported": self.exported,
            "sentences": len(self.sentences),
            "footnotes": {k: {"chunk_id": f.chunk_id, "file": f.file_name, "page_label": f.page_label}
                          for k, f in self.footnotes.items()},
        }


@dataclass(frozen=True)
class SentenceCheck:
    """One sentence of a checked text, its best supporting passage and the verdict."""

    index: int  # 0-based among the text's sentences
    span: Span  # into TextToCheck.text
    sentence: str
    verdict: Verdict
    score: float = 0.0
    reason: str = ""
    cited: tuple[str, ...] = ()  # marker labels the sentence carried
    source: SourcePayload | None = None  # the passage the verdict rests on (id: its label)
    where: str = ""  # "file.pdf p. 22" (or the exported footnote's, if not in the library)
    support: tuple[Span, ...] = ()  # spans of ``source.text`` that best support the sentence
    quote: str = ""  # the passage words the verdict rests on
    from_citation: bool = False  # the passage is one the sentence cites
    conflict: str = ""  # of a contradicted sentence: what the passage states otherwise (types.CONFLICT_KINDS)
    event: str = field(default="sentence_check", init=False)

    def highlight(self) -> list[Span]:
        """The support spans as offsets into the page's text (page.text[a:b])."""
        if self.source is None:
            return []
        base = self.source.char_start
        spans = self.support or ((0, len(self.source.text)),)
        return [(base + a, base + b) for a, b in spans]

    def to_json(self) -> JsonObject:
        s = self.source
        return {
            "event": self.event, "index": self.index, "span": list(self.span),
            "sentence": self.sentence, "verdict": str(self.verdict), "score": round(self.score, 4),
            "reason": self.reason, "cited": list(self.cited), "from_citation": self.from_citation,
            "quote": self.quote, "conflict": self.conflict, "where": self.where,
            "chunk_id": s.chunk_id if s else None, "doc_path": s.doc_path if s else None,
            "doc_title": s.doc_title if s else None, "page": s.page if s else None,
            "page_label": s.page_label if s else None, "section": s.section if s else None,
            "char_start": s.char_start if s else None, "char_end": s.char_end if s else None,
            "support": [list(x) for x in self.support], "highlight": [list(x) for x in self.highlight()],
        }


@dataclass(frozen=True)
class CheckFinished:
    counts: dict[str, int]  # verdict -> sentences
    sentences: int
    cancelled: bool = False
    event: str = field(default="check_finished", init=False)

    def to_json(self) -> JsonObject:
        return {"event": self.event, "counts": self.counts, "sentences": self.sentences,
                "cancelled": self.cancelled}


CheckEvent = TextToCheck | SentenceCheck | CheckFinished
