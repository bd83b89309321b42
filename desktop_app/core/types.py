"""Folio's domain values and events: frozen dataclasses shared by every layer. Qt-free.

Events serialise with ``to_json()`` into the dicts that ``folio ask --json`` and
``folio index --json`` print, one per line (see docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum

# A JSON object as to_json() returns it (json.dumps writes it; readers narrow its values).
JsonObject = dict[str, object]

Span = tuple[int, int]


class DocStatus(StrEnum):
    """How a file ended after an index run. Exactly one per file."""

    INDEXED = "indexed"
    INDEXED_PARTIALLY = "indexed_partially"
    NEEDS_PASSWORD = "needs_password"
    NO_TEXT_LAYER = "no_text_layer"
    GARBLED_TEXT = "garbled_text"
    UNREADABLE = "unreadable"
    TIMED_OUT = "timed_out"
    DRM_PROTECTED = "drm_protected"  # an EPUB whose content is encrypted (META-INF/encryption.xml)
    REMOVED = "removed"

    @property
    def searchable(self) -> bool:
        return self in (DocStatus.INDEXED, DocStatus.INDEXED_PARTIALLY)


class PageQuality(StrEnum):
    OK = "ok"
    EMPTY = "empty"  # no text layer (scanned image) or blank page
    GARBLED = "garbled"  # text that is not language: glyph names, mojibake
    ERROR = "error"  # the page could not be parsed


class Verdict(StrEnum):
    """What the cited passage makes of a sentence, as the reader sees it.

    SUPPORTED (green): the passage states it. CONTRADICTED (red): the passage says
    otherwise, and ``ClaimVerdict.quote`` shows where and ``conflict`` what (a number, a
    negation, a party, a condition). NOT_CONFIRMED (a neutral mark): the cited passage does
    not state it, which says nothing about whether it is true. UNCITED: no marker.
    NOT_FACTUAL: a greeting, a question, a fragment: nothing to check.
    """

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    NOT_CONFIRMED = "not_confirmed"
    UNCITED = "uncited"
    NOT_FACTUAL = "not_factual"

    @classmethod
    def _missing_(cls, value: object) -> Verdict | None:
        # "partial" and "unsupported" (saved answers, exports and judge caches written
        # before the neutral state) both meant "the passage does not state it"
        return cls.NOT_CONFIRMED if value in LEGACY_NOT_CONFIRMED else None


# The verdict names that NOT_CONFIRMED replaced (core/library/answer_records.py rewrites them).
LEGACY_NOT_CONFIRMED = ("partial", "unsupported")

# What a CONTRADICTED verdict's passage states otherwise (``ClaimVerdict.conflict``).
CONFLICT_KINDS = ("number", "negation", "party", "condition")


class CitationStyle(StrEnum):
    LABEL = "label"
    SHORTID = "shortid"


# --------------------------------------------------------------------------- ingestion


@dataclass(frozen=True)
class TextRun:
    """A run of text on a page (pypdf gives about one per line) and its box.

    The box is in PDF user space of the unrotated page (points, origin bottom-left);
    ``char_start``/``char_end`` index into :attr:`PageText.text`. ``size`` is the font size
    the run is drawn at on the page (points; 0 when unknown).
    """

    char_start: int
    char_end: int
    x0: float
    y0: float
    x1: float
    y1: float
    size: float = 0.0


class BlockKind(StrEnum):
    """What a block of a reflowable document's part is: the viewer renders it so."""

    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    TABLE_ROW = "table_row"  # cells joined by TABLE_CELL_SEPARATOR in the part text
    CODE = "code"


# How a table row's cells are joined in a part's text (the viewer splits them again).
TABLE_CELL_SEPARATOR = " | "


@dataclass(frozen=True)
class TextBlock:
    """A block of a reflowable part: ``PageText.text[char_start:char_end]`` is its text.
    ``level``: a heading's level (1 = h1), a list item's depth (1 = top)."""

    kind: BlockKind
    char_start: int
    char_end: int
    level: int = 0


# The formats Folio reads; "pdf" has pages, every other is reflowable (parts + blocks).
PDF_FORMAT = "pdf"
# The file names Folio indexes (core/ingest/formats has a reader for each; the folder scan
# and the window's folder watcher both look for these).
DOCUMENT_SUFFIXES = frozenset({".pdf", ".html", ".htm", ".xhtml", ".epub", ".docx", ".odt",
                               ".pptx", ".md", ".markdown", ".txt"})


def is_hidden(name: str) -> bool:
    """Whether a file or folder named ``name`` is hidden: the folder scan skips it."""
    return name.startswith(".")


def is_document_file(name: str) -> bool:
    """Whether a file named ``name`` is a document Folio indexes: a reader's suffix, not
    hidden and not an Office lock file ("~$report.docx"). The one rule the folder scan
    (core/ingest/changes.py) and the window's folder watcher both follow."""
    return (os.path.splitext(name)[1].lower() in DOCUMENT_SUFFIXES and not is_hidden(name)
            and not name.startswith("~$"))


@dataclass(frozen=True)
class FileRecord:
    """What the library knows of a file at a path: the document it holds, and how its last
    index run ended."""

    path: str
    doc_id: str | None
    size: int
    mtime: float
    status: str
    error: str
    removed: bool


@dataclass(frozen=True)
class PageText:
    """A PDF page, or a part of a reflowable document (an EPUB spine item's or a
    heading-bounded section, a slide): ``page`` is then the part's ordinal, ``label`` its
    section number or heading, and ``blocks`` its structure."""

    page: int  # 1-based physical page number (reflowable: the part's ordinal)
    label: str  # the printed page label (/PageLabels), else str(page)
    width: float
    height: float
    rotation: int
    text: str
    quality: PageQuality = PageQuality.OK
    runs: tuple[TextRun, ...] = ()  # on an OCR page: one per recognised line
    error: str = ""
    ocr_confidence: float = 0.0  # > 0: the text was read by OCR (mean line confidence)
    blocks: tuple[TextBlock, ...] = ()  # a reflowable part's headings, paragraphs, rows...

    @property
    def ocr(self) -> bool:
        return self.ocr_confidence > 0.0


@dataclass(frozen=True)
class OcrLine:
    """A line OCR read on a page, for the viewer: where its text sits in the page text,
    and its box in points on the page as viewers show it (rotation applied, origin
    top-left)."""

    char_start: int
    char_end: int
    left: float
    top: float
    right: float
    bottom: float


@dataclass(frozen=True)
class ExtractedDocument:
    path: str
    doc_id: str  # sha256 of the bytes
    size: int
    mtime: float
    title: str
    status: DocStatus
    error: str = ""
    page_count: int = 0
    pages: tuple[PageText, ...] = ()
    format: str = PDF_FORMAT  # "pdf", "html", "epub", "docx", "odt", "pptx", "md", "txt"

    @property
    def bad_pages(self) -> list[int]:
        return [p.page for p in self.pages if p.quality in (PageQuality.GARBLED, PageQuality.ERROR)]

    @property
    def ocr_pages(self) -> int:
        """How many pages were read by OCR."""
        return sum(1 for p in self.pages if p.ocr)


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    page: int
    index: int
    text: str
    char_start: int  # offsets into the page text
    char_end: int
    section: str = ""


# How a chunk's section path joins its headings, outermost first:
# "5 Data Framing > 5.5 Control Frames".
SECTION_SEPARATOR = " > "


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk with what a reader needs to find it again."""

    chunk_id: str
    doc_id: str
    doc_path: str
    doc_title: str
    page: int
    page_label: str
    section: str
    char_start: int
    char_end: int
    score: float
    text: str
    version: int = 1
    # What the model reads of ``text`` when the prompt carries evidence, not the whole chunk:
    # (start, end) offsets into ``text``, in order (core/answer/evidence.py). Empty: all of it.
    read: tuple[Span, ...] = ()
    format: str = PDF_FORMAT  # the document's format: "pdf" has pages, the others parts
    locator: str = ""  # where a reader finds it: "p. 12", "section 9.10.1 ¶ 3"

    def to_json(self) -> JsonObject:
        return dataclasses.asdict(self)

    @property
    def where(self) -> str:
        return self.locator or locate(self.format, self.page, self.page_label)


def locate(fmt: str, page: int, label: str, paragraph: int = 0) -> str:
    """A locator a reader understands: "p. iv" for a PDF page; "section 9.10.1 ¶ 3" for the
    third paragraph of a reflowable document's part (a slide: "slide 4 ¶ 2")."""
    if fmt == PDF_FORMAT:
        return f"p. {label or page}"
    name = "slide" if fmt == "pptx" else "section"
    where = f"{name} {label or page}" if label else f"part {page}"
    return f"{where} ¶ {paragraph}" if paragraph > 0 else where


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
class ClaimVerdict:
    sentence_span: Span
    verdict: Verdict
    ids: tuple[str, ...] = ()
    score: float = 0.0
    suggested: str | None = None  # chunk id Folio inferred for an uncited sentence
    suggested_label: str | None = None
    support: tuple[Span, ...] = ()  # spans inside the cited passage's text that best support
    reason: str = ""
    support_id: str | None = None  # whose text ``support`` indexes: one of ``ids`` or ``suggested``
    quote: str = ""  # the passage's words that contradict the sentence or state it only if...
    conflict: str = ""  # of a CONTRADICTED verdict: one of CONFLICT_KINDS
    event: str = field(default="claim", init=False)

    def to_json(self) -> JsonObject:
        return {
            "event": self.event,
            "sentence_span": list(self.sentence_span),
            "verdict": str(self.verdict),
            "ids": list(self.ids),
            "score": round(self.score, 4),
            "suggested": self.suggested,
            "suggested_label": self.suggested_label,
            "support": [list(s) for s in self.support],
            "support_id": self.support_id,
            "reason": self.reason,
            "quote": self.quote,
            "conflict": self.conflict,
        }


@dataclass(frozen=True)
class Steering:
    """What an answer needs while the local model writes it (core/models/steer.py): the
    no-answer sentence, which is written without a source marker; whether a sentence must
    not end without its marker (Chinese); and each source's label with the text the model
    read of it, in retrieval order, to weigh the number it writes inside a marker."""

    refusal: str = ""
    mark_sentences: bool = True
    sources: tuple[tuple[str, str], ...] = ()


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
    | TokenDelta
    | CitationFound
    | AnswerFinished
    | ClaimVerdict
    | NoBasis
    | AnswerFailed
    | AnswerCancelled
)


# --------------------------------------------------------------------------- library


class SourceState(StrEnum):
    """Whether a chunk an answer cited still says what it said."""

    CURRENT = "current"
    CHANGED = "changed"  # the file at that path now has other bytes (a new version)
    REMOVED = "removed"  # the file is gone


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    path: str
    title: str
    status: DocStatus
    pages: int
    chunks: int
    version: int = 1
    error: str = ""
    bad_pages: tuple[int, ...] = ()
    size: int = 0
    mtime: float = 0.0
    ocr_pages: int = 0  # pages whose text was read by OCR
    format: str = PDF_FORMAT

    def to_json(self) -> JsonObject:
        data = dataclasses.asdict(self)
        data["status"] = str(self.status)
        data["bad_pages"] = list(self.bad_pages)
        return data


@dataclass(frozen=True)
class DocumentPart:
    """One part of a reflowable document as stored, for the document view: its text and
    blocks (offsets into ``text``, the offsets a citation's span uses), its label, and how
    many parts the document has."""

    doc_id: str
    page: int
    label: str
    text: str
    blocks: tuple[TextBlock, ...]
    parts: int
    format: str = ""


@dataclass(frozen=True)
class Retrieval:
    """What the search stage hands the answer stage: the passages, best first, and the
    signals the evidence gate reads."""

    passages: list[Passage]
    # Idf-weighted share of the question's words and CJK bigrams found in the best passage;
    # a term the library never mentions counts at the highest idf. In [0, 1].
    coverage: float
    best_cosine: float  # of the best dense hit; 0 without an embedder or for a CJK question
    cjk: bool
    expansion: str = ""  # what the glossary added to the question ("" when nothing)
    embedder: str = ""  # the model id ``best_cosine`` comes from ("": no dense signal)
    # The one language of the question: the setting, else what it is written in ("en", "de",
    # "zh": text/words.question_language); the gate, the prompt and a refusal read it.
    language: str = ""
    # The question's numbers that no passage states, and its names that no chunk of the
    # library (or of the scope) mentions (text/anchors.py).
    unmatched: tuple[str, ...] = ()
    unmentioned: tuple[str, ...] = ()
    # The language most passages found are written in, when it is not the one the question
    # is written in ("" otherwise, or when they do not say): shared words then measure
    # nothing and the gate leaves it to retrieval.
    documents_language: str = ""
    # Seconds the search spent embedding the question (beside BM25) and on the anchors.
    timings: Mapping[str, float] = field(default_factory=dict)


# Citations of an answer: id -> spans, or (id, span) pairs in order.
Citations = Mapping[str, Sequence[Span]] | Sequence[tuple[str, Span]]


def all_unsupported(verdicts: Iterable[ClaimVerdict]) -> bool:
    """True when the answer states facts and none of them is backed: every factual sentence
    is not confirmed, contradicted or uncited, and Folio found no source for it either (no
    ``suggested``).
    The window then shows a banner."""
    factual = [v for v in verdicts if v.verdict is not Verdict.NOT_FACTUAL]
    return bool(factual) and all(
        v.verdict in (Verdict.NOT_CONFIRMED, Verdict.CONTRADICTED, Verdict.UNCITED)
        and v.suggested is None
        for v in factual
    )


@dataclass(frozen=True)
class GenerationStats:
    """One answer's figures from the model that wrote it."""

    prompt_tokens: int
    completion_tokens: int  # streamed chunks: llama-cpp-python yields one per sampled token
    seconds_to_first_token: float  # from reading the prompt to the first token
    seconds: float
    cached_tokens: int = 0  # prompt tokens found in the KV cache (read for an earlier prompt)
    drafted: int = 0  # tokens the prompt-lookup draft proposed (0: no draft)
    accepted: int = 0  # ... and how many of them the model then wrote
    prefill_tokens: int = 0  # prompt tokens read for this answer (those not cached)
    prefill_s: float = 0.0  # ... and the seconds reading them took
    setup_s: float = 0.0  # rendering and tokenising the prompt, setting up the steering
    first_decode_s: float = 0.0  # from the prompt read to the first token sampled
    prefill_threads: int = 0  # threads that read the prompt (chosen from the free cores)

    @property
    def tokens_per_second(self) -> float:
        """Decode speed after the first token (the prompt's cost is in the time to first token)."""
        decoding = self.seconds - self.seconds_to_first_token
        return (self.completion_tokens - 1) / decoding if self.completion_tokens > 1 and decoding > 0 else 0.0

    @property
    def prompt_tokens_per_second(self) -> float:
        """Prompt tokens read per second (those not already cached)."""
        if self.prefill_s > 0 and self.prefill_tokens > 0:
            return self.prefill_tokens / self.prefill_s
        read = self.prompt_tokens - self.cached_tokens
        return read / self.seconds_to_first_token if read > 0 and self.seconds_to_first_token > 0 else 0.0

    @property
    def draft_accept_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    def to_json(self) -> JsonObject:
        """What ``AnswerFinished.stats`` carries of the model's figures."""
        return {
            "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "prefill_tokens": self.prefill_tokens, "prefill_s": round(self.prefill_s, 3),
            "prefill_threads": self.prefill_threads,
            "first_token_s": round(self.seconds_to_first_token, 3), "seconds": round(self.seconds, 3),
            "tokens_per_s": round(self.tokens_per_second, 2),
            "prompt_tokens_per_s": round(self.prompt_tokens_per_second, 2),
            "draft_accept_rate": round(self.draft_accept_rate, 3),
        }


# The steps before an answer's first word, in the order they run (FirstWordClock).
FIRST_WORD_STEPS = (
    "model_start_s",  # waiting for the model process to start and load (0 when it runs)
    "embedder_load_s", "embed_s", "search_s",  # the question's search (embedding overlaps BM25)
    "gate_s",  # the evidence gate and the anchors (names, numbers the question asks about)
    "evidence_s", "pack_s",  # evidence selection; packing the prompt (pack_token_counts counts)
    "steering_s", "probe_s",  # steering set-up; the abstention probe (Settings.abstain)
    "prefill_s",  # reading the prompt's tokens that were not cached (prefill_tokens)
    "first_decode_s",  # sampling the first token after the prompt
    "to_visible_word_s",  # from the first token to the first delta holding a letter or digit
)


class FirstWordClock:
    """Where the seconds between a question and its answer's first visible word went.

    Mutable and owned by one answer on one thread; ``to_json`` is what ``stats["first_word"]``
    carries: each step's seconds (FIRST_WORD_STEPS), the counts, and the times from the
    question to the first token and to the first visible word."""

    def __init__(self, started: float | None = None) -> None:
        self.started = time.perf_counter() if started is None else started
        self.steps: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.marks: dict[str, float] = {}  # seconds from the question: first_token_s, first_word_s

    def add(self, step: str, seconds: float) -> None:
        self.steps[step] = self.steps.get(step, 0.0) + max(0.0, seconds)

    @contextmanager
    def timing(self, step: str) -> Iterator[None]:
        begun = time.perf_counter()
        try:
            yield
        finally:
            self.add(step, time.perf_counter() - begun)

    def mark(self, name: str) -> None:
        """Note the seconds from the question to now under ``name`` (once)."""
        self.marks.setdefault(name, time.perf_counter() - self.started)

    def to_json(self) -> JsonObject:
        data: JsonObject = {step: round(self.steps.get(step, 0.0), 3) for step in FIRST_WORD_STEPS}
        data.update({step: round(s, 3) for step, s in self.steps.items() if step not in data})
        data.update(self.counts)
        data.update({name: round(s, 3) for name, s in self.marks.items()})
        return data
