"""Per-sentence trust: check each factual sentence of an answer against the passages it
cites, after the answer (:func:`verify_answer`) or while it streams
(:class:`StreamingVerifier`), and suggest a source for an uncited or unsupported one.
Qt-free, no asyncio. One claim against one passage is core/verdicts/claim_score.py (the
verdict rules), its content units claim_units.py, numbers and names stated otherwise
mismatch.py; splitting is core/text/sentences.py, the marker grammar core/text/markers.py,
"is it factual" and numbers core/verdicts/claims.py.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from desktop_app.core.text.markers import find_markers, unclosed_marker_start
from desktop_app.core.text.sentences import (
    attach_citations,
    ends_clause,
    has_words,
    split_from,
    split_sentences,
)
from desktop_app.core.types import Citations, ClaimVerdict, Sentence, Verdict, all_unsupported
from desktop_app.core.verdicts.claim_score import (
    PARTIAL_MIN,
    SUPPORTED_MIN,
    ClaimScore,
    Embed,
    score_claim,
)
from desktop_app.core.verdicts.claim_units import analyse, content_units
from desktop_app.core.verdicts.claims import is_factual, plain_text

__all__ = [
    "PARTIAL_MIN", "SUPPORTED_MIN", "ClaimScore", "Sentence", "StreamingVerifier",
    "all_unsupported", "attach_citations", "find_markers", "is_factual", "score_claim",
    "split_sentences", "verify_answer",
]

logger = logging.getLogger(__name__)

SUGGEST_MIN = 0.70  # an uncited (or unsupported) sentence gets a suggested source from here
SUGGEST_PREFILTER = 20  # at most this many candidates (by word overlap) get a full score


class _Verifier:
    """Scores sentences of one answer against its sources; caches embeddings per text."""

    def __init__(
        self,
        passages_by_id: Mapping[str, str],
        all_passages: Mapping[str, str] | None,
        embed: Embed | None,
    ) -> None:
        self.passages = dict(passages_by_id)
        self.candidates = dict(all_passages if all_passages is not None else passages_by_id)
        self._vectors: dict[str, np.ndarray] = {}
        self._embed = embed
        self.embed: Embed | None = self._cached if embed is not None else None

    def _cached(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if todo and self._embed is not None:
            for text, vector in zip(
                todo, np.asarray(self._embed(todo), dtype=np.float32), strict=True
            ):
                self._vectors[text] = vector
        return np.stack([self._vectors[t] for t in texts])

    def _label_of(self, key: str) -> str | None:
        if key in self.passages:
            return key
        text = self.candidates[key]
        return next((label for label, t in self.passages.items() if t == text), None)

    def _suggest(self, claim: str, exclude: Iterable[str]) -> tuple[str, ClaimScore] | None:
        excluded = {self.passages[i] for i in exclude if i in self.passages}
        units = content_units(plain_text(claim)).keys()
        keys = [k for k, t in self.candidates.items() if t not in excluded]
        keys.sort(key=lambda k: -len(units & analyse(self.candidates[k]).all_units))
        scored = [
            (k, score_claim(claim, self.candidates[k], self.embed))
            for k in keys[:SUGGEST_PREFILTER]
        ]
        return max(scored, key=lambda ks: ks[1].score, default=None)

    def verdict(self, sentence: Sentence, ids: tuple[str, ...]) -> ClaimVerdict:
        span = (sentence.start, sentence.end)
        if not is_factual(sentence.text):
            return ClaimVerdict(span, Verdict.NOT_FACTUAL, ids, reason="not a factual statement")
        valid = [i for i in ids if i in self.passages]
        invented = [i for i in ids if i not in self.passages]
        note = (
            f"; cites {', '.join(f'[{i}]' for i in invented)}, not among the sources"
            if invented
            else ""
        )
        if valid:
            scores = {i: score_claim(sentence.text, self.passages[i], self.embed) for i in valid}
            best_id = max(valid, key=lambda i: scores[i].score)
            best = scores[best_id]
            result = ClaimVerdict(
                span,
                best.verdict,
                ids,
                best.score,
                support=best.support,
                support_id=best_id,
                reason=f"[{best_id}]: {best.reason}{note}",
                quote=best.quote,
                conflict=best.conflict,
            )
            if best.verdict is not Verdict.NOT_CONFIRMED:
                return result
        elif ids:
            result = ClaimVerdict(span, Verdict.NOT_CONFIRMED, ids, reason=note[2].upper() + note[3:])
        else:
            result = ClaimVerdict(span, Verdict.UNCITED, ids, reason="no citation")
        found = self._suggest(sentence.text, valid)
        if (
            found is None
            or found[1].score < SUGGEST_MIN
            or found[1].verdict is not Verdict.SUPPORTED
        ):
            if found is not None and result.verdict is Verdict.UNCITED:
                result = replace(result, score=found[1].score)
            return result
        key, score = found
        score_value = score.score if result.verdict is Verdict.UNCITED else result.score
        return replace(
            result,
            suggested=key,
            suggested_label=self._label_of(key),
            score=score_value,
            support=score.support,
            support_id=key,
            reason=f"{result.reason}; inferred by Folio: {key} ({score.reason})",
        )


def verify_answer(
    answer_text: str,
    citations: Citations,
    passages_by_id: Mapping[str, str],
    all_passages: Mapping[str, str] | None = None,
    embed: Embed | None = None,
) -> list[ClaimVerdict]:
    """One :class:`ClaimVerdict` per sentence of the answer, in order.

    ``citations`` are the markers seen in ``answer_text`` (id -> spans, or (id, span) pairs);
    ``passages_by_id`` maps the ids the model saw (labels) to passage text; an id not in it
    is hallucinated. ``all_passages`` (key -> text; key it by chunk id, as the UI expects)
    is where suggestions for uncited and unsupported sentences come from; ``suggested`` is
    its key and ``suggested_label`` the label of the same text in ``passages_by_id``, if
    any. Without it the cited sources are searched and ``suggested`` is a label.

    Verdicts: NOT_FACTUAL (greetings, meta, questions, fragments); UNCITED (factual, no
    marker); otherwise the best of the cited passages' verdicts, NOT_CONFIRMED when every
    id is hallucinated; an uncited or not confirmed sentence gets a suggested source where
    one states it. ``support`` are spans in the text of ``support_id`` (the best cited id,
    or the suggestion when the sentence is uncited or unsupported)."""
    verifier = _Verifier(passages_by_id, all_passages, embed)
    pairs = attach_citations(split_sentences(answer_text), citations)
    verdicts = [verifier.verdict(sentence, ids) for sentence, ids in pairs]
    if logger.isEnabledFor(logging.DEBUG):
        counts = {str(k): sum(v.verdict is k for v in verdicts) for k in Verdict}
        logger.debug("verified %d sentences: %s", len(verdicts), counts)
    return verdicts


class StreamingVerifier:
    """Verdicts while the answer streams: :meth:`feed` the whole answer text so far and the
    citations seen so far; each sentence is judged once, as soon as it is complete (its
    terminator and following markers have arrived and the next sentence has started), and
    :meth:`finish` judges the rest. Emits exactly what :func:`verify_answer` returns."""

    def __init__(
        self,
        passages_by_id: Mapping[str, str],
        all_passages: Mapping[str, str] | None = None,
        embed: Embed | None = None,
    ) -> None:
        self._verifier = _Verifier(passages_by_id, all_passages, embed)
        self._text = ""
        self._offset = 0  # the end of the last judged sentence
        self._finished = False
        self._citations: Citations = ()
        self.verdicts: list[ClaimVerdict] = []

    def _emit(self, sentences: Sequence[Sentence], citations: Citations) -> list[ClaimVerdict]:
        out = [self._verifier.verdict(s, ids) for s, ids in attach_citations(sentences, citations)]
        if sentences:
            self._offset = sentences[-1].end
        self.verdicts.extend(out)
        return out

    def _accept(self, text: str) -> None:
        if self._finished:
            raise RuntimeError("StreamingVerifier.feed after finish")
        if not text.startswith(self._text):
            raise ValueError("the answer text must only grow")
        self._text = text

    def feed(self, text: str, citations: Citations) -> list[ClaimVerdict]:
        self._accept(text)
        self._citations = citations
        sentences = split_from(text, self._offset)
        if len(sentences) < 2:
            return []
        tail = text[sentences[-2].end :]
        first_line = tail.lstrip().split("\n", 1)[0]
        unclosed = unclosed_marker_start(first_line)
        if not has_words(first_line if unclosed is None else first_line[:unclosed]) or re.fullmatch(
            r"\s*[A-Za-z]*", tail
        ):
            # punctuation or a marker that may still join the previous sentence, or a first
            # word that may still grow (after "U.S." a sentence starts only before "The")
            sentences = sentences[:-1]
        ready = sentences[:-1]
        while ready and ends_clause(ready[-1]) and not attach_citations(ready[-1:], citations)[0][1]:
            ready = ready[:-1]  # a clause waits for the marker that may end its sentence
        return self._emit(ready, citations)

    def finish(
        self, text: str | None = None, citations: Citations | None = None
    ) -> list[ClaimVerdict]:
        """Judge every sentence not judged yet (the last one has no successor to wait for)."""
        if text is not None:
            self._accept(text)
        if citations is not None:
            self._citations = citations
        self._finished = True
        return self._emit(split_from(self._text, self._offset), self._citations)
