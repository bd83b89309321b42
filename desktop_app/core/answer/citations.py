"""Citation markers in a streamed answer: the request's SourceMap, the marker grammar, the
incremental CitationTracker, resolution into citation events, and a llama.cpp grammar.

Qt-free and asyncio-free.

The marker grammar (what local models really write: ``[1]``, ``[1, 3]``, ``[1-3]``,
``【1】``, short ids ``[abc1234]``) is defined once, in core/text/markers.py; the tracker
here is its streaming reader with R2R's API.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from desktop_app.core.text.markers import (
    CLOSERS,
    OPENERS,
    MarkerScanner,
    find_markers,
    marker_ids,
    style_key,
)
from desktop_app.core.types import (
    AnswerFinished,
    CitationFound,
    CitationStyle,
    Passage,
    SourcePayload,
    Span,
)

logger = logging.getLogger(__name__)

# The grammar's readers are re-exported: R2R's helpers and the tracker live here.
__all__ = [
    "CitationResolver", "CitationTracker", "SourceMap", "citation_grammar", "extract_citation_spans",
    "extract_citations", "find_markers", "find_new_citation_spans", "marker_ids",
]

SHORT_ID_CHARS = 7  # lengthened to 8 for the sources of a request that collide in 7

_R2R_PATTERN = re.compile(r"\[([A-Za-z0-9]{7,8})\]")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


# --------------------------------------------------------------------------- SourceMap


def _digest(chunk_id: str, salt: int = 0) -> str:
    """8 base-36 characters from sha256 of the chunk id; the 7-character id is its prefix."""
    data = chunk_id if salt == 0 else f"{chunk_id}\x00{salt}"
    value = int.from_bytes(hashlib.sha256(data.encode("utf-8")).digest()[:8], "big")
    chars = []
    for _ in range(8):
        value, digit = divmod(value, 36)
        chars.append(_BASE36[digit])
    return "".join(chars)


def _short_ids(chunk_ids: Sequence[str]) -> list[str]:
    """7-character ids, 8 for every source whose 7-character id another source shares.

    No id is a prefix of another id, so even a prefix matcher could not pick the wrong
    chunk. If two 8-character ids collide too (odds ~1e-12 per pair) the later one is
    re-derived from a salted digest until it is unique.
    """
    first = [_digest(cid) for cid in chunk_ids]
    counts: dict[str, int] = {}
    for digest in first:
        counts[digest[:SHORT_ID_CHARS]] = counts.get(digest[:SHORT_ID_CHARS], 0) + 1
    unique7 = {d[:SHORT_ID_CHARS] for d in first if counts[d[:SHORT_ID_CHARS]] == 1}
    used: set[str] = set()
    ids: list[str] = []
    for cid, digest in zip(chunk_ids, first, strict=True):
        if counts[digest[:SHORT_ID_CHARS]] == 1:
            ids.append(digest[:SHORT_ID_CHARS])
            continue
        salt = 0
        while digest in used or digest[:SHORT_ID_CHARS] in unique7:
            salt += 1
            digest = _digest(cid, salt)
        logger.debug("short id of %s lengthened to %s (7-character collision)", cid, digest)
        used.add(digest)
        ids.append(digest)
    return ids


@dataclass(frozen=True)
class SourceMap:
    """The sources one request showed the model, by the label the model saw.

    Style ``label``: "1".."k" in passage order. Style ``shortid``: base-36 digests of the
    chunk ids (see :func:`_short_ids`). A chunk id given twice keeps its first place only.
    Lookups are exact (never a prefix scan); short ids ignore case, since every short id
    is lower-case and distinct, so ``[ABC1234]`` names the source shown as ``[abc1234]``.
    """

    style: CitationStyle
    entries: tuple[tuple[str, Passage], ...]
    _by_label: dict[str, Passage] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_label", dict(self.entries))

    @classmethod
    def build(
        cls, passages: Sequence[Passage], style: CitationStyle | str = CitationStyle.LABEL
    ) -> SourceMap:
        kind = CitationStyle(style)
        first: dict[str, Passage] = {}
        for passage in passages:
            first.setdefault(passage.chunk_id, passage)
        unique = list(first.values())
        if len(unique) < len(passages):
            logger.debug("dropped %d repeated passages", len(passages) - len(unique))
        if kind is CitationStyle.LABEL:
            labels = [str(n) for n in range(1, len(unique) + 1)]
        else:
            labels = _short_ids([p.chunk_id for p in unique])
        return cls(kind, tuple(zip(labels, unique, strict=True)))

    def labels(self) -> list[str]:
        return [label for label, _ in self.entries]

    def items(self) -> list[tuple[str, Passage]]:
        return list(self.entries)

    def canonical(self, citation_id: str) -> str | None:
        """The label ``citation_id`` names in this request, or None."""
        key = citation_id.lower() if self.style is CitationStyle.SHORTID else citation_id
        return key if key in self._by_label else None

    def resolve(self, citation_id: str) -> Passage | None:
        label = self.canonical(citation_id)
        return None if label is None else self._by_label[label]

    def payload(self, citation_id: str) -> SourcePayload | None:
        label = self.canonical(citation_id)
        if label is None:
            return None
        p = self._by_label[label]
        return SourcePayload(
            id=label,
            chunk_id=p.chunk_id,
            doc_id=p.doc_id,
            doc_path=p.doc_path,
            doc_title=p.doc_title,
            page=p.page,
            page_label=p.page_label,
            section=p.section,
            text=p.text,
            char_start=p.char_start,
            char_end=p.char_end,
            version=p.version,
            read=p.read,
            format=p.format,
            locator=p.locator,
        )

    def marker(self, label: str) -> str:
        return f"[{label}]"

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, citation_id: object) -> bool:
        return isinstance(citation_id, str) and self.canonical(citation_id) is not None


# --------------------------------------------------------------------------- tracking


class CitationTracker:
    """Finds markers in a streamed answer as they close, each (id, span) once.

    :meth:`feed` scans only the new delta plus the unclosed tail since the last opening
    bracket (at most ``MAX_MARKER_CHARS - 1`` characters; a longer tail is abandoned), so
    the work of a whole answer is linear in its length. A half-written marker (``[1``) is
    never reported; it is reported when its closing bracket arrives.

    It is also R2R's ``CitationTracker``: :meth:`is_new_citation`, :meth:`is_new_span`,
    :meth:`get_all_spans`, :meth:`reset`, used by :func:`find_new_citation_spans`.
    """

    def __init__(self, style: CitationStyle | str | None = None) -> None:
        self.style = style_key(style)
        self.processed_spans: dict[str, set[Span]] = {}
        self.seen_citation_ids: set[str] = set()
        self._parts: list[str] = []
        self._scanner = MarkerScanner(self.style)
        self._finished = False

    def reset(self) -> None:
        """Forget the answer, every span and every seen id."""
        self.processed_spans = {}
        self.seen_citation_ids = set()
        self._parts, self._scanner = [], MarkerScanner(self.style)
        self._finished = False

    @property
    def text(self) -> str:
        """The answer fed so far (joins the deltas: call it at the end, not per delta)."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def feed(self, delta: str) -> list[tuple[str, Span]]:
        """Append ``delta``; return the (id, span) pairs of markers it closed, in order."""
        if self._finished:
            raise RuntimeError("CitationTracker.feed() after finish(); call reset() first")
        if not delta:
            return []
        self._parts.append(delta)
        closed = self._scanner.feed(delta)
        if not closed:  # most deltas close no marker
            return []
        return [(cid, span) for ids, span in closed for cid in ids if self.is_new_span(cid, span)]

    def finish(self) -> dict[str, list[Span]]:
        """End the stream (an unclosed tail is dropped); every id with all its spans."""
        self._finished = True
        self._scanner.drop_tail()
        return self.get_all_spans()

    def is_new_citation(self, citation_id: str | None) -> bool:
        """True the first time an id is asked about (R2R); :meth:`feed` does not mark ids.
        An empty or missing id is never new, as in R2R."""
        if not citation_id:
            return False
        is_new = citation_id not in self.seen_citation_ids
        self.seen_citation_ids.add(citation_id)
        return is_new

    def is_new_span(self, citation_id: str, span: Span | None) -> bool:
        """True, and records it, if this (id, span) was not seen before (R2R)."""
        if not citation_id or span is None:
            return False
        spans = self.processed_spans.setdefault(citation_id, set())
        if span in spans:
            return False
        spans.add(span)
        return True

    def get_all_spans(self) -> dict[str, list[Span]]:
        """Ids in order of first record, each with its spans sorted by position."""
        return {cid: sorted(spans) for cid, spans in self.processed_spans.items() if spans}


def extract_citations(text: str) -> list[str]:
    """R2R: the ids of ``[A-Za-z0-9]{7,8}`` markers, in order, duplicates kept."""
    if not text:
        return []
    return [m.group(1) for m in _R2R_PATTERN.finditer(text)]


def extract_citation_spans(text: str) -> dict[str, list[Span]]:
    """R2R: id -> spans from ``[`` to just after ``]``, for ``[A-Za-z0-9]{7,8}`` markers."""
    spans: dict[str, list[Span]] = {}
    for m in _R2R_PATTERN.finditer(text or ""):
        spans.setdefault(m.group(1), []).append((m.start(), m.end()))
    return spans


def find_new_citation_spans(text: str, tracker: CitationTracker) -> dict[str, list[Span]]:
    """R2R: rescan the whole ``text``; return (and record) the spans ``tracker`` has not seen."""
    new: dict[str, list[Span]] = {}
    for cid, spans in extract_citation_spans(text).items():
        for span in spans:
            if tracker.is_new_span(cid, span):
                new.setdefault(cid, []).append(span)
    return new


# --------------------------------------------------------------------------- resolution


class CitationResolver:
    """Turns tracked (id, span) pairs into ``CitationFound`` events through a SourceMap.

    The first report of an id carries its :class:`SourcePayload`; later reports carry id
    and span only (``is_new=False``). An id the map does not hold is ``valid=False``, has
    no payload and joins :attr:`hallucinated`. Ids are reported canonical (``"1"``, the
    lower-case short id) when they resolve, as written when they do not.
    """

    def __init__(self, sources: SourceMap, tracker: CitationTracker | None = None) -> None:
        self.sources = sources
        self.tracker = tracker if tracker is not None else CitationTracker(sources.style)
        self._spans: dict[str, list[Span]] = {}
        self._seen: set[tuple[str, Span]] = set()
        self._hallucinated: dict[str, None] = {}

    @property
    def hallucinated(self) -> tuple[str, ...]:
        return tuple(self._hallucinated)

    @property
    def spans(self) -> dict[str, list[Span]]:
        """Every id reported so far (canonical when it resolves) with its spans."""
        return {cid: list(spans) for cid, spans in self._spans.items()}

    def feed(self, delta: str) -> list[CitationFound]:
        """Feed a delta to the tracker and resolve what it closed."""
        return self.resolve(self.tracker.feed(delta))

    def resolve(self, found: Iterable[tuple[str, Span]]) -> list[CitationFound]:
        events: list[CitationFound] = []
        for raw_id, span in found:
            label = self.sources.canonical(raw_id)
            cid = raw_id if label is None else label
            if (cid, span) in self._seen:
                continue
            self._seen.add((cid, span))
            is_new = cid not in self._spans
            self._spans.setdefault(cid, []).append(span)
            if label is None:
                self._hallucinated.setdefault(cid)
                events.append(CitationFound(cid, span, is_new=is_new, valid=False))
            else:
                payload = self.sources.payload(label) if is_new else None
                events.append(CitationFound(cid, span, is_new=is_new, valid=True, source=payload))
        return events

    def finished(self, text: str | None = None, *, answer_id: str = "") -> AnswerFinished:
        """Every id with all its spans (the union of what was streamed) and the hallucinated.

        ``text`` defaults to what was fed to the tracker. A span that does not slice
        ``text`` to a bracketed marker is a bug in the caller and raises ValueError.
        """
        answer = self.tracker.text if text is None else text
        self.tracker.finish()
        for cid, spans in self._spans.items():
            bad = [(a, b) for a, b in spans if not _slices_to_marker(answer, a, b)]
            if bad:
                raise ValueError(f"spans {bad} of {cid!r} are not markers of the answer")
        citations = {cid: sorted(spans) for cid, spans in self._spans.items()}
        return AnswerFinished(answer, citations, self.hallucinated, answer_id=answer_id)


def _slices_to_marker(text: str, start: int, end: int) -> bool:
    return 0 <= start < end <= len(text) and text[start] in OPENERS and text[end - 1] in CLOSERS


# --------------------------------------------------------------------------- GBNF grammar

_GBNF_NO_OPENER = "\\x5B\\u3010\\uFF3B"  # [ 【 ［ : the model may open only our markers
_GBNF_ENDS = ".!?\\u3002\\uFF01\\uFF1F"  # . ! ? 。 ！ ？


def _gbnf_literal(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def citation_grammar(
    labels: Sequence[str], *, every_sentence: bool = False, refusals: Sequence[str] = ()
) -> str:
    """A llama.cpp GBNF grammar under which ``[`` can only open a marker of ``labels``.

    Free text may contain anything except the openers ``[``, ``【`` and ``［``; a marker is
    ``[`` label (``,`` or ``, `` label)* ``]``, so a hallucinated label cannot be sampled.
    ``every_sentence=True`` also makes every sentence end with a marker, before or after
    its final ``.``/``!``/``?``/``。``/``！``/``？`` (a ``.`` followed by a non-space, as in
    ``3.5``, does not end a sentence); ``refusals`` are whole answers allowed verbatim
    without markers (the "documents do not say" sentence).
    """
    if not labels:
        raise ValueError("a citation grammar needs at least one label")
    label_rule = " | ".join(_gbnf_literal(label) for label in labels)
    if every_sentence:
        rules = [
            f"root ::= {' | '.join(['answer', *(_gbnf_literal(r) for r in refusals)])}",
            "answer ::= sentence+ [ \\t\\r\\n]*",
            "sentence ::= piece+ cite-end",
            f"piece ::= [^{_GBNF_ENDS}{_GBNF_NO_OPENER}] | [.!?] "
            f"[^ \\t\\r\\n{_GBNF_ENDS}{_GBNF_NO_OPENER}] | marker",
            'cite-end ::= " "? marker+ end | end " "? marker+',
            f"end ::= [{_GBNF_ENDS}]",
        ]
    else:
        rules = ["root ::= (text | marker)*", f"text ::= [^{_GBNF_NO_OPENER}]"]
    rules += ['marker ::= "[" label ("," " "? label)* "]"', f"label ::= {label_rule}"]
    return "\n".join(rules) + "\n"
