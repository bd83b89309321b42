"""The judge: a second opinion from the loaded answer model on the sentences the rule
scorer was unsure about or marked. Qt-free, no asyncio.

Asked about: a sentence the rules call contradicted (red must be earned: the judge's P(no)
confirms it, else it is only "not confirmed"), one they call supported (a veto) and one
they leave not confirmed with a score from PARTIAL_MIN (it may turn green); never an
uncited one, never a not confirmed one whose numbers the passage does not state. Each
question is one short completion — "Does the passage support the sentence? Answer yes,
partial or no." — on the thread that owns the model, after the answer has finished,
within a time budget (:data:`BUDGET_S`). Answers are cached by (sha256 of the sentence,
chunk id), so re-asking costs nothing.

With a model that can score a reply (``reply_logprob``: the local model does, a fake or a
server may not), the judge reads the probability of each answer after the question,
teacher-forced: ``P(yes)`` and ``P(no)`` among yes/partial/no. What it does with them is
:func:`decide`. Without probabilities only :data:`POLICY` applies. The judge never makes a
sentence red by itself: red needs the passage's conflicting words, which only the rules
find. The updated :class:`ClaimVerdict` keeps the sentence span and says in its reason what
the judge said. bench/verdicts.py measures it.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from desktop_app.core.errors import Cancelled
from desktop_app.core.stages import Generator, JudgeCache
from desktop_app.core.text.sentences import split_sentences
from desktop_app.core.types import ClaimVerdict, Span, Verdict
from desktop_app.core.verdicts.claim_score import PARTIAL_MIN
from desktop_app.core.verdicts.claims import missing_numbers, numbers_in, plain_text

logger = logging.getLogger(__name__)

QUESTION = "Does the passage support the sentence? Answer yes, partial or no."
SYSTEM = (
    "You are a careful fact checker. Answer yes only if the passage states everything the "
    "sentence claims; partial if it states some of it and nothing against it; no if it does "
    "not state it or says something else."
)
GRAMMAR = 'root ::= ("yes" | "partial" | "no")\n'
ANSWERS = ("yes", "partial", "no")
# Without P(yes) (a model server cannot score replies): what the judge's sampled answer makes
# of the rule scorer's verdict; a pair not listed keeps it. A sampled "yes" is wrong too
# often to turn a sentence green; it is enough to take back a red the rules found (a red
# the judge does not see is not earned).
POLICY: dict[tuple[Verdict, str], Verdict] = {
    (Verdict.CONTRADICTED, "yes"): Verdict.NOT_CONFIRMED,
}
# With P(yes) and P(no), chosen on the tuning half of bench/data/verdict_pairs.jsonl (all 280
# pairs Folio asks about judged) for the targets: the most true sentences green with
# >= 95% of the green ones true and <= 2% of the false ones green, and the most false
# ones red with >= 90% of the red ones false and <= 3% of the true ones red (bench/verdicts.py
# judge, then rules --judged FILE --set NAME VALUE to try one; the green pair is the only
# one on a grid of 0.01 that meets both there): a not confirmed sentence
# turns green from GREEN_P, a green one stays green from KEEP_GREEN_P (below it the judge's
# doubt makes it not confirmed), and a red one stays red only from RED_NO_P.
GREEN_P = 0.81
KEEP_GREEN_P = 0.76
RED_NO_P = 0.1
# At most this many model calls per answer, and no new call after BUDGET_S seconds: a few
# seconds a pair with the default model (bench/verdicts.py judge prints the median).
MAX_JUDGED = 8
BUDGET_S = 30.0
MAX_PASSAGE_CHARS = 2000  # a chunk is ~1,000 characters; never send more than this
# With the rule scorer's support spans, the judge reads only those passage sentences and
# their neighbours: a prompt of ~150 tokens instead of ~400 (prefill is most of its cost).
EXCERPT_CHARS = 700


@dataclass(frozen=True)
class JudgedPassage:
    """What the judge needs of a source the model was given."""

    chunk_id: str
    text: str


def excerpt(text: str, spans: Sequence[Span], limit: int = EXCERPT_CHARS) -> str:
    """The passage sentences that overlap ``spans`` and one on each side of them, in order
    ("…" where sentences are left out); the whole text when ``spans`` is empty."""
    if not spans:
        return text
    sentences = split_sentences(text, table_rows=True)
    hit = {i for i, s in enumerate(sentences) for a, b in spans if s.start < b and a < s.end}
    keep = sorted({j for i in hit for j in (i - 1, i, i + 1) if 0 <= j < len(sentences)})
    parts: list[str] = []
    for n, i in enumerate(keep):
        if n and i != keep[n - 1] + 1:
            parts.append("…")
        parts.append(" ".join(sentences[i].text.split()))
    out = " ".join(parts)
    return out if len(out) <= limit else " ".join(" ".join(sentences[i].text.split()) for i in sorted(hit))[:limit]


def claim_text(sentence: str) -> str:
    """The sentence as the judge sees it: no markers, markdown or extra spaces."""
    return re.sub(r"\s+([.,;:!?。，；：！？])", r"\1", plain_text(sentence))


def sentence_sha(sentence: str) -> str:
    """The cache key of a sentence: the sha256 of :func:`claim_text` (and of the question's
    version: answers to the earlier questions, without probabilities, are not reused)."""
    return hashlib.sha256(("v4\n" + claim_text(sentence)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Opinion:
    """What the judge said: its answer and, when the model could score replies, the
    probability of "yes" among yes/partial/no."""

    answer: str  # "yes", "partial" or "no"
    p_yes: float | None = None
    p_no: float | None = None

    def encoded(self) -> str:
        """As the cache keeps it: "yes 0.9731 0.0100" (P(yes), P(no)), or the bare answer."""
        if self.p_yes is None:
            return self.answer
        return f"{self.answer} {self.p_yes:.4f} {self.p_no if self.p_no is not None else 1 - self.p_yes:.4f}"

    @staticmethod
    def decoded(text: str) -> Opinion | None:
        answer = parse_reply(text)
        if answer is None:
            return None
        probabilities = [float(x) for x in re.findall(r"\s([01](?:\.\d+)?)(?=\s|$)", text.strip())]
        if not probabilities:
            return Opinion(answer)
        return Opinion(answer, probabilities[0], probabilities[1] if len(probabilities) > 1 else None)


def parse_reply(reply: str) -> str | None:
    """"yes", "partial" or "no"; None when the reply says none of them."""
    word = reply.strip().lstrip("*\"'“ ").lower()
    if word.startswith(("yes", "是", "支持")):
        return "yes"
    if word.startswith(("partial", "部分")):
        return "partial"
    if word.startswith(("no", "否", "不")):
        return "no"
    return None


def messages_for(sentence: str, passage: str) -> list[dict[str, str]]:
    text = passage.strip()
    if len(text) > MAX_PASSAGE_CHARS:
        text = text[:MAX_PASSAGE_CHARS] + "…"
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Passage:\n{text}\n\nSentence: {claim_text(sentence)}\n\n{QUESTION}",
        },
    ]


class Judge:
    """Asks ``generator`` (the loaded answer model) yes/no support questions, with a cache."""

    def __init__(self, generator: Generator, cache: JudgeCache | None = None,
                 should_cancel: Callable[[], bool] = lambda: False,
                 max_judged: int = MAX_JUDGED, grammar: str | None = GRAMMAR,
                 budget_s: float = BUDGET_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.generator = generator
        self.cache = cache
        self.should_cancel = should_cancel
        self.max_judged = max_judged
        self.grammar = grammar
        self.budget_s = budget_s
        self.clock = clock
        # whether the model can score replies (P(yes)); without it green sentences are not asked
        self.weighs = generator.scores_replies
        self.model_calls = 0
        self.cache_hits = 0
        self.seconds = 0.0  # spent in model calls

    def supports(self, sentence: str, passage: JudgedPassage, focus: Sequence[Span] = ()) -> str | None:
        """The judge's answer ("yes", "partial", "no") for one (sentence, passage)."""
        opinion = self.opinion(sentence, passage, focus)
        return opinion.answer if opinion is not None else None

    def opinion(self, sentence: str, passage: JudgedPassage, focus: Sequence[Span] = ()) -> Opinion | None:
        """The judge's answer for one (sentence, passage), from the cache if asked before;
        with ``focus`` (the rule scorer's support spans) it reads only around them."""
        key = sentence_sha(sentence)
        if self.cache is not None:
            cached = self.cache.judge_get(key, passage.chunk_id)
            found = Opinion.decoded(cached) if cached is not None else None
            if found is not None:
                self.cache_hits += 1
                return found
        started = time.perf_counter()
        messages = messages_for(sentence, excerpt(passage.text, focus))
        opinion: Opinion | None
        if self.weighs:
            opinion = _weighed(self.generator.reply_logprob, messages, self.should_cancel)
        else:
            reply = "".join(self.generator.stream(
                messages, max_tokens=3, temperature=0.0, grammar=self.grammar,
                should_cancel=self.should_cancel,
            ))
            answer = parse_reply(reply)
            opinion = Opinion(answer) if answer is not None else None
        self.model_calls += 1
        self.seconds += time.perf_counter() - started
        logger.debug("judge said %s in %.2f s", opinion, time.perf_counter() - started)
        if opinion is not None and self.cache is not None:
            try:
                self.cache.judge_put(key, passage.chunk_id, opinion.encoded())
            except Exception:  # a cache that cannot be written only costs a re-ask
                logger.exception("could not cache a judge answer")
        return opinion

    def review(self, text: str, verdicts: Sequence[ClaimVerdict],
               passages: Mapping[str, JudgedPassage]) -> list[ClaimVerdict]:
        """Updated verdicts for the unsure sentences of ``text`` (only those that the judge
        was asked about, in order). ``passages`` maps the ids the model cited to sources.
        Stops quietly when ``should_cancel`` turns true."""
        updated: list[ClaimVerdict] = []
        asked = 0
        started = self.clock()
        # the red ones first (a wrong red costs the reader's trust most), then the unsure
        # ones, the green ones (a veto) last
        order = {Verdict.CONTRADICTED: 0, Verdict.NOT_CONFIRMED: 1, Verdict.SUPPORTED: 2}
        for verdict in sorted(verdicts, key=lambda v: order.get(v.verdict, 3)):
            if asked >= self.max_judged or self.should_cancel():
                break
            if self.clock() - started >= self.budget_s:
                logger.info("judge: time budget of %.0f s spent after %d questions", self.budget_s, asked)
                break
            target = _target(verdict, passages)
            if target is None or verdict.verdict is Verdict.SUPPORTED and not self.weighs:
                continue  # a veto needs P(yes): a sampled "yes"/"no" is too often wrong
            start, end = verdict.sentence_span
            sentence = text[start:end]
            passage = passages[target]
            if verdict.verdict is not Verdict.CONTRADICTED and missing_numbers(
                    numbers_in(sentence), numbers_in(passage.text)):
                continue  # a number the passage does not state: it cannot turn green
            asked += 1
            try:
                focus = verdict.support if verdict.support_id == target else ()
                opinion = self.opinion(sentence, passage, focus)
            except Cancelled:
                break
            if opinion is None:
                continue
            updated.append(_apply(verdict, target, opinion))
        return sorted(updated, key=lambda v: v.sentence_span)


def worth_asking(verdict: ClaimVerdict) -> bool:
    """Whether the judge's opinion could change ``verdict``: a red one (to confirm it), a
    green one without a ticked box (a veto), a not confirmed one the rules found part of."""
    if verdict.verdict is Verdict.CONTRADICTED:
        return True
    if verdict.verdict is Verdict.SUPPORTED:
        return not verdict.quote
    return verdict.verdict is Verdict.NOT_CONFIRMED and not verdict.quote and verdict.score >= PARTIAL_MIN


def _target(verdict: ClaimVerdict, passages: Mapping[str, JudgedPassage]) -> str | None:
    """The cited id to judge against: the rule scorer's best, else the first valid one."""
    if not worth_asking(verdict):
        return None
    valid = [i for i in verdict.ids if i in passages]
    if not valid:
        return None
    return verdict.support_id if verdict.support_id in valid else valid[0]


def _weighed(measure: Callable[..., float], messages: list[dict[str, str]],
             should_cancel: Callable[[], bool]) -> Opinion:
    """The judge's opinion from the probability of each reply after the prompt (the prompt
    is read once; each reply costs a token or two)."""
    weights = {
        answer: sum(math.exp(measure(messages, form, should_cancel)) for form in (answer, answer.capitalize()))
        for answer in ANSWERS
    }
    total = sum(weights.values()) or 1.0
    return Opinion(max(ANSWERS, key=weights.__getitem__), weights["yes"] / total, weights["no"] / total)


def decide(rule: Verdict, answer: str | None, p_yes: float | None = None,
           p_no: float | None = None) -> Verdict:
    """The verdict after the judge answered ``answer`` (with ``P(yes)`` and ``P(no)`` when
    known) about a sentence the rules rated ``rule``."""
    if p_yes is None:
        return POLICY.get((rule, answer or ""), rule)
    if rule is Verdict.CONTRADICTED:
        no = p_no if p_no is not None else 1.0 - p_yes
        return rule if no >= RED_NO_P else Verdict.NOT_CONFIRMED
    if rule is Verdict.SUPPORTED:
        return rule if p_yes >= KEEP_GREEN_P else Verdict.NOT_CONFIRMED
    if rule is Verdict.NOT_CONFIRMED:
        return Verdict.SUPPORTED if p_yes >= GREEN_P else rule
    return rule


_SAYS = {"yes": "supports it", "partial": "supports part of it", "no": "does not support it"}


def _apply(verdict: ClaimVerdict, target: str, opinion: Opinion) -> ClaimVerdict:
    """The verdict after the judge's opinion (the same one when :func:`decide` keeps it,
    with the judge's word in its reason)."""
    rule = f"rule scorer: {verdict.verdict} ({verdict.reason})"
    new = decide(verdict.verdict, opinion.answer, opinion.p_yes, opinion.p_no)
    if opinion.p_yes is None:
        said = f"says the passage {_SAYS[opinion.answer]}"
    else:
        said = f"gives P(yes) {opinion.p_yes:.2f} that the passage supports it"
        if opinion.p_no is not None:
            said += f", P(no) {opinion.p_no:.2f}"
    reason = f"[{target}]: the judge (local model) {said}; {rule}"
    if new is Verdict.SUPPORTED:
        # The cited passage holds: no suggestion needed; the rule scorer's support spans
        # are kept only if they index this passage.
        support = verdict.support if verdict.support_id == target else ()
        return replace(verdict, verdict=new, support_id=target, support=support,
                       suggested=None, suggested_label=None, reason=reason, conflict="")
    if verdict.verdict is Verdict.CONTRADICTED and new is not Verdict.CONTRADICTED:
        # the rules' conflict is not confirmed: the quote stays as what the passage says
        return replace(verdict, verdict=new, reason=reason, conflict="")
    return replace(verdict, verdict=new, reason=reason)


def merge(verdicts: Iterable[ClaimVerdict], updates: Iterable[ClaimVerdict]) -> list[ClaimVerdict]:
    """``verdicts`` with each sentence's verdict replaced by its update, if any."""
    by_span = {u.sentence_span: u for u in updates}
    return [by_span.get(v.sentence_span, v) for v in verdicts]
