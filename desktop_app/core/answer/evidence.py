"""Evidence, not chunks: each retrieved passage cut to the sentences that bear on the
question before the prompt is built. Qt-free, no asyncio, pure.

A passage is split into units with core/text/sentences.py (sentences; a table row with
two numeric columns is a unit of its own). Each unit is scored by the question's terms it
holds, weighted by how rare each term is among the units of this request (a word every
passage repeats, like the company's name, counts little). Each passage's best unit is
taken first (best first), then the other units by score, each with one unit of context
either side, until ``budget_tokens`` are spent; every
passage keeps its units in its own order. What is kept is a set of exact character spans
of ``passage.text`` (``Passage.read``), so a citation highlights exactly what the model
read and the viewer can draw the whole chunk faintly around it.

A passage that adds nothing new is dropped: one whose kept words are already in an
earlier passage's evidence (a near-duplicate, or a second chunk of the same page repeating
the first), and one in which no unit holds a term of the question while others do.

The budget (:data:`EVIDENCE_TOKENS`) trades the share of questions whose evidence holds
the gold answer against the length of the request the model reads (each 80 tokens more
cost the first word about a second on two cores); ``bench/evidence.py`` measures both on
the corpus and eval questions (three languages).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from desktop_app.core.text import words as termlib
from desktop_app.core.text.sentences import split_sentences
from desktop_app.core.types import Passage, Span

# Tokens of evidence over all passages of one prompt (bench/evidence.py, tuning half).
EVIDENCE_TOKENS = 280
CONTEXT_UNITS = 1  # units of context kept either side of a unit that bears on the question
SEPARATOR = " … "  # between two pieces of one passage that are not adjacent
DUPLICATE_CONTAINMENT = 0.8  # share of a passage's kept words already given: nothing new
MAX_UNIT_CHARS = 320  # a longer "sentence" (a run-on table, a list) is cut into pieces


@dataclass(frozen=True)
class _Unit:
    passage: int  # index into the passages
    index: int  # position within its passage
    start: int
    end: int
    terms: frozenset[str]


def sentence_spans(text: str, max_chars: int = MAX_UNIT_CHARS) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of ``text`` (a table row with two numeric columns is
    one), a longer one than ``max_chars`` cut at a space near the limit."""
    spans: list[tuple[int, int]] = []
    for sentence in split_sentences(text, table_rows=True):
        start, end = sentence.start, sentence.end
        while end - start > max_chars:  # cut at a space near the limit
            cut = text.rfind(" ", start + max_chars // 2, start + max_chars)
            cut = cut if cut > start else start + max_chars
            spans.append((start, cut))
            start = cut + 1 if text[cut : cut + 1] == " " else cut
        if end > start:
            spans.append((start, end))
    return spans


def evidence_text(passage: Passage) -> str:
    """What the model reads of ``passage``: its ``read`` spans joined by ``…`` where a gap
    lies between them (the whole text when it has none)."""
    if not passage.read:
        return passage.text
    parts: list[str] = []
    previous_end = -1
    for start, end in passage.read:
        piece = passage.text[start:end]
        if parts and previous_end < start and passage.text[previous_end:start].strip():
            parts.append(SEPARATOR)
        elif parts:
            parts.append(" ")
        parts.append(piece)
        previous_end = end
    head = "… " if passage.read[0][0] > 0 and passage.text[: passage.read[0][0]].strip() else ""
    tail = " …" if passage.text[passage.read[-1][1] :].strip() else ""
    return head + "".join(parts) + tail


def _merge(spans: Sequence[tuple[int, int]], text: str) -> tuple[Span, ...]:
    """Sorted spans, two that only whitespace separates made one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and not text[merged[-1][1] : start].strip():
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def select(
    question: str,
    passages: Sequence[Passage],
    *,
    budget_tokens: int = EVIDENCE_TOKENS,
    count_tokens: Callable[[str], int] = termlib.estimate_tokens,
    context_units: int = CONTEXT_UNITS,
    context_first: bool = False,
    must: Mapping[str, Sequence[Span]] | None = None,
) -> list[Passage]:
    """The passages worth reading, in their order, each with ``read`` set to the spans of
    its text that bear on ``question`` (plus context), under ``budget_tokens`` in all.

    The best unit of the best passage is always kept, whatever it costs. A budget of 0 or
    less keeps every passage whole (the old path). ``context_first`` is the order of the
    previous version (each passage's best unit with its context before any second unit),
    kept for bench/evidence.py's comparison. ``must`` (chunk id -> spans of its text) is
    what the model must read whatever it costs: the answer finder's quotes
    (core/answer/finder.py), kept first, with their passages never dropped."""
    if budget_tokens <= 0 or not passages:
        return list(passages)
    must = must or {}
    wanted = set(termlib.tokenize(question))
    units: list[list[_Unit]] = []
    for p_index, passage in enumerate(passages):
        units.append([
            _Unit(p_index, u_index, start, end, frozenset(termlib.tokenize(passage.text[start:end])))
            for u_index, (start, end) in enumerate(sentence_spans(passage.text))
        ])
    every = [u for row in units for u in row]
    if not every:
        return []
    # A question term's weight: rarer among this request's units, heavier.
    df = {t: sum(1 for u in every if t in u.terms) for t in wanted}
    weight = {t: math.log(1.0 + len(every) / df[t]) for t in wanted if df[t]}

    def score(unit: _Unit) -> float:
        return sum(weight.get(t, 0.0) for t in unit.terms & wanted)

    scored = sorted(((score(u), u) for u in every), key=lambda su: (-su[0], su[1].passage, su[1].index))
    any_match = scored[0][0] > 0
    costs: dict[tuple[int, int], int] = {}

    def cost(unit: _Unit) -> int:
        key = (unit.passage, unit.index)
        if key not in costs:
            costs[key] = count_tokens(passages[unit.passage].text[unit.start : unit.end])
        return costs[key]

    # Every passage's best unit first (best passage first): a passage further down the list
    # often holds the answer in one sentence. Then every matching unit by score, each with
    # its context, wherever it is: giving each passage's first unit its context before the
    # second-best units of the top passage spent the budget on neighbours and cut the
    # sentence that answered (bench/evidence.py, tuning half).
    matched = [u for s, u in scored if s > 0]
    firsts: dict[int, _Unit] = {}
    for unit in matched:
        firsts.setdefault(unit.passage, unit)
    order = [(u, 0) for u in firsts.values()]
    if context_first:
        order += [(u, context_units) for u in firsts.values()]
        order += [(u, context_units) for u in matched if firsts[u.passage] is not u]
    else:
        order += [(u, context_units) for u in matched]
    if not any_match:
        order = [(units[0][0], 0)]
    kept: dict[int, set[int]] = {}
    spent = 0
    for p_index, passage in enumerate(passages):  # the quotes first, whatever they cost
        for start, end in must.get(passage.chunk_id, ()):
            for unit in units[p_index]:
                if unit.start < end and start < unit.end:
                    kept.setdefault(p_index, set()).add(unit.index)
                    spent += cost(unit)
    for unit, around in order:
        row = units[unit.passage]
        have = kept.setdefault(unit.passage, set())
        for i in [unit.index] + [j for d in range(1, around + 1) for j in (unit.index - d, unit.index + d)]:
            if unit.index not in have and i != unit.index:
                break  # no context for a unit that did not fit
            if 0 <= i < len(row) and i not in have and (not spent or spent + cost(row[i]) <= budget_tokens):
                have.add(i)
                spent += cost(row[i])
    out: list[Passage] = []
    given: set[str] = set()
    for p_index, passage in enumerate(passages):
        chosen = sorted(kept.get(p_index, ()))
        if not chosen:
            continue
        row = units[p_index]
        words = set().union(*(row[i].terms for i in chosen))
        quoted = list(must.get(passage.chunk_id, ()))
        if out and words and not quoted and len(words & given) >= DUPLICATE_CONTAINMENT * len(words):
            continue  # adds nothing new
        given |= words
        spans = _merge([(row[i].start, row[i].end) for i in chosen] + quoted, passage.text)
        out.append(dataclasses.replace(passage, read=spans))
    return out
