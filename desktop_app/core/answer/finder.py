"""The document's own answer: the sentence (or two) of the retrieved pages that most likely
answers the question, found after search and before the model. Qt-free, no asyncio.

Search finds the right page far more often than the right chunk, so the finder reads every
sentence of each retrieved passage's whole page (:class:`SourcePage`), not only the chunk
that matched. Each sentence is scored by

- the question's terms it holds, each weighted by how rare it is among the sentences of
  this request (a word every sentence repeats counts little);
- the question's own names and numbers it states (text/anchors.py);
- whether it gives what the question asks for: a date for "when / bis wann / 何时", an
  amount for "how many / wie viel / 多少", a name for "who / wer / 谁", a reason for "why",
  a definition for "what is" (the words are the lexicons' ``asks`` and ``gives``);
- its meaning beside the question's, with the library's own embedder, for the sentences
  the rules above rank highest (embedding all of them would cost the first word);
- where it is: inside the chunk search matched, and how high that chunk ranked.

The best sentence becomes the quote, with the sentence before it when it opens by pointing
back ("It", "Dies", "这"); a question with two parts gets a second quote when another
sentence holds what the first leaves out. No quote is given when the best score is under
:data:`MIN_SCORE`: a weak quote shown as the document's answer is worse than none.
The weights and the threshold are chosen on the tuning half of the labelled questions
(bench/ledger.py); docs/evaluation.md quotes the held-out half.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.core.answer import evidence
from desktop_app.core.text import anchors as anchorlib
from desktop_app.core.text import lang
from desktop_app.core.text import words as termlib
from desktop_app.core.text.listing import reads_as_listing
from desktop_app.core.types import Found, Passage, Quote, SourcePage, Span

if TYPE_CHECKING:
    from desktop_app.core.stages import Embedder, SearchIndex

logger = logging.getLogger(__name__)

KINDS = ("date", "amount", "name", "reason", "definition", "yesno")

# The score's weights and the threshold under which no quote is shown (bench/ledger.py,
# tuning half of the labelled questions in en, de and zh).
WEIGHTS = {
    "terms": 1.0,  # share of the question's weighted terms the sentence holds
    "anchors": 0.1,  # share of the question's names and numbers it states
    "kind": 0.35,  # gives what the question asks for (+) / does not (-)
    "meaning": 4.0,  # cosine with the question above the request's median
    "inside": 0.0,  # lies in the chunk search matched
    "rank": 0.25,  # 1 / (1 + the rank of its passage)
    "short": 0.3,  # too short to answer anything
    "listing": 0.5,  # a contents or index line
    "fragment": 0.2,  # starts in the middle of a sentence ("1] ist keine ...", "and so on")
    "noise": 0.1,  # mostly symbols: a formula, a table's rule, a garbled line
    "length": 0.15,  # hundreds of characters: a long quote holds more words by chance
    "pair": 0.05,  # two adjacent sentences read as one
    "asks": 0.75,  # is itself a question (a FAQ's heading restates the question, it answers nothing)
    "after_question": 1.5,  # follows a question of the page much like this one: its answer
    "opens_page": 0.05,  # the page's first line: a running head, or a sentence begun on the page before
}
MAX_PAIR_CHARS = 400
MIN_SCORE = 0.5
SECOND_PART_SHARE = 0.5  # a second quote must hold this share of what the first leaves out
EMBEDDED = 8  # sentences whose meaning is weighed (the best by the other signals)
MAX_SENTENCE_CHARS = 400  # a longer "sentence" (a run-on table, a list) is cut into pieces
MIN_CHARS = {"latin": 20, "cjk": 6}


@dataclass(frozen=True)
class Candidate:
    """One sentence of a retrieved page."""

    page: int  # index into the pages
    start: int  # offsets into the page's text
    end: int
    text: str
    terms: frozenset[str]
    passage: int  # the rank of the best retrieved passage on its page
    inside: bool  # within a retrieved chunk
    pair: bool = False  # two adjacent sentences
    asked_before: frozenset[str] = frozenset()  # the terms of the sentence before, when it asks a question
    opens_page: bool = False  # starts with the page's first sentence
    features: dict[str, float] = dataclasses.field(default_factory=dict, compare=False)
    score: float = 0.0


@dataclass(frozen=True)
class Finding:
    """What the finder found: the quotes (best first; empty when none is sure enough) and
    every candidate scored (bench/ledger.py reads them)."""

    quotes: tuple[Quote, ...]
    kind: str
    candidates: tuple[Candidate, ...] = ()
    pages: tuple[SourcePage, ...] = ()
    more: tuple[Passage, ...] = ()  # each page's best sentence's chunk, where search returned another


@lang.compiled
def _asking() -> dict[tuple[str, str], re.Pattern[str]]:
    """Each language's pattern for each kind a question asks for (lexicon ``asks``); a Latin
    language's yes/no question opens with its verb."""
    out: dict[tuple[str, str], re.Pattern[str]] = {}
    for lexicon in lang.all_lexicons():
        for kind in KINDS:
            entries = [e for e in lexicon.asks.get(kind, ()) if e]
            if entries:
                body = "|".join(entries)
                pattern = rf"(?:{body})" if lexicon.script == "cjk" else rf"\b(?:{body})\b"
                if kind == "yesno" and lexicon.script != "cjk":
                    pattern = rf"^(?:{body})\b"
                out[(lexicon.code, kind)] = re.compile(pattern, re.IGNORECASE)
    return out


def question_kind(question: str, language: str) -> str:
    """What ``question`` asks for: one of :data:`KINDS`, or "" when its words do not say."""
    code = language if lang.get(language) is not None else lang.DEFAULT
    patterns = _asking()
    text = question.strip()
    return next((kind for kind in KINDS if (code, kind) in patterns and patterns[(code, kind)].search(text)), "")


_YEAR = re.compile(r"(?<!\d)(?:1[5-9]\d\d|20\d\d)(?!\d)")
_NUMERIC_DATE = re.compile(r"(?<!\d)\d{1,4}[./-]\d{1,2}[./-]\d{1,4}(?!\d)|\d+\s*[年月日号]")
_DIGIT = re.compile(r"\d")
_FIGURE = re.compile(r"\[?\d[\d,.]*%?\]?")
_QUOTED = re.compile(r"[\"“„«「『][^\"”“«»」』]{2,60}[\"”“»」』]")
_CAPITALISED = re.compile(r"(?<=[\w,;:)] )[A-Z][\w&.-]+")


@lang.compiled
def _months() -> re.Pattern[str]:
    names = [re.escape(name) for lex in lang.all_lexicons() for month in lex.months for name in month]
    return re.compile(rf"\b(?:{'|'.join(names)})\b" if names else r"(?!)")


@lang.compiled
def _gives() -> dict[str, re.Pattern[str]]:
    out: dict[str, re.Pattern[str]] = {}
    for kind in ("reason", "definition"):
        body = lang.pattern(lambda lex, k=kind: lex.gives.get(k, ()))  # type: ignore[misc]
        out[kind] = re.compile(body, re.IGNORECASE)
    return out


@lang.compiled
def _numerals() -> re.Pattern[str]:
    parts = []
    for lex in lang.all_lexicons():
        if lex.numerals and lex.numeral_units:
            parts.append(rf"[{re.escape(lex.numerals)}]+\s*(?:{'|'.join(lex.numeral_units)})")
    return re.compile("|".join(parts) if parts else r"(?!)")


def _counts_a_term(sentence: str, wanted: frozenset[str], question_numbers: Sequence[str]) -> bool:
    """Whether a number of ``sentence`` (not one the question names) counts one of the
    question's terms: "more than 2 connections", "10 Euro", "1.48 倍"."""
    for match in _FIGURE.finditer(sentence):
        if match.group().strip("[]") in question_numbers or match.group().startswith("["):
            continue
        after = termlib.tokenize(sentence[match.end():match.end() + 40])[:1]
        before = termlib.tokenize(sentence[max(0, match.start() - 30):match.start()])[-1:]
        if wanted & set(after + before):
            return True
    return False


def gives(kind: str, sentence: str, question_numbers: Sequence[str] = (),
          wanted: frozenset[str] = frozenset()) -> float:
    """+1 when ``sentence`` gives what a question of ``kind`` asks for, -1 when it plainly
    does not, 0 when the rules cannot tell (a Chinese name, a yes/no). For an amount, half
    when its number counts none of the question's terms (``wanted``)."""
    if kind == "date":
        return 1.0 if _YEAR.search(sentence) or _NUMERIC_DATE.search(sentence) or _months().search(sentence) else -1.0
    if kind == "amount":
        if not _DIGIT.search(sentence) and not _numerals().search(sentence):
            return -1.0
        if _counts_a_term(sentence, wanted, question_numbers):
            return 1.0
        own = [n for n in anchorlib.anchors(sentence, lang.DEFAULT).numbers if n not in question_numbers]
        return 0.5 if own or _numerals().search(sentence) or not question_numbers else 0.0
    if kind == "name":
        if _QUOTED.search(sentence) or _CAPITALISED.search(sentence):
            return 1.0
        return 0.0 if lang.CJK_CHAR.search(sentence) else -1.0
    if kind in ("reason", "definition"):
        return 1.0 if _gives()[kind].search(sentence) else 0.0
    return 0.0


def _pieces(text: str) -> list[tuple[int, int]]:
    return [(a, b) for a, b in evidence.sentence_spans(text, MAX_SENTENCE_CHARS) if text[a:b].strip()]


def _pages_of(passages: Sequence[Passage], pages: Sequence[SourcePage]) -> list[SourcePage]:
    """The pages in the order of their best passage; a passage whose page was not found
    stands for its page alone."""
    by_key = {(p.doc_id, p.page): p for p in pages}
    out: dict[tuple[str, int], SourcePage] = {}
    for passage in passages:
        key = (passage.doc_id, passage.page)
        if key in out:
            continue
        page = by_key.get(key)
        if page is None or page.text[passage.char_start:passage.char_end] != passage.text:
            page = SourcePage(passage.doc_id, passage.page, " " * passage.char_start + passage.text)
        out[key] = page
    return list(out.values())


def candidates(question: str, passages: Sequence[Passage], pages: Sequence[SourcePage]) -> list[Candidate]:
    """Every sentence of the retrieved passages' pages, once each, in page order."""
    ordered = _pages_of(passages, pages)
    out: list[Candidate] = []
    for p_index, page in enumerate(ordered):
        matched = [(rank, p) for rank, p in enumerate(passages) if (p.doc_id, p.page) == (page.doc_id, page.page)]
        best_rank = min(rank for rank, _ in matched)
        pieces = _pieces(page.text)
        terms = [frozenset(termlib.tokenize(page.text[start:end])) for start, end in pieces]
        spans = [(start, end, False, terms[i]) for i, (start, end) in enumerate(pieces)]
        # Two adjacent sentences as one more candidate: a sentence cut at a ";" or a line
        # break, or an answer that runs over two.
        spans += [(a[0], b[1], True, terms[i] | terms[i + 1])
                  for i, (a, b) in enumerate(zip(pieces, pieces[1:], strict=False)) if b[1] - a[0] <= MAX_PAIR_CHARS]
        asking = {pieces[i + 1][0]: terms[i] for i in range(len(pieces) - 1) if _ASKS.search(page.text[pieces[i][0]:pieces[i][1]])}
        for start, end, pair, held in spans:
            inside = any(p.char_start <= start and end <= p.char_end for _, p in matched)
            out.append(Candidate(p_index, start, end, page.text[start:end], held, best_rank, inside, pair,
                                 asking.get(start, frozenset()), bool(pieces) and start == pieces[0][0]))
    return out


def score(question: str, language: str, kind: str, found: Sequence[Candidate],
          meaning: Callable[[str, Sequence[str]], Sequence[float]] | None = None) -> list[Candidate]:
    """``found`` with their features and scores, best first."""
    if not found:
        return []
    wanted = set(termlib.tokenize(question))
    df = {t: sum(1 for c in found if t in c.terms) for t in wanted}
    weight = {t: math.log(1.0 + len(found) / df[t]) if df[t] else math.log(1.0 + len(found)) for t in wanted}
    total = sum(weight.values()) or 1.0
    marks = anchorlib.anchors(question, language)
    handles = [*marks.numbers, *marks.names]
    lexicon = lang.get(language)
    script = lexicon.script if lexicon is not None else "latin"
    scored: list[Candidate] = []
    for c in found:
        f = {
            "terms": sum(weight[t] for t in c.terms & wanted) / total,
            "anchors": (sum(1 for h in marks.numbers if anchorlib.holds_number(c.text, h))
                        + sum(1 for h in marks.names if h.lower() in c.text.lower())) / len(handles)
            if handles else 0.0,
            "kind": gives(kind, c.text, marks.numbers, frozenset(wanted)) if kind else 0.0,
            "meaning": 0.0,
            "inside": 1.0 if c.inside else 0.0,
            "rank": 1.0 / (1.0 + c.passage),
            "short": -1.0 if len(c.text.strip()) < MIN_CHARS[script] else 0.0,
            "listing": -1.0 if reads_as_listing(c.text) else 0.0,
            "fragment": -1.0 if _FRAGMENT.match(c.text.strip()) else 0.0,
            "noise": -1.0 if _noisy(c.text) else 0.0,
            "length": -len(c.text) / 300.0,
            "pair": -1.0 if c.pair else 0.0,
            "asks": -1.0 if _ASKS.search(c.text) else 0.0,
            "after_question": sum(weight[t] for t in c.asked_before & wanted) / total,
            "opens_page": -1.0 if c.opens_page else 0.0,
        }
        scored.append(dataclasses.replace(c, features=f, score=_total(f)))
    scored.sort(key=lambda c: -c.score)
    if meaning is not None:
        head = scored[:EMBEDDED]
        cosines = list(meaning(question, [c.text for c in head]))
        if cosines:
            middle = sorted(cosines)[len(cosines) // 2]
            head = [dataclasses.replace(c, features=(f := {**c.features, "meaning": cos - middle}), score=_total(f))
                    for c, cos in zip(head, cosines, strict=True)]
            scored = sorted(head, key=lambda c: -c.score) + scored[EMBEDDED:]
    return scored


_ASKS = re.compile(r"[?？]")
_FRAGMENT = re.compile(r"[a-zäöüß]|[)\]};:,.]|\d+[)\]]")
_SYMBOL = re.compile(r"[^\w\s]|\d", re.UNICODE)


def _noisy(text: str) -> bool:
    """Mostly symbols and digits: a formula, a table's rule, garbled extraction."""
    body = "".join(text.split())
    return len(body) >= 12 and len(_SYMBOL.findall(body)) > 0.45 * len(body)


def _total(features: dict[str, float]) -> float:
    return sum(WEIGHTS[name] * value for name, value in features.items())


def _refers_back(text: str, language: str) -> bool:
    lexicon = lang.get(language)
    if lexicon is None or not lexicon.references:
        return False
    body = "|".join(lexicon.references)
    pattern = rf"^\s*(?:{body})" if lexicon.script == "cjk" else rf"^\s*(?:{body})\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


def _parts(question: str, language: str) -> bool:
    """Whether ``question`` asks two things ("... and may the client ...?", "...？...吗？")."""
    lexicon = lang.get(language)
    if question.count("?") + question.count("？") >= 2:
        return True
    if lexicon is None:
        return False
    conjunctions = [c for c in lexicon.conjunctions if c]
    if not conjunctions:
        return False
    body = "|".join(conjunctions)
    joined = rf"(?:{body})" if lexicon.script == "cjk" else rf"\b(?:{body})\b"
    return re.search(joined, question, re.IGNORECASE) is not None


def choose(question: str, language: str, ranked: Sequence[Candidate],
           min_score: float = MIN_SCORE) -> list[tuple[int, int, int, float]]:
    """The quotes as (page index, start, end, score) in page offsets, best first."""
    if not ranked or ranked[0].score < min_score:
        return []
    best = ranked[0]
    start, end = best.start, best.end
    same_page = sorted((c for c in ranked if c.page == best.page and not c.pair), key=lambda c: c.start)
    position = next((i for i, c in enumerate(same_page) if c.start == best.start), 0)
    if position > 0 and _refers_back(best.text, language):
        start = same_page[position - 1].start  # "It ..." needs the sentence it points back at
    out = [(best.page, start, end, best.score)]
    if _parts(question, language):
        wanted = set(termlib.tokenize(question))
        stated = set().union(*(c.terms for c in ranked))  # a term no sentence holds cannot be answered
        left = (wanted & stated) - best.terms
        if left:
            for c in ranked[1:]:
                if c.score < min_score:
                    break
                if len(c.terms & left) >= SECOND_PART_SHARE * len(left) and not (c.page == best.page and c.start < end and start < c.end):
                    out.append((c.page, c.start, c.end, c.score))
                    break
    return out


def find(question: str, language: str, passages: Sequence[Passage], pages: Sequence[SourcePage],
         source_of: Callable[[SourcePage, int, int], Passage | None],
         meaning: Callable[[str, Sequence[str]], Sequence[float]] | None = None,
         min_score: float = MIN_SCORE) -> Finding:
    """The quotes for ``question`` among the pages of ``passages``. ``source_of(page, start,
    end)`` is the chunk of ``page`` that holds those offsets (the library's); ``meaning``
    weighs sentences against the question with the library's embedder."""
    kind = question_kind(question, language)
    ordered = _pages_of(passages, pages)
    found = candidates(question, passages, ordered)
    ranked = score(question, language, kind, found, meaning)
    quotes: list[Quote] = []
    for p_index, start, end, value in choose(question, language, ranked, min_score):
        page = ordered[p_index]
        source = source_of(page, start, end) or _passage_on(passages, page, start, end)
        if source is None:
            continue
        lo = max(0, start - source.char_start)
        hi = min(len(source.text), end - source.char_start)
        if hi > lo:
            quotes.append(Quote(source=source, span=(lo, hi), score=round(value, 4), kind=kind))
    # The right page, the wrong chunk: each page's best sentence is given to the model too.
    more: list[Passage] = []
    have = {p.chunk_id for p in passages} | {q.source.chunk_id for q in quotes}
    for p_index, page in enumerate(ordered):
        best = next((c for c in ranked if c.page == p_index), None)
        if best is None or best.inside:
            continue
        source = source_of(page, best.start, best.end)
        if source is not None and source.chunk_id not in have:
            have.add(source.chunk_id)
            more.append(source)
    return Finding(tuple(quotes), kind, tuple(ranked), tuple(ordered), tuple(more))


def _passage_on(passages: Sequence[Passage], page: SourcePage, start: int, end: int) -> Passage | None:
    """The retrieved passage of ``page`` that overlaps ``start:end`` the most."""
    best: tuple[int, Passage] | None = None
    for p in passages:
        if (p.doc_id, p.page) != (page.doc_id, page.page):
            continue
        overlap = min(end, p.char_end) - max(start, p.char_start)
        if overlap > 0 and (best is None or overlap > best[0]):
            best = (overlap, p)
    return best[1] if best else None


def chunk_holding(page: SourcePage, start: int, end: int) -> int | None:
    """The key of ``page``'s chunk that holds ``start:end`` whole (else the one that holds
    the most of it)."""
    overlaps = [((c_start <= start and end <= c_end), min(end, c_end) - max(start, c_start), ckey)
                for ckey, c_start, c_end in page.chunks]
    held = [o for o in overlaps if o[1] > 0]
    return max(held, key=lambda o: (o[0], o[1]))[2] if held else None


def with_quotes(passages: Sequence[Passage], found: Found) -> tuple[list[Passage], dict[str, tuple[Span, ...]]]:
    """The sources the model reads: each quote's chunk first (in the quotes' order), then
    the other passages in their order, then ``found.more`` (the chunks holding each page's
    best sentence); a chunk is never repeated, and a retrieved chunk of a quoted page reads
    after the others. Returns the passages and, by chunk id, the spans each must keep in
    what the model reads."""
    quotes = found.quotes
    must: dict[str, list[Span]] = {}
    first: list[Passage] = []
    for quote in quotes:
        source = dataclasses.replace(quote.source, score=max((p.score for p in passages
                                                               if p.chunk_id == quote.source.chunk_id), default=0.0))
        must.setdefault(source.chunk_id, []).append(quote.span)
        if all(p.chunk_id != source.chunk_id for p in first):
            first.append(source)
    quoted_pages = {(p.doc_id, p.page) for p in first}
    rest = [p for p in passages if p.chunk_id not in must and (p.doc_id, p.page) not in quoted_pages]
    # A retrieved chunk of a quoted page that is not the quote's chunk still reads after the others.
    rest += [p for p in passages if p.chunk_id not in must and (p.doc_id, p.page) in quoted_pages]
    given = {p.chunk_id for p in first + rest}
    rest += [p for p in found.more if p.chunk_id not in given]
    return first + rest, {k: tuple(v) for k, v in must.items()}


class PageFinder:
    """The answer finder over the library: reads the retrieved passages' pages from
    ``index`` and weighs meaning with ``embedder`` (the library's own; None: rules alone).
    Satisfies core/stages.AnswerFinder."""

    def __init__(self, index: SearchIndex, embedder: Embedder | None = None, min_score: float = MIN_SCORE) -> None:
        self._index = index
        self._embedder = embedder
        self._min_score = min_score
        self.last: Finding | None = None  # the last finding, candidates and all (bench/ledger.py)

    def _meaning(self, question: str, sentences: Sequence[str]) -> Sequence[float]:
        if self._embedder is None or not sentences:
            return []
        import numpy as np

        q = self._embedder.embed_queries([question])
        s = self._embedder.embed_passages(list(sentences))
        return [float(x) for x in np.asarray(s @ q[0]).ravel()]

    def find(self, question: str, language: str, passages: Sequence[Passage]) -> Found:
        pages = self._index.source_pages([(p.doc_id, p.page) for p in passages])
        # Every chunk of those pages in one query: the quote's and each page's best sentence's.
        chunks = self._index.passages([ckey for page in pages.values() for ckey, _, _ in page.chunks])

        def source_of(page: SourcePage, start: int, end: int) -> Passage | None:
            ckey = chunk_holding(page, start, end)
            return chunks.get(ckey) if ckey is not None else None

        finding = find(question, language, passages, list(pages.values()), source_of,
                       self._meaning if self._embedder is not None else None, self._min_score)
        self.last = finding
        return Found(finding.quotes, finding.more)
