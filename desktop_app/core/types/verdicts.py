"""The verdicts vocabulary: what a cited passage makes of a sentence. Qt-free."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from desktop_app.core.types.documents import JsonObject, Span


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

class ConflictKind(StrEnum):
    """What a CONTRADICTED verdict's passage states otherwise (``ClaimVerdict.conflict``)."""

    NUMBER = "number"
    NEGATION = "negation"
    PARTY = "party"
    CONDITION = "condition"


# The conflict kinds' values, in order.
CONFLICT_KINDS = tuple(str(kind) for kind in ConflictKind)

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
