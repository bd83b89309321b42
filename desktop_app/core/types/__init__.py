"""Folio's domain values and events: frozen dataclasses shared by every layer. Qt-free.

One module per vocabulary: documents (the document model), retrieval, verdicts, events
(index, answer and check events, and the text a check reads), generation (steering, the model's figures, the first
word's clock) and records (how a saved answer ended). Every name is re-exported here, so
``from desktop_app.core.types import X`` works for each of them.

Events serialise with ``to_json()`` into the dicts that ``folio ask --json`` and
``folio index --json`` print, one per line (see docs/architecture.md).
"""

from desktop_app.core.types.documents import (
    DOCUMENT_SUFFIXES,
    PDF_FORMAT,
    SECTION_SEPARATOR,
    TABLE_CELL_SEPARATOR,
    BlockKind,
    Chunk,
    DocStatus,
    DocumentInfo,
    DocumentPart,
    ExtractedDocument,
    FileRecord,
    JsonObject,
    OcrLine,
    PageQuality,
    PageText,
    Passage,
    Sentence,
    SourceState,
    Span,
    TextBlock,
    TextRun,
    is_document_file,
    is_hidden,
    locate,
)
from desktop_app.core.types.events import (
    AnswerCancelled,
    AnswerEvent,
    AnswerFailed,
    AnswerFinished,
    AnswerQuoted,
    AnswerStarted,
    CheckEvent,
    CheckFinished,
    CitationFound,
    CitationStyle,
    FileIndexed,
    Footnote,
    IndexEvent,
    IndexProgress,
    IndexSummary,
    LibraryMovedAside,
    NoBasis,
    QuotePayload,
    SentenceCheck,
    SourcePayload,
    TextToCheck,
    TokenDelta,
)
from desktop_app.core.types.generation import (
    FIRST_WORD_STEP_NAMES,
    FIRST_WORD_STEPS,
    FirstWordClock,
    GenerationStats,
    Steering,
)
from desktop_app.core.types.records import (
    AnswerStatus,
    HistoryEntry,
    SavedAnswer,
    claim_from_json,
    source_from_json,
)
from desktop_app.core.types.retrieval import Citations, Found, Quote, Retrieval, SourcePage
from desktop_app.core.types.verdicts import (
    CONFLICT_KINDS,
    LEGACY_NOT_CONFIRMED,
    ClaimVerdict,
    ConflictKind,
    Verdict,
    all_unsupported,
)

__all__ = [
    "CONFLICT_KINDS", "DOCUMENT_SUFFIXES", "FIRST_WORD_STEP_NAMES", "FIRST_WORD_STEPS", "LEGACY_NOT_CONFIRMED", "PDF_FORMAT",
    "SECTION_SEPARATOR", "TABLE_CELL_SEPARATOR",
    "AnswerCancelled", "AnswerEvent", "AnswerFailed", "AnswerFinished", "AnswerQuoted", "AnswerStarted", "AnswerStatus",
    "BlockKind", "CheckEvent", "CheckFinished", "Chunk", "CitationFound", "CitationStyle", "Citations", "ClaimVerdict",
    "ConflictKind", "DocStatus", "DocumentInfo", "DocumentPart", "ExtractedDocument", "FileIndexed", "FileRecord",
    "Footnote", "Found", "FirstWordClock", "GenerationStats", "HistoryEntry", "IndexEvent", "IndexProgress", "IndexSummary",
    "JsonObject", "LibraryMovedAside", "NoBasis", "OcrLine", "PageQuality", "PageText", "Passage", "Quote",
    "QuotePayload", "Retrieval", "SavedAnswer", "Sentence", "SentenceCheck", "SourcePage", "SourcePayload",
    "SourceState", "Span", "Steering", "TextBlock", "TextRun", "TextToCheck", "TokenDelta", "Verdict",
    "all_unsupported", "claim_from_json", "is_document_file", "is_hidden", "locate", "source_from_json",
]
