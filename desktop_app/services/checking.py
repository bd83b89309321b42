"""The work behind ``KnowledgeBase.check_text`` and ``check_claims`` (``folio verify`` and
File ▸ Check a Text…), run on the facade's worker threads. Qt-free.

The window and the CLI import the event types from here (they reach the core only
through services).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from desktop_app.core.library.store import Store
from desktop_app.core.stages import Retriever
from desktop_app.core.types import JsonObject
from desktop_app.core.verdicts import (
    BadClaimLine,
    CheckFinished,
    Judge,
    SentenceCheck,
    TextToCheck,
    check_claim,
    claim_result,
    read_claims_line,
    read_text,
)
from desktop_app.core.verdicts import check_text as check_document

__all__ = ["CheckEvent", "CheckFinished", "SentenceCheck", "TextToCheck", "check_claims", "check_text"]

logger = logging.getLogger(__name__)

CheckEvent = TextToCheck | SentenceCheck | CheckFinished


def check_text(text: str, name: str, retriever: Retriever, store: Store,
               emit: Callable[[CheckEvent], None], cancelled: Callable[[], bool],
               judge: Judge | None = None, judge_budget_s: float = 30.0) -> None:
    """Emit the text as read (:class:`TextToCheck`), a :class:`SentenceCheck` per sentence
    as each is checked, then :class:`CheckFinished`. With a ``judge`` (on the answer
    model's thread), unsure sentences get its second opinion within ``judge_budget_s``."""
    document = read_text(text, name)
    emit(document)
    for event in check_document(document, retriever, store.passage_by_chunk_id, cancelled, judge,
                                judge_budget_s):
        emit(event)


def check_claims(lines: Iterable[str], emit: Callable[[JsonObject], None], cancelled: Callable[[], bool],
                 judge: Judge | None = None) -> None:
    """Emit one result dict per non-blank input line, in order: the verdict, score, reason
    and quote, or ``{"line": n, "error": ...}`` for a line that cannot be read. With a
    ``judge``, a line the rules are unsure of gets its second opinion (``judge_asked``)."""
    for number, line in enumerate(lines, start=1):
        if cancelled():
            return
        if not line.strip():
            continue
        try:
            claim = read_claims_line(line)
        except BadClaimLine as exc:
            emit({"line": number, "error": str(exc)})
            continue
        asked = judge.model_calls + judge.cache_hits if judge is not None else 0
        try:
            result = claim_result(claim, check_claim(claim, judge))
            if judge is not None:
                result["judge_asked"] = judge.model_calls + judge.cache_hits > asked
        except Exception as exc:  # a bug: logged with its traceback, the batch goes on
            logger.exception("checking line %d failed", number)
            emit({"line": number, "error": f"could not be checked: {type(exc).__name__}: {exc}"})
            continue
        emit({"line": number, **result})
