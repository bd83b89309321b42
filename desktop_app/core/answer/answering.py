"""One question, end to end: retrieve, gate on evidence, prompt, stream, track citations,
check sentences, save the audit record. Qt-free, no asyncio: runs on the model's thread
and hands typed events to ``emit``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from desktop_app.core.answer import evidence, gate, prompts
from desktop_app.core.answer import finder as finderlib
from desktop_app.core.answer.citations import CitationResolver, SourceMap, citation_grammar
from desktop_app.core.answer.followup import Conversation
from desktop_app.core.answer.gate import Refusal
from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.settings import Settings
from desktop_app.core.stages import AnswerFinder, AnswerLog, Generator, Retriever, VerdictStream, Verifier
from desktop_app.core.text import lang
from desktop_app.core.text.markers import strip_markers
from desktop_app.core.types import (
    AnswerCancelled,
    AnswerEvent,
    AnswerFailed,
    AnswerFinished,
    AnswerQuoted,
    AnswerStarted,
    AnswerStatus,
    CitationStyle,
    ClaimVerdict,
    FirstWordClock,
    Found,
    GenerationStats,
    JsonObject,
    NoBasis,
    Passage,
    Quote,
    QuotePayload,
    Retrieval,
    SavedAnswer,
    SourcePayload,
    Span,
    Steering,
    TokenDelta,
)

logger = logging.getLogger(__name__)

MAX_REPEATS = 3  # the same sentence this many times in one answer: the model is looping
MIN_REPEAT_CHARS = 8  # shorter ones ("Yes.", "是的。") may repeat in a sound answer

def _model_abstains(generator: Generator, packed: prompts.PackedPrompt, settings: Settings,
                    should_cancel: Callable[[], bool]) -> Refusal | None:
    """The refusal when the model would most likely say its sources do not hold the answer
    (gate.abstention); None when it would answer, or when it cannot say (a model server)."""
    if not generator.scores_replies or not settings.abstain:
        return None
    probability = math.exp(generator.reply_logprob(packed.messages, prompts.NO_ANSWER[packed.language],
                                                   should_cancel))
    logger.info("the model would decline with probability %.3f", probability)
    return gate.abstention(probability)


def _sentences(verifier: Verifier, source_map: SourceMap) -> VerdictStream:
    """The answer's sentences checked as they stream, against the sources the model read."""
    return verifier.stream({label: read_only(p) for label, p in source_map.items()},
                           {p.chunk_id: read_only(p) for _, p in source_map.items()})


def answer(
    question: str,
    *,
    retriever: Retriever,
    store: AnswerLog | None,
    generator_factory: Callable[[str], Generator],
    settings: Settings,
    emit: Callable[[AnswerEvent], None],
    should_cancel: Callable[[], bool],
    verifier: Verifier,
    scope: Sequence[str] = (),
    clock: FirstWordClock | None = None,
    conversation: Conversation | None = None,
    finder: AnswerFinder | None = None,
) -> str:
    """Stream one answer's events into ``emit``; returns the answer id. ``generator_factory``
    is handed the question's language (decided once, by retrieval: ``Retrieval.language``)
    and returns the answer model (a keep-alive model primes that language's head). ``verifier`` checks
    its sentences against the sources (core/verdicts). With ``scope`` (file and folder
    paths) the question is asked within those documents only: retrieval, the evidence gate
    and the sources are limited to them, and the history records it. ``clock`` (started
    when the question was asked) times each step before the first word; the finished
    answer's ``stats["first_word"]`` carries it. ``conversation``: the turns before this
    one (the prompt recalls them briefly) and the question as searched (a follow-up made
    to stand alone, core/answer/followup.py): retrieval, the gate and the evidence read
    that one; the prompt asks ``question``. ``finder`` finds the document's own sentence
    that answers (core/answer/finder.py): it is sent as ``AnswerQuoted`` before the model's
    first token, read by the model first in its source, and saved with the answer."""
    clock = clock or FirstWordClock()
    conversation = conversation or Conversation()
    answer_id = uuid.uuid4().hex
    scope = tuple(scope)
    style = settings.citation_style
    question = question.strip()
    if not question:
        emit(AnswerFailed(error="The question is empty.", known=True))
        return answer_id
    searched = conversation.searched.strip() or question
    conversation = dataclasses.replace(conversation, searched=searched)
    with clock.timing("search_s"):
        retrieval = retriever.search(searched, settings.sources_per_answer, scope=scope,
                                     language=settings.prompt_language)
    _split_search(clock, retrieval)
    # The one language of this question (the setting, else what it is written in): the gate,
    # the prompt and the refusal all read it.
    language = gate.language_of(retrieval)
    also_searched = retrieval.expansion  # what the glossary added (retrieve.py)
    with clock.timing("gate_s"):
        refused = gate.refusal(retrieval)
    if refused is not None:
        if scope:
            refused = refused.within(scope_words(scope))
        _no_basis(question, refused, language, answer_id, style, store, emit, also_searched, scope,
                  retrieval.passages if refused.show_passages else (), conversation)
        return answer_id
    try:
        with clock.timing("model_start_s"):
            generator = generator_factory(language)
    except KnownError as exc:
        emit(AnswerFailed(error=str(exc), known=True))
        return answer_id
    # The document's own answering sentence, then evidence, not chunks: the quote's chunk
    # first, each passage cut to the sentences that bear on the question, the quote always kept.
    with clock.timing("find_s"):
        found = finder.find(searched, language, retrieval.passages) if finder is not None else Found()
    quotes = found.quotes
    with clock.timing("evidence_s"):
        passages, must = finderlib.with_quotes(retrieval.passages, found)
        passages = evidence.select(searched, passages, budget_tokens=settings.evidence_tokens, must=must)
        full_map = SourceMap.build(passages, style)
    counted = _CountedTokens(generator.count_tokens)
    with clock.timing("pack_s"):
        packed = prompts.build_prompt(
            question,
            [(label, full_map.marker(label), passage) for label, passage in full_map.items()],
            count_tokens=counted,
            context_tokens=generator.context_tokens,
            answer_tokens=settings.max_tokens,
            language=language,
            focus=searched,
            history=conversation.turns,
        )
    clock.counts["pack_token_counts"] = counted.calls
    # Only what reached the prompt was "given to the model".
    source_map = SourceMap(full_map.style, tuple(e for e in full_map.entries if e[0] in packed.labels))
    grammar = citation_grammar(source_map.labels()) if settings.use_grammar else None
    # The sources go on screen now, before the model reads them, with how long it will take.
    payloads = tuple(p for p in (source_map.payload(label) for label in source_map.labels()) if p)
    reading, estimate = packed.request_tokens, generator.estimate_s(packed.request_tokens)
    emit(AnswerStarted(question=question, sources=payloads, answer_id=answer_id, style=str(style),
                       also_searched=also_searched, scope=scope, prompt_tokens=reading,
                       estimate_s=estimate, searched=searched,
                       conversation_id=conversation.conversation_id or answer_id))
    shown = quote_payloads(quotes, source_map)
    if shown:  # the document's own answer, before the model reads a word
        emit(AnswerQuoted(shown))
    try:
        with clock.timing("probe_s"):
            doubt = _model_abstains(generator, packed, settings, should_cancel)
    except Cancelled:
        emit(AnswerCancelled())
        return answer_id
    except KnownError as exc:
        emit(AnswerFailed(error=str(exc), known=True))
        return answer_id
    if doubt is not None:  # the model would say its sources do not hold the answer
        text = prompts.NO_ANSWER[packed.language]
        emit(NoBasis(reason=doubt.reason))
        emit(TokenDelta(text))
        emit(AnswerFinished(text=text, citations={}, hallucinated=(), answer_id=answer_id))
        _save(store, answer_id, question, text, style, generator.model_id, AnswerStatus.NO_BASIS, payloads, {}, (),
              [], reason=doubt.reason, scope=scope, conversation=conversation, quotes=shown)
        return answer_id
    started = time.perf_counter()
    try:
        # A Chinese sentence does not end without its marker, and the number inside a marker
        # is weighed by what each source holds of its sentence and its place (core/models/steer.py).
        with clock.timing("steering_s"):
            steering = Steering(
                refusal=prompts.NO_ANSWER[packed.language],
                mark_sentences=lang.of(packed.language).marks_sentences,
                sources=tuple((label, evidence.evidence_text(p)) for label, p in source_map.items())
                if source_map.style is CitationStyle.LABEL else (),
            )
        stream = generator.stream(
            packed.messages, max_tokens=settings.max_tokens, temperature=settings.temperature,
            grammar=grammar, should_cancel=should_cancel, steering=steering,
        )
        clock.mark("first_token_s")  # stream() returns once the model has sampled its first token
    except KnownError as exc:
        emit(AnswerFailed(error=str(exc), known=True))
        return answer_id
    resolver = CitationResolver(source_map)
    # Built after the first word is out: nothing a reader waits for.
    sentences: VerdictStream | None = None
    claims: list[ClaimVerdict] = []
    seen = Counter[str]()
    loop_end: int | None = None  # where the answer is cut when the model loops
    try:
        for delta in stream:
            emit(TokenDelta(delta))
            if "first_word_s" not in clock.marks and any(ch.isalnum() for ch in delta):
                clock.mark("first_word_s")
            if sentences is None:
                sentences = _sentences(verifier, source_map)
            for event in resolver.feed(delta):
                emit(event)
            for claim in sentences.feed(resolver.tracker.text, resolver.spans):
                claims.append(claim)
                emit(claim)
                if loop_end is None and _repeated(seen, resolver.tracker.text, claim):
                    loop_end = claim.sentence_span[1]
            if loop_end is not None:  # the model writes one sentence over and over: stop it there
                logger.info("answer %s: the model repeated a sentence %d times; stopped", answer_id, MAX_REPEATS)
                stream.close()
                break
    except Cancelled:
        emit(AnswerCancelled())
        _save(store, answer_id, question, resolver.tracker.text, style, generator.model_id,
              AnswerStatus.CANCELLED, payloads, {}, (), claims, scope=scope, conversation=conversation,
              quotes=shown)
        return answer_id
    except KnownError as exc:  # the model's process died or llama.cpp failed mid-answer
        logger.warning("answer %s ended early: %s", answer_id, exc)
        emit(AnswerFailed(error=str(exc), known=True))
        # What was written stays, with its citations: the reader can still check it.
        partial = resolver.finished(answer_id=answer_id)
        _save(store, answer_id, question, partial.text, style, generator.model_id, AnswerStatus.FAILED,
              payloads, partial.citations, partial.hallucinated, claims, reason=str(exc), scope=scope,
              conversation=conversation, quotes=shown)
        return answer_id
    except Exception as exc:  # a bug inside the stream
        logger.exception("generation failed")
        emit(AnswerFailed(error=f"The model stopped with an error: {exc}", known=False))
        return answer_id
    written = resolver.tracker.text
    text = written
    if loop_end is not None and all(end <= loop_end for spans in resolver.spans.values() for _, end in spans):
        text = written[:loop_end]  # without the start of the next repeat, when it holds no marker
    finished = resolver.finished(text, answer_id=answer_id)
    finished = dataclasses.replace(finished, stats=_stats(generator.last_stats, clock))
    if sentences is None:
        sentences = _sentences(verifier, source_map)
    for claim in sentences.finish(written, finished.citations):
        if claim.sentence_span[0] >= len(text):
            continue  # the start of a repeat cut off above
        claims.append(claim)
        emit(claim)
    if _says_no_answer(finished.text, language) and not finished.citations:
        emit(NoBasis(reason="The model found no answer in the sources it was given."))
    emit(finished)
    if settings.judge and claims:
        claims = _judge(verifier, generator, store, source_map, finished.text, claims, emit,
                        should_cancel, settings.judge_budget_s)
    logger.info("answer %s in %.1f s, %d citations", answer_id, time.perf_counter() - started,
                sum(len(v) for v in finished.citations.values()))
    _save(store, answer_id, question, finished.text, style, generator.model_id, AnswerStatus.FINISHED,
          payloads, finished.citations, finished.hallucinated, claims, scope=scope, stats=finished.stats,
          conversation=conversation, quotes=shown)
    return answer_id


def find_only(
    question: str,
    *,
    retriever: Retriever,
    finder: AnswerFinder,
    settings: Settings,
    emit: Callable[[AnswerEvent], None],
    scope: Sequence[str] = (),
    conversation: Conversation | None = None,
) -> str:
    """The document's own answer without a model ("find the passage only", ``folio ask
    --quote-only``): search, the evidence gate and the answer finder, then ``AnswerStarted``
    with the sources, ``AnswerQuoted`` when a sentence answers (else ``NoBasis``) and an
    empty ``AnswerFinished``. Nothing is saved: it is a search, not an answer."""
    answer_id = uuid.uuid4().hex
    question = question.strip()
    if not question:
        emit(AnswerFailed(error="The question is empty.", known=True))
        return answer_id
    conversation = conversation or Conversation()
    searched = conversation.searched.strip() or question
    retrieval = retriever.search(searched, settings.sources_per_answer, scope=tuple(scope),
                                 language=settings.prompt_language)
    language = gate.language_of(retrieval)
    refused = gate.refusal(retrieval)
    found = finder.find(searched, language, retrieval.passages) if refused is None else Found()
    quotes = found.quotes
    passages, must = finderlib.with_quotes(retrieval.passages, found)
    passages = evidence.select(searched, passages, budget_tokens=settings.evidence_tokens, must=must)
    source_map = SourceMap.build(passages, settings.citation_style)
    payloads = tuple(p for p in (source_map.payload(label) for label in source_map.labels()) if p)
    emit(AnswerStarted(question=question, sources=payloads, answer_id=answer_id, style=str(settings.citation_style),
                       also_searched=retrieval.expansion, scope=tuple(scope), searched=searched,
                       conversation_id=conversation.conversation_id or answer_id))
    shown = quote_payloads(quotes, source_map)
    if shown:
        emit(AnswerQuoted(shown))
    else:
        reason = refused.reason if refused is not None else "No sentence in the sources answers the question surely enough."
        emit(NoBasis(reason=reason))
    emit(AnswerFinished(text="", citations={}, hallucinated=(), answer_id=answer_id))
    return answer_id


def quote_payloads(quotes: Sequence[Quote], source_map: SourceMap) -> tuple[QuotePayload, ...]:
    """The quotes as the reader sees them, each named by its source's label (a quote whose
    source did not reach the prompt is not shown: its marker would open nothing)."""
    labels = {p.chunk_id: label for label, p in source_map.items()}
    return tuple(
        QuotePayload(labels[q.source.chunk_id], q.text, q.span, q.source.doc_path, q.source.page, q.page_span,
                     q.score, q.kind)
        for q in quotes if q.source.chunk_id in labels
    )


def _repeated(seen: Counter[str], text: str, claim: ClaimVerdict) -> bool:
    """Count ``claim``'s sentence (markers and spacing aside); True at its MAX_REPEATS-th
    time: a small model caught in a loop repeats one sentence to its token limit (one
    held-out answer: 27 times "The identity of an Internet user was revealed [2].")."""
    start, end = claim.sentence_span
    key = " ".join(strip_markers(text[start:end]).split()).lower()
    if len(key) < MIN_REPEAT_CHARS:
        return False
    seen[key] += 1
    return seen[key] >= MAX_REPEATS


class _CountedTokens:
    """The generator's token count, counting its calls (stats: pack_token_counts)."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count
        self.calls = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        return self._count(text)


def _split_search(clock: FirstWordClock, retrieval: Retrieval) -> None:
    """Split the search's seconds into the question's embedding (on the search's own thread,
    beside BM25), the anchors (names and numbers, counted with the gate) and the rest."""
    embed = retrieval.timings.get("embed_s", 0.0)
    anchors = retrieval.timings.get("anchors_s", 0.0)
    clock.add("embed_s", embed)
    clock.add("gate_s", anchors)
    clock.steps["search_s"] = max(0.0, clock.steps.get("search_s", 0.0) - anchors - embed)


def _stats(figures: GenerationStats | None, clock: FirstWordClock) -> JsonObject:
    """What ``AnswerFinished.stats`` carries: the model's figures and the first word's steps."""
    if figures is None:
        return {}
    clock.add("steering_s", figures.setup_s)
    clock.add("prefill_s", figures.prefill_s)
    clock.counts["prefill_tokens"] = figures.prefill_tokens
    clock.counts["prefill_threads"] = figures.prefill_threads
    clock.add("first_decode_s", figures.first_decode_s)
    if "first_token_s" in clock.marks and "first_word_s" in clock.marks:
        clock.add("to_visible_word_s", clock.marks["first_word_s"] - clock.marks["first_token_s"])
    return {**figures.to_json(), "first_word": clock.to_json()}


def read_only(passage: Passage) -> str:
    """The passage's text with what the model did not read blanked out (same offsets), so
    the checks weigh a sentence against what its source showed the model."""
    if not passage.read:
        return passage.text
    chars = [ch if ch == "\n" else " " for ch in passage.text]
    for start, end in passage.read:
        chars[start:end] = passage.text[start:end]
    return "".join(chars)


def scope_words(scope: Sequence[str]) -> str:
    """"manual.pdf", "manual.pdf and lease.pdf", "the folder contracts", "3 places"."""
    names = [f"the folder {Path(p).name}" if not Path(p).suffix else Path(p).name for p in scope]
    if len(names) <= 2:
        return " and ".join(names)
    return f"{names[0]}, {names[1]} and {len(names) - 2} more"


def _judge(verifier: Verifier, generator: Generator, store: AnswerLog | None, source_map: SourceMap,
           text: str, claims: list[ClaimVerdict], emit: Callable[[AnswerEvent], None],
           should_cancel: Callable[[], bool], budget_s: float) -> list[ClaimVerdict]:
    """Ask the loaded model about the sentences the rule scorer was unsure of; emit and
    return the updated verdicts. Runs after the answer finished, on the model's thread,
    starting no new question after ``budget_s`` seconds."""
    try:
        updates = verifier.review(generator, store, text, claims, dict(source_map.items()),
                                  should_cancel, budget_s)
    except Exception:  # the answer stands on the rule scorer's verdicts
        logger.exception("the judge failed; keeping the rule scorer's verdicts")
        return claims
    for update in updates:
        emit(update)
    return verifier.merge(claims, updates)


def _says_no_answer(text: str, language: str) -> bool:
    probe = text.strip().lower()
    return any(phrase.lower().rstrip(".。") in probe for phrase in prompts.NO_ANSWER.values())


def _no_basis(question: str, refused: Refusal, language: str, answer_id: str, style: str,
              store: AnswerLog | None, emit: Callable[[AnswerEvent], None], also_searched: str = "",
              scope: tuple[str, ...] = (), passages: Sequence[Passage] = (),
              conversation: Conversation | None = None) -> None:
    reason = refused.reason
    conversation = conversation or Conversation(searched=question)
    text = prompts.NO_BASIS_MESSAGE[language]
    shown = SourceMap.build(passages, style)
    payloads = tuple(p for p in (shown.payload(label) for label in shown.labels()) if p)
    emit(AnswerStarted(question=question, sources=payloads, answer_id=answer_id, style=str(style),
                       also_searched=also_searched, scope=scope, searched=conversation.searched,
                       conversation_id=conversation.conversation_id or answer_id))
    emit(NoBasis(reason=reason))
    emit(TokenDelta(text))
    emit(AnswerFinished(text=text, citations={}, hallucinated=(), answer_id=answer_id))
    _save(store, answer_id, question, text, style, "", AnswerStatus.NO_BASIS, payloads, {}, (), [], reason=reason,
          scope=scope, conversation=conversation)


def _save(store: AnswerLog | None, answer_id: str, question: str, text: str, style: str, model_id: str,
          status: AnswerStatus, payloads: tuple[SourcePayload, ...], citations: Mapping[str, Sequence[Span]],
          hallucinated: tuple[str, ...], claims: list[ClaimVerdict], reason: str = "",
          scope: tuple[str, ...] = (), stats: JsonObject | None = None,
          conversation: Conversation | None = None, quotes: tuple[QuotePayload, ...] = ()) -> None:
    if store is None:
        return
    conversation = conversation or Conversation()
    record = SavedAnswer(
        answer_id=answer_id, question=question, text=text, style=str(style), model_id=model_id, status=status,
        scope=scope, conversation_id=conversation.conversation_id, sources=payloads,
        citations={k: tuple(v) for k, v in citations.items()}, hallucinated=hallucinated, claims=tuple(claims),
        reason=reason, stats=dict(stats or {}), searched=conversation.searched or question,
        replaces=conversation.replaces or "", quotes=quotes,
    )
    try:
        store.keep(record)
    except Exception:  # the answer was shown; failing to archive it must not hide it
        logger.exception("could not save answer %s", answer_id)
