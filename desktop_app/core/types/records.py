"""Saved answers: what the answers file keeps of an answer, typed. Qt-free.

:class:`SavedAnswer` is one answer as the answers file holds it (its columns and its JSON
payload); :class:`HistoryEntry` is one row of the history. ``SavedAnswer.payload()`` is the
JSON the file keeps, key for key as Folio has always written it, and
:meth:`SavedAnswer.from_row` reads every payload written before (keys missing, the verdict
names "partial" and "unsupported", a source without its format): nothing already saved
becomes unreadable. Keys a newer Folio added are kept in ``extra`` and written back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import cast

from desktop_app.core.types.documents import PDF_FORMAT, JsonObject, SourceState, Span
from desktop_app.core.types.events import CitationStyle, QuotePayload, SourcePayload
from desktop_app.core.types.verdicts import ClaimVerdict, Verdict


class AnswerStatus(StrEnum):
    """How a saved answer ended (the answers file's ``status`` column)."""

    FINISHED = "finished"
    NO_BASIS = "no_basis"
    CANCELLED = "cancelled"
    FAILED = "failed"


# The payload's keys, in the order Folio writes them ("replaces" only when set).
_PAYLOAD_KEYS = ("sources", "citations", "hallucinated", "claims", "reason", "stats", "searched", "replaces", "quotes")
_SOURCE_FIELDS = {f.name for f in dataclasses.fields(SourcePayload)}


def _spans(value: object) -> tuple[Span, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple((int(s[0]), int(s[1])) for s in value if isinstance(s, list | tuple) and len(s) >= 2)


def source_from_json(data: Mapping[str, object]) -> SourcePayload:
    """A saved source (``SourcePayload.to_json``); fields an older Folio did not write
    take their defaults, fields it no longer knows are dropped."""
    known = {k: v for k, v in data.items() if k in _SOURCE_FIELDS}
    known["read"] = _spans(known.get("read"))
    known.setdefault("format", PDF_FORMAT)
    for name in ("page", "char_start", "char_end", "version"):
        if name in known and known[name] is not None:
            known[name] = int(cast(int, known[name]))
    for name in ("doc_title", "page_label", "section", "text", "locator"):
        known.setdefault(name, str(known.get("page", "")) if name == "page_label" else "")
    known.setdefault("char_start", 0)
    known.setdefault("char_end", len(str(known.get("text", ""))))
    return SourcePayload(**known)  # type: ignore[arg-type]


def claim_from_json(data: Mapping[str, object]) -> ClaimVerdict:
    """A saved sentence verdict (``ClaimVerdict.to_json``); "partial" and "unsupported"
    read as not confirmed (``Verdict``)."""
    span = _spans([data.get("sentence_span", [0, 0])])[0]

    def text(key: str) -> str:
        return str(data.get(key) or "")

    def optional(key: str) -> str | None:
        value = data.get(key)
        return None if value is None else str(value)

    return ClaimVerdict(
        span, Verdict(str(data.get("verdict", Verdict.NOT_CONFIRMED))),
        tuple(str(i) for i in cast(list[object], data.get("ids") or [])),
        float(cast(float, data.get("score") or 0.0)), optional("suggested"), optional("suggested_label"),
        _spans(data.get("support")), text("reason"), optional("support_id"), text("quote"), text("conflict"),
    )


@dataclass(frozen=True)
class HistoryEntry:
    """One saved answer as the history lists it (newest first)."""

    answer_id: str
    question: str
    status: str
    created_at: str
    model_id: str
    scope: tuple[str, ...] = ()
    conversation_id: str = ""

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["scope"] = list(self.scope)
        return data


@dataclass(frozen=True)
class SavedAnswer:
    """One saved answer: its columns, its payload, and (once
    :func:`~desktop_app.core.library.history.annotate_staleness` has looked) the state of
    each source as of now."""

    answer_id: str
    question: str
    text: str
    style: str = CitationStyle.LABEL
    model_id: str = ""
    status: str = AnswerStatus.FINISHED
    created_at: str = ""
    scope: tuple[str, ...] = ()
    conversation_id: str = ""
    sources: tuple[SourcePayload, ...] = ()
    citations: Mapping[str, tuple[Span, ...]] = field(default_factory=dict)
    hallucinated: tuple[str, ...] = ()
    claims: tuple[ClaimVerdict, ...] = ()
    reason: str = ""  # why there was no basis, or why the answer ended early
    stats: JsonObject = field(default_factory=dict)  # the model's figures (AnswerFinished.stats)
    searched: str = ""  # what retrieval was asked (a follow-up's standalone form)
    replaces: str = ""  # asked again with "Searched for" edited: the answer this one replaces
    quotes: tuple[QuotePayload, ...] = ()  # the document's own answering sentences (shown first)
    extra: JsonObject = field(default_factory=dict)  # payload keys this Folio does not know
    source_states: Mapping[str, SourceState] = field(default_factory=dict)  # id -> state, as of now

    # ------------------------------------------------------------------ reading

    @property
    def asked(self) -> str:
        """What retrieval was asked: the follow-up's standalone form, else the question."""
        return self.searched or self.question

    @property
    def conversation(self) -> str:
        """The conversation's id (an answer saved before conversations is its own)."""
        return self.conversation_id or self.answer_id

    def source(self, cid: str) -> SourcePayload | None:
        return next((s for s in self.sources if s.id == cid), None)

    def state(self, cid: str) -> str:
        """The source's state as of now ("" when nobody looked)."""
        state = self.source_states.get(cid)
        return str(state) if state is not None else ""

    def cited_ids(self) -> list[str]:
        """Ids of valid citations (among the sources) in order of first appearance."""
        ids = {s.id for s in self.sources}
        first = {cid: min(s[0] for s in spans) for cid, spans in self.citations.items() if cid in ids and spans}
        return sorted(first, key=first.__getitem__)

    # ------------------------------------------------------------------ the answers file

    def payload(self) -> JsonObject:
        """The JSON payload column, key for key as Folio writes it."""
        data: JsonObject = {
            "sources": [s.to_json() for s in self.sources],
            "citations": {k: [list(s) for s in v] for k, v in self.citations.items()},
            "hallucinated": list(self.hallucinated),
            "claims": [c.to_json() for c in self.claims],
            "reason": self.reason,
            "stats": dict(self.stats),
            "searched": self.searched or self.question,
        }
        if self.replaces:
            data["replaces"] = self.replaces
        if self.quotes:
            data["quotes"] = [q.to_json() for q in self.quotes]
        return {**data, **{k: v for k, v in self.extra.items() if k not in data}}

    @classmethod
    def from_row(cls, answer_id: str, question: str, text: str, style: str, model_id: str, status: str,
                 created_at: str, payload: Mapping[str, object], scope: tuple[str, ...] = (),
                 conversation_id: str = "") -> SavedAnswer:
        """An answer from its columns and its JSON payload, as any Folio wrote them."""
        sources = cast(list[object], payload.get("sources") or [])
        citations = cast(dict[str, object], payload.get("citations") or {})
        claims = cast(list[object], payload.get("claims") or [])
        return cls(
            answer_id=answer_id, question=question, text=text, style=style or CitationStyle.LABEL,
            model_id=model_id, status=status, created_at=created_at, scope=scope,
            conversation_id=conversation_id or answer_id,
            sources=tuple(source_from_json(s) for s in sources if isinstance(s, dict)),
            citations={str(k): _spans(v) for k, v in citations.items()},
            hallucinated=tuple(str(h) for h in cast(list[object], payload.get("hallucinated") or [])),
            claims=tuple(claim_from_json(c) for c in claims if isinstance(c, dict)),
            reason=str(payload.get("reason") or ""),
            stats=dict(cast(JsonObject, payload.get("stats") or {})),
            searched=str(payload.get("searched") or ""),
            replaces=str(payload.get("replaces") or ""),
            quotes=tuple(QuotePayload.from_json(q) for q in cast(list[object], payload.get("quotes") or [])
                         if isinstance(q, dict)),
            extra={k: v for k, v in payload.items() if k not in _PAYLOAD_KEYS},
        )

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SavedAnswer:
        """An answer from :meth:`to_json`'s object (its columns and payload keys in one)."""
        columns = ("answer_id", "question", "text", "style", "model_id", "status", "created_at")
        rest = (*columns, "scope", "conversation_id", "source_states")
        payload = {k: v for k, v in data.items() if k not in rest}
        scope = tuple(str(p) for p in cast(list[object], data.get("scope") or []))
        answer_id, question, text, style, model_id, status, created_at = (str(data.get(c) or "") for c in columns)
        record = cls.from_row(answer_id, question, text, style, model_id, status, created_at, payload, scope,
                              str(data.get("conversation_id") or ""))
        states = data.get("source_states")
        if isinstance(states, dict):
            record = dataclasses.replace(record, source_states={str(k): SourceState(str(v)) for k, v in states.items()})
        return record

    def to_json(self) -> JsonObject:
        """The answer as one JSON object: its columns, its payload and, when looked at, each
        source's ``state`` and ``source_states``."""
        data: JsonObject = {
            "answer_id": self.answer_id, "question": self.question, "text": self.text, "style": str(self.style),
            "model_id": self.model_id, "status": str(self.status), "created_at": self.created_at,
            **self.payload(), "scope": list(self.scope), "conversation_id": self.conversation,
        }
        if self.source_states:
            data["sources"] = [{**s.to_json(), "state": self.state(s.id)} for s in self.sources]
            data["source_states"] = {k: str(v) for k, v in self.source_states.items()}
        return data
