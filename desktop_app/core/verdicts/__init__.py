"""Verdicts: does a passage support a sentence? Qt-free, no asyncio.

One face for three callers: the answer stream (a :class:`Verifier` handed to
core/answer/answering.py as ``stages.Verifier``), ``folio verify`` and File ▸ Check a
Text… (:func:`check_text`, :func:`check_claim`). Inside: the rule scorer (verify,
claim_score over claims, claim_units, mismatch, meaning, bindings), the answer model's
second opinion (judge) and reading a text to check (check_input, text_checker).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from desktop_app.core.stages import Generator, JudgeCache, Retriever
from desktop_app.core.types import CheckFinished, ClaimVerdict, Passage, SentenceCheck, TextToCheck
from desktop_app.core.verdicts.check_input import (
    BadClaimLine,
    ClaimLine,
    read_claims_line,
    read_text,
)
from desktop_app.core.verdicts.judge import Judge, JudgedPassage, merge
from desktop_app.core.verdicts.text_checker import (
    ChunkLookup,
    TextChecker,
    check_claim,
    claim_result,
)
from desktop_app.core.verdicts.verify import StreamingVerifier

__all__ = [
    "BadClaimLine", "ClaimLine", "Judge", "Verifier",
    "check_claim", "check_text", "claim_result", "read_claims_line", "read_text",
]

logger = logging.getLogger(__name__)


class Verifier:
    """The checks an answer's sentences get (``stages.Verifier``): the rule scorer while
    the answer streams, the answer model as judge after it finished."""

    def stream(self, by_label: Mapping[str, str], by_chunk: Mapping[str, str]) -> StreamingVerifier:
        """The rule scorer over the sources the model saw; suggestions are keyed by chunk id.

        No embedder here: on two cores it would compete with the model for the CPU, and on
        calibration pairs it changed 1 verdict in 30 (see core/verdicts/claim_score.py).
        """
        return StreamingVerifier(by_label, by_chunk, embed=None)

    def review(self, generator: Generator, cache: JudgeCache | None, text: str,
               claims: Sequence[ClaimVerdict], sources: Mapping[str, Passage],
               should_cancel: Callable[[], bool], budget_s: float) -> list[ClaimVerdict]:
        """Ask the loaded model about the sentences the rule scorer was unsure of, starting
        no new question after ``budget_s`` seconds; the verdicts it changed, in order."""
        passages = {label: JudgedPassage(p.chunk_id, p.text) for label, p in sources.items()}
        judge = Judge(generator, cache, should_cancel, budget_s=budget_s)
        started = time.perf_counter()
        updates = judge.review(text, claims, passages)
        logger.info("judge: %d verdicts updated, %d model calls, %d cached, %.1f s", len(updates),
                    judge.model_calls, judge.cache_hits, time.perf_counter() - started)
        return updates

    def merge(self, claims: Sequence[ClaimVerdict], updates: Sequence[ClaimVerdict]) -> list[ClaimVerdict]:
        return merge(claims, updates)


def check_text(document: TextToCheck, retriever: Retriever, lookup: ChunkLookup,
               cancelled: Callable[[], bool], judge: Judge | None = None,
               judge_budget_s: float = 30.0) -> Iterator[SentenceCheck | CheckFinished]:
    """A :class:`SentenceCheck` per sentence of ``document`` as each is checked against the
    library (``retriever``; ``lookup`` finds a cited passage by chunk id), then
    :class:`CheckFinished`. With a ``judge`` (on the answer model's thread), unsure
    sentences get its second opinion within ``judge_budget_s``."""
    checker = TextChecker(lambda query, k: retriever.search(query, k).passages, lookup,
                          judge=judge, judge_budget_s=judge_budget_s)
    return checker.run(document, cancelled)
