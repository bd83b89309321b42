"""The checking area of the facade (``kb.checking``: ``folio verify`` and File ▸ Check a
Text…): :class:`CheckingService` runs the work below on the facade's worker threads, with
the answer model as judge when wanted. Qt-free.

The events it yields (:data:`CheckEvent`: the text as read, a check per sentence, the
totals) are values of core/types/events.py, where the window and the CLI import them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence

from desktop_app.core.errors import KnownError
from desktop_app.core.library.store import Store
from desktop_app.core.settings import Settings
from desktop_app.core.stages import JudgeCache, Retriever
from desktop_app.core.types import CheckEvent, JsonObject
from desktop_app.core.verdicts import (
    BadClaimLine,
    Judge,
    check_claim,
    claim_result,
    read_claims_line,
    read_text,
)
from desktop_app.core.verdicts import check_text as check_document
from desktop_app.services.bridge import ThreadBridge
from desktop_app.services.model_run import ModelService
from desktop_app.services.parts import SharedParts

__all__ = ["CheckingService", "check_claims", "check_text"]

logger = logging.getLogger(__name__)


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


class CheckingService:
    def __init__(self, settings: Settings, parts: SharedParts, bridge: ThreadBridge, models: ModelService) -> None:
        self._settings = settings
        self._parts = parts  # the retriever and the library file
        self._bridge = bridge
        self._models = models  # the judge is the answer model

    async def check_text(self, text: str, name: str = "", judge: bool | None = None) -> AsyncIterator[CheckEvent]:
        """Check each sentence of ``text`` (an exported answer, Markdown or plain text)
        against the library: the text as read, then a verdict event per sentence with its
        best supporting passage, then the totals (:func:`check_text`). ``judge`` (default:
        Settings) asks the answer model about the sentences the rules are unsure of."""
        use_judge = self._settings.judge if judge is None else judge

        def work(emit: Callable[[CheckEvent], None], cancelled: Callable[[], bool]) -> None:
            check_text(text, name, self._parts.retriever, self._parts.store, emit, cancelled,
                       self._judge(use_judge, judge is True, cancelled, self._parts.store),
                       self._settings.judge_budget_s)

        # With the judge, on the answer model's one thread (retrieval runs there for ask too).
        pool = self._bridge.llm_pool if use_judge else self._bridge.query_pool
        async for event in self._bridge.stream(pool, work):
            yield event

    async def check_claims(self, lines: Sequence[str], judge: bool | None = None) -> AsyncIterator[JsonObject]:
        """A verdict per ``--claims`` JSONL line (sentence, passages, cited ids), in order;
        needs no library. ``judge`` (default: Settings) as for an answer's sentences."""
        use_judge = self._settings.judge if judge is None else judge

        def work(emit: Callable[[JsonObject], None], cancelled: Callable[[], bool]) -> None:
            check_claims(lines, emit, cancelled, self._judge(use_judge, judge is True, cancelled, None))

        pool = self._bridge.llm_pool if use_judge else self._bridge.query_pool
        async for result in self._bridge.stream(pool, work):
            yield result

    def _judge(self, wanted: bool, required: bool, cancelled: Callable[[], bool],
               cache: JudgeCache | None) -> Judge | None:
        """The judge over the answer model (on the folio-llm thread), one question per
        sentence; None when not wanted, or when the model is missing and it was not asked
        for explicitly (the rules' verdicts stand; the log says why)."""
        if not wanted:
            return None
        try:
            generator = self._models.generator()
        except KnownError as exc:
            if required:
                raise
            logger.warning("checking without the judge: %s", exc)
            return None
        return Judge(generator, cache, cancelled, max_judged=1, budget_s=self._settings.judge_budget_s)
