"""One question/answer turn as the window sees it, built from answer events. Qt-free.

The conversation pane keeps one :class:`AnswerTurn` per question and feeds it every event
of the stream; rendering (``answer_html``) and export (``export``) read from it. The turn
never parses model text: markers, verdicts, quotes and sources all come from events.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from enum import StrEnum

from desktop_app.core.types import (
    AnswerCancelled,
    AnswerEvent,
    AnswerFailed,
    AnswerFinished,
    AnswerQuoted,
    AnswerStarted,
    CitationFound,
    CitationStyle,
    ClaimVerdict,
    NoBasis,
    QuotePayload,
    SourcePayload,
    SourceState,
    Span,
    TokenDelta,
)

logger = logging.getLogger(__name__)


class TurnState(StrEnum):
    WAITING = "waiting"  # asked, nothing received yet
    STREAMING = "streaming"
    FINISHED = "finished"
    NO_BASIS = "no_basis"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def running(self) -> bool:
        return self in (TurnState.WAITING, TurnState.STREAMING)


@dataclass(frozen=True)
class Marker:
    """A citation marker in the answer text: ``text[span[0]:span[1]]`` names ``id``."""

    id: str
    span: Span
    valid: bool


@dataclass(frozen=True)
class MarkerCluster:
    """Markers whose spans overlap (``[1, 3]`` reported once per id) render as one group."""

    start: int
    end: int
    markers: tuple[Marker, ...]


@dataclass
class AnswerTurn:
    question: str
    state: TurnState = TurnState.WAITING
    text: str = ""
    answer_id: str = ""
    style: str = CitationStyle.LABEL
    sources: list[SourcePayload] = field(default_factory=list)  # as given to the model
    cited: dict[str, SourcePayload] = field(default_factory=dict)  # payloads of cited ids
    markers: list[Marker] = field(default_factory=list)
    verdicts: list[ClaimVerdict] = field(default_factory=list)
    no_basis: str = ""
    error: str = ""
    error_known: bool = True
    hallucinated: tuple[str, ...] = ()
    revision: int = 0  # bumped on every change so views know to re-render
    # A turn reopened from history: when it was saved, and the state of each source id now
    # (changed / removed sources get a banner; the viewer re-checks before highlighting).
    saved_at: str = ""
    also_searched: str = ""  # the glossary's words search added to the question
    scope: tuple[str, ...] = ()  # the files and folders the question was asked within
    scope_label: str = ""  # how the window named them ("" : their file names)
    source_states: dict[str, SourceState] = field(default_factory=dict)
    # From AnswerStarted: the tokens the model reads before it writes and its estimate.
    prompt_tokens: int = 0
    estimate_s: float = 0.0
    stats: dict[str, object] = field(default_factory=dict)  # AnswerFinished.stats
    # What was searched for (the question, or a follow-up made to stand alone; the person
    # may edit it and search again) and the conversation the answer belongs to.
    searched: str = ""
    conversation_id: str = ""
    # The document's own answering sentences (AnswerQuoted), shown above the answer from
    # before the model's first word; a later AnswerQuoted replaces them.
    quotes: tuple[QuotePayload, ...] = ()
    # Asked with "find the passage only" (Settings.quote_only): no model writes, the turn
    # is its quotes and sources. Nothing is saved, so it is no answer to follow up.
    quote_only: bool = False

    # ------------------------------------------------------------------ events

    def apply(self, event: AnswerEvent) -> None:
        self.revision += 1
        if isinstance(event, AnswerStarted):
            self.state = TurnState.STREAMING
            self.sources = list(event.sources)
            self.also_searched = event.also_searched
            self.scope = tuple(event.scope) or self.scope
            self.answer_id = event.answer_id
            self.style = event.style
            self.prompt_tokens = event.prompt_tokens
            self.estimate_s = event.estimate_s
            self.searched = event.searched or self.question
            self.conversation_id = event.conversation_id or event.answer_id
        elif isinstance(event, AnswerQuoted):
            self.quotes = tuple(event.quotes)
        elif isinstance(event, TokenDelta):
            self.state = TurnState.STREAMING
            self.text += event.text
        elif isinstance(event, CitationFound):
            self._add_marker(event)
        elif isinstance(event, AnswerFinished):
            self._finish(event)
        elif isinstance(event, ClaimVerdict):
            # A later verdict for the same sentence (the judge's) replaces the earlier one.
            self.verdicts = [v for v in self.verdicts if v.sentence_span != event.sentence_span]
            self.verdicts.append(event)
        elif isinstance(event, NoBasis):
            self.no_basis = event.reason or "The documents hold no basis for this question."
            if self.state.running:
                self.state = TurnState.NO_BASIS
        elif isinstance(event, AnswerFailed):
            self.state = TurnState.FAILED
            self.error = event.error
            self.error_known = event.known
        elif isinstance(event, AnswerCancelled):
            self.state = TurnState.CANCELLED
        else:  # pragma: no cover - a new event type the window does not know yet
            logger.warning("unknown answer event %r", event)

    def cancelled_locally(self) -> None:
        """The task ended without a terminal event (the user stopped it)."""
        if self.state.running:
            self.state = TurnState.CANCELLED
            self.revision += 1

    def _add_marker(self, event: CitationFound) -> None:
        if event.source is not None:
            self.cited[event.id] = event.source
        marker = Marker(event.id, (int(event.span[0]), int(event.span[1])), event.valid)
        if marker not in self.markers:
            self.markers.append(marker)

    def _finish(self, event: AnswerFinished) -> None:
        self.text = event.text
        self.stats = dict(event.stats)
        self.hallucinated = tuple(event.hallucinated)
        if event.answer_id:
            self.answer_id = event.answer_id
        known = set(self.markers)
        for cid, spans in event.citations.items():
            valid = cid not in self.hallucinated
            for span in spans:
                marker = Marker(cid, (int(span[0]), int(span[1])), valid)
                if marker not in known:
                    self.markers.append(marker)
                    known.add(marker)
        for cid in self.hallucinated:
            # A hallucinated id reported only in ``hallucinated``: mark its spans invalid.
            self.markers = [
                Marker(m.id, m.span, False) if m.id == cid else m for m in self.markers
            ]
        if not self.text and self.quotes and not self.markers and not event.stats:
            self.quote_only = True  # no model ran: the passage alone was asked for (the facade's settings)
        self.state = TurnState.NO_BASIS if self.no_basis and not self.text else TurnState.FINISHED

    # ------------------------------------------------------------------ queries

    def source(self, cid: str) -> SourcePayload | None:
        """The payload for a citation id: from its first citation event, else from the
        sources the model was given."""
        if cid in self.cited:
            return self.cited[cid]
        for source in self.sources:
            if source.id == cid:
                return source
        return None

    def quote_source(self, index: int) -> SourcePayload | None:
        """Quote ``index``'s source narrowed to the quote: opening it highlights the quoted
        sentence(s) alone, not the whole chunk. The source as it is when the quote cannot
        be placed in it (a record saved by another Folio); None for no such quote."""
        if not 0 <= index < len(self.quotes):
            return None
        quote = self.quotes[index]
        source = self.source(quote.id)
        if source is None:
            return None
        span = quote_span(source, quote)
        if span is None:
            return source
        start, end = span
        text = source.text[start:end]
        return dataclasses.replace(source, text=text, char_start=source.char_start + start,
                                   char_end=source.char_start + end, read=((0, len(text)),))

    def source_by_chunk(self, chunk_id: str) -> SourcePayload | None:
        for source in [*self.cited.values(), *self.sources]:
            if source.chunk_id == chunk_id:
                return source
        return None

    def source_number(self, cid: str) -> int | None:
        """1-based position of ``cid`` among the sources given to the model."""
        for number, source in enumerate(self.sources, start=1):
            if source.id == cid:
                return number
        return None

    def chip_label(self, cid: str) -> str:
        """What a marker chip shows: the label, or the source number for short ids."""
        if self.style == CitationStyle.SHORTID:
            number = self.source_number(cid)
            if number is not None:
                return str(number)
        return cid

    def cited_ids(self) -> list[str]:
        """Valid citation ids in order of first appearance in the answer."""
        seen: list[str] = []
        for marker in sorted(self.markers, key=lambda m: m.span):
            if marker.valid and marker.id not in seen and self.source(marker.id) is not None:
                seen.append(marker.id)
        return seen

    def nth_citation(self, number: int) -> SourcePayload | None:
        """Citation ``number`` (1-based, order of first appearance); falls back to the
        ``number``-th source given to the model when the answer cites fewer."""
        cited = self.cited_ids()
        if 1 <= number <= len(cited):
            return self.source(cited[number - 1])
        if 1 <= number <= len(self.sources):
            return self.sources[number - 1]
        return None

    def clusters(self) -> list[MarkerCluster]:
        """Markers grouped by overlapping spans, in text order, clipped to the text."""
        limit = len(self.text)
        ordered = sorted(
            (m for m in self.markers if 0 <= m.span[0] < m.span[1] <= limit),
            key=lambda m: (m.span[0], -m.span[1]),
        )
        clusters: list[MarkerCluster] = []
        for marker in ordered:
            if clusters and marker.span[0] < clusters[-1].end:
                last = clusters[-1]
                ids = last.markers if marker in last.markers else (*last.markers, marker)
                clusters[-1] = MarkerCluster(last.start, max(last.end, marker.span[1]), ids)
            else:
                clusters.append(MarkerCluster(marker.span[0], marker.span[1], (marker,)))
        return clusters

    def stale_citations(self) -> list[tuple[str, SourceState]]:
        """Cited ids whose source changed or was removed since the answer was saved."""
        return [
            (cid, self.source_states[cid])
            for cid in self.cited_ids()
            if self.source_states.get(cid, SourceState.CURRENT) is not SourceState.CURRENT
        ]

    def support_spans(self, cid: str) -> list[Span]:
        """Spans of the cited passage that best support the sentences citing ``cid``; when
        no check named any, the spans the model read of it (the evidence), so the viewer
        marks exactly what the model was shown inside the faint whole chunk."""
        spans: list[Span] = []
        for verdict in self.verdicts:
            if verdict.ids and verdict.ids[0] == cid:
                spans.extend((int(a), int(b)) for a, b in verdict.support)
        if not spans:
            source = self.source(cid)
            if source is not None:
                spans = [(int(a), int(b)) for a, b in source.read]
        return spans


def _flat(text: str) -> str:
    return " ".join(text.split())


def quote_span(source: SourcePayload, quote: QuotePayload) -> Span | None:
    """Where ``quote`` lies in ``source.text``: its own span when that holds its words, else
    where its words are found; None when neither (its words are no longer in the source)."""
    start, end = int(quote.span[0]), int(quote.span[1])
    if 0 <= start < end <= len(source.text) and _flat(source.text[start:end]) == _flat(quote.text):
        return (start, end)
    found = source.text.find(quote.text) if quote.text.strip() else -1
    return (found, found + len(quote.text)) if found >= 0 else None
