"""Check any text against the library: each sentence gets its best supporting passage (page
and highlight, the provenance answer citations carry) and a verdict. Qt-free, no asyncio.

Used by ``folio verify`` and File ▸ Check a Text… through the facade. The verdicts are the
answer verifier's (core/verdicts/verify.py): :func:`score_claim` for a sentence against a
passage, its ``_Verifier`` for a ``--claims`` line. A sentence of an exported answer is
scored first against the passages its markers cite (looked up in the library by chunk id,
else the passage quoted in the export); when they do not support it, and for a sentence
without markers, against the passages retrieval finds with the sentence as the query.
Verdict values are passed through as they are, so a new value (``contradicted``) needs no
change here.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from desktop_app.core.types import (
    CheckFinished,
    ClaimVerdict,
    Footnote,
    JsonObject,
    Passage,
    Sentence,
    SentenceCheck,
    SourcePayload,
    Span,
    TextToCheck,
    Verdict,
)
from desktop_app.core.verdicts.check_input import ClaimLine
from desktop_app.core.verdicts.claims import is_factual, plain_text
from desktop_app.core.verdicts.judge import Judge, JudgedPassage
from desktop_app.core.verdicts.verify import ClaimScore, _Verifier, score_claim

logger = logging.getLogger(__name__)

RETRIEVE_K = 5  # passages retrieval finds per sentence; each gets a full score
QUOTE_CHARS = 240  # the quote a verdict rests on, at most this long

Search = Callable[[str, int], Sequence[Passage]]
ChunkLookup = Callable[[str], Passage | None]


def quote_of(text: str, support: Sequence[Span], limit: int = QUOTE_CHARS) -> str:
    """The passage words at ``support`` (joined by " … "), whitespace folded, shortened."""
    parts = [" ".join(text[a:b].split()) for a, b in support if 0 <= a < b <= len(text)]
    quote = " … ".join(p for p in parts if p) or " ".join(text.split())
    return quote if len(quote) <= limit else quote[: limit - 1].rsplit(" ", 1)[0] + "…"


def _verdict_quote(verdict: ClaimScore | ClaimVerdict, text: str, support: Sequence[Span]) -> str:
    """The quote a verdict names itself (the passage's words that state otherwise), else
    the passage words at its support spans."""
    return verdict.quote or quote_of(text, support)


def _payload(label: str, p: Passage) -> SourcePayload:
    return SourcePayload(
        id=label, chunk_id=p.chunk_id, doc_id=p.doc_id, doc_path=p.doc_path, doc_title=p.doc_title,
        page=p.page, page_label=p.page_label, section=p.section, text=p.text,
        char_start=p.char_start, char_end=p.char_end, version=p.version,
        format=p.format, locator=p.locator,
    )


def _where(source: SourcePayload | None, footnote: Footnote | None = None) -> str:
    if source is not None:
        return f"{source.doc_path.rsplit('/', 1)[-1]} {source.where}"
    if footnote is not None and footnote.file_name:
        return f"{footnote.file_name} p. {footnote.page_label or '?'}"
    return ""


@dataclass(frozen=True)
class _Candidate:
    label: str  # the marker label (cited) or the chunk id (found by retrieval)
    text: str
    passage: Passage | None
    footnote: Footnote | None
    cited: bool


def _rank(scored: tuple[_Candidate, ClaimScore]) -> tuple[int, float, bool]:
    """Which passage a sentence's verdict rests on: one that supports it, else one that
    says otherwise (the library contradicts the sentence: the reader must see that), else
    the best score; the cited passage on a tie."""
    candidate, score = scored
    level = 2 if score.verdict is Verdict.SUPPORTED else int(str(score.verdict) == "contradicted")
    return level, score.score, candidate.cited


def second_opinion(judge: Judge | None, sentence: str, verdict: ClaimVerdict,
                   passages: Mapping[str, JudgedPassage]) -> ClaimVerdict:
    """``verdict`` (its span the whole of ``sentence``) after the judge (core/verdicts/judge.py)
    when one is given and the rules were unsure, exactly as an answer's sentence gets it."""
    if judge is None:
        return verdict
    updates = judge.review(sentence, [verdict], passages)
    return updates[0] if updates else verdict


def _judged_key(candidate: _Candidate) -> str:
    """The judge's cache key for a passage: its chunk id, or a hash of a quoted one."""
    if candidate.passage is not None:
        return candidate.passage.chunk_id
    return "quoted-" + hashlib.sha256(candidate.text.encode("utf-8")).hexdigest()[:16]


class TextChecker:
    """Checks the sentences of one text; ``search`` is retrieval over the library (query,
    k) and ``lookup`` finds a stored passage by chunk id (both optional: without them only
    the passages quoted in an exported answer are consulted). With a ``judge``, the local
    model gives its second opinion on the sentences the rules are unsure of until it has
    spent ``judge_budget_s`` seconds on the text."""

    def __init__(self, search: Search | None = None, lookup: ChunkLookup | None = None,
                 k: int = RETRIEVE_K, judge: Judge | None = None, judge_budget_s: float = 30.0) -> None:
        self.search = search
        self.lookup = lookup
        self.k = k
        self.judge = judge
        self.judge_budget_s = judge_budget_s
        self._cited: dict[str, _Candidate] = {}

    def _cited_candidate(self, label: str, footnotes: Mapping[str, Footnote]) -> _Candidate | None:
        if label in self._cited:
            return self._cited[label]
        footnote = footnotes.get(label)
        if footnote is None:
            return None
        passage = self.lookup(footnote.chunk_id) if self.lookup and footnote.chunk_id else None
        text = passage.text if passage is not None else footnote.passage
        if not text.strip():
            return None
        candidate = _Candidate(label, text, passage, footnote, True)
        self._cited[label] = candidate
        return candidate

    def check(self, index: int, sentence: Sentence, cited: tuple[str, ...],
              footnotes: Mapping[str, Footnote], heading: bool = False) -> SentenceCheck:
        span = (sentence.start, sentence.end)
        if heading or not is_factual(sentence.text):
            reason = "a heading" if heading else "not a factual statement"
            return SentenceCheck(index, span, sentence.text, Verdict.NOT_FACTUAL, cited=cited, reason=reason)
        scored: list[tuple[_Candidate, ClaimScore]] = []
        for label in cited:
            candidate = self._cited_candidate(label, footnotes)
            if candidate is not None:
                scored.append((candidate, score_claim(sentence.text, candidate.text)))
        best = max(scored, key=_rank, default=None)
        if (best is None or best[1].verdict is not Verdict.SUPPORTED) and self.search is not None:
            seen = {c.passage.chunk_id for c, _ in scored if c.passage is not None}
            for passage in self.search(plain_text(sentence.text), self.k):
                if passage.chunk_id in seen:
                    continue
                seen.add(passage.chunk_id)
                candidate = _Candidate(passage.chunk_id, passage.text, passage, None, False)
                scored.append((candidate, score_claim(sentence.text, passage.text)))
            best = max(scored, key=_rank, default=None)
        if best is None:
            reason = "no passage in the library matches it" if self.search else "no passage to check it against"
            if cited:
                reason = f"cites {', '.join(f'[{c}]' for c in cited)}, not found; {reason}"
            return SentenceCheck(index, span, sentence.text, Verdict.NOT_CONFIRMED, cited=cited, reason=reason)
        candidate, score = best
        source = _payload(candidate.label, candidate.passage) if candidate.passage is not None else None
        verdict, why, conflict = score.verdict, score.reason, score.conflict
        if self.judge is not None and self.judge.seconds < self.judge_budget_s:
            rules = ClaimVerdict((0, len(sentence.text)), score.verdict, (candidate.label,), score.score,
                                 support=score.support, reason=score.reason, support_id=candidate.label,
                                 quote=score.quote, conflict=score.conflict)
            judged = second_opinion(self.judge, sentence.text, rules,
                                    {candidate.label: JudgedPassage(_judged_key(candidate), candidate.text)})
            verdict, why, conflict = judged.verdict, judged.reason, judged.conflict
            if not candidate.cited and why.startswith(f"[{candidate.label}]: "):
                why = why[len(candidate.label) + 4:]  # a chunk id is no label to show
        if candidate.cited:
            reason = why if why.startswith(f"[{candidate.label}]") else f"cited [{candidate.label}]: {why}"
        elif cited:
            reason = (f"the cited {', '.join(f'[{c}]' for c in cited)} support it less; best passage"
                      f" found in the library: {why}")
        else:
            reason = f"best passage found in the library: {why}"
        return SentenceCheck(
            index, span, sentence.text, verdict, score.score, reason, cited, source,
            _where(source, candidate.footnote), score.support,
            _verdict_quote(score, candidate.text, score.support), candidate.cited,
            conflict if verdict is Verdict.CONTRADICTED else "",
        )

    def run(self, document: TextToCheck, cancelled: Callable[[], bool] = lambda: False
            ) -> Iterator[SentenceCheck | CheckFinished]:
        """One :class:`SentenceCheck` per sentence, in order, then :class:`CheckFinished`."""
        counts: dict[str, int] = {}
        done = 0
        for index, (sentence, cited) in enumerate(zip(document.sentences, document.cited, strict=True)):
            if cancelled():
                yield CheckFinished(counts, done, cancelled=True)
                return
            result = self.check(index, sentence, cited, document.footnotes, index in document.headings)
            counts[str(result.verdict)] = counts.get(str(result.verdict), 0) + 1
            done += 1
            yield result
        logger.info("checked %d sentences: %s", done, counts)
        yield CheckFinished(counts, done)


# ----------------------------------------------------------------- --claims lines
def check_claim(claim: ClaimLine, judge: Judge | None = None) -> ClaimVerdict:
    """The verdict on one ``--claims`` line, exactly as an answer sentence citing ``ids``
    among ``passages`` gets it (no library: only the passages given), with the ``judge``'s
    second opinion when the rules are unsure and a judge is given."""
    text = claim.sentence.strip()
    verifier = _Verifier(claim.passages, None, None)
    verdict = verifier.verdict(Sentence(0, len(text), text), claim.ids)
    passages = {
        label: JudgedPassage("given-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16], body)
        for label, body in claim.passages.items()
    }
    return second_opinion(judge, text, verdict, passages)


def claim_result(claim: ClaimLine, verdict: ClaimVerdict) -> JsonObject:
    """The output line for one ``--claims`` input line."""
    label = verdict.support_id or (verdict.suggested_label or None)
    passage = claim.passages.get(label, "") if label else ""
    quote = _verdict_quote(verdict, passage, verdict.support) if passage else ""
    out: JsonObject = {} if claim.key is None else {"id": claim.key}
    out.update({
        "sentence": claim.sentence, "verdict": str(verdict.verdict), "score": round(verdict.score, 4),
        "reason": verdict.reason, "quote": quote, "conflict": verdict.conflict, "support_label": label,
        "support": [list(s) for s in verdict.support], "ids": list(claim.ids),
    })
    return out
