"""Per-sentence trust: check each factual sentence of an answer against the passages it
cites. Qt-free, no asyncio. Splitting is core/text/sentences.py, the marker grammar
core/text/markers.py, words and stemming core/text/words.py, "is it factual" and numbers
core/answer/claims.py.

The default scorer is fast and deterministic: content-word coverage (stopwords removed,
light English stemming), CJK character bigrams (and, at half weight, characters), number
and unit agreement (a number the passage does not state makes the claim unsupported), and,
when an ``embed`` callable is given, the cosine between the sentence and each passage
sentence. It also returns the passage sentences that best support the claim: the viewer
highlights those most strongly (sub-chunk localisation).

Thresholds were calibrated on the hand-made English/Chinese pairs in
``tests/core/test_verify.py`` (and, for the cosine, on all-MiniLM-L6-v2 int8).
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from desktop_app.core.answer import meaning
from desktop_app.core.answer.claims import (
    Number,
    is_factual,
    missing_numbers,
    numbers_in,
    plain_text,
)
from desktop_app.core.text.markers import find_markers, unclosed_marker_start
from desktop_app.core.text.sentences import (
    Sentence,
    attach_citations,
    has_words,
    split_from,
    split_sentences,
)
from desktop_app.core.text.words import CJK_CHAR, CJK_RANGES, CLAIM_STOPWORDS, stem
from desktop_app.core.types import Citations, ClaimVerdict, Span, Verdict, all_unsupported

__all__ = [
    "PARTIAL_MIN", "SUPPORTED_MIN", "ClaimScore", "Sentence", "StreamingVerifier",
    "all_unsupported", "attach_citations", "find_markers", "is_factual", "score_claim",
    "split_sentences", "verify_answer",
]

logger = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], np.ndarray]

# ----------------------------------------------------------------- calibrated constants
SUPPORTED_MIN = 0.70  # score at or above: the cited passage states the claim
PARTIAL_MIN = 0.35  # score at or above (and below SUPPORTED_MIN): part of the claim is there
SUGGEST_MIN = 0.70  # an uncited (or unsupported) sentence gets a suggested source from here
NUMBER_MISMATCH_CAP = 0.20  # a claim with a number the passage lacks scores at most this
MAX_SUPPORT_SENTENCES = 3  # passage sentences combined to cover one claim
MIN_SUPPORT_GAIN = 0.15  # a further passage sentence must add this much coverage
CJK_CHAR_WEIGHT = 0.5  # single CJK characters count half as much as bigrams
COS_FLOOR, COS_CEIL = 0.50, 0.90  # MiniLM cosine mapped linearly onto [0, 1] between these
EMBED_WEIGHT = 0.5  # the embedding's share when it raises the lexical score
# The default embedder (all-MiniLM-L6-v2) is English-only: on Chinese claims its cosine was
# noise (0.73 for an unrelated pair), so it is consulted only for mostly-Latin claims.
EMBED_MIN_LATIN_SHARE = 0.5
LIGHT_WEIGHT = 0.5  # generic words ("value", "resulted", "signals") count half
ANCHOR_MIN = 0.55  # a claim whose distinctive number the passage states with the same noun
# is supported from this coverage on ("This resulted in 21,015,324 passages")
CONTRADICTION_CAP = 0.10  # score of a claim the passage contradicts
MAIN_SENTENCE_MIN = 0.5  # a supported claim has one passage sentence stating this much of it
MAX_UNMATCHED = 0.5  # content words (1 each; CJK bigrams 1/2) a supported claim may lack
SUGGEST_PREFILTER = 20  # at most this many candidates (by word overlap) get a full score

# ----------------------------------------------------------------- text analysis
_CN_PARTICLES = "的了着吗呢吧啊呀"
_CN_FUNCTION_CHARS = frozenset(
    "的了着吗呢吧啊呀是在和与及或也都就而之其这那为对被把将于以等中有个上下一"
)
_CN_META = re.compile(
    r"根据(提供的|所给的|上述|以上)?(资料|文档|文件|材料|来源|上下文|内容|规定)?[，,]?|"
    r"(资料|文档|文件|材料|来源)(中)?(显示|表明|指出|提到|所述|记载)[，,：:]?"
)
_UP_RE = re.compile(
    r"\b(?:increas\w*|rose|ris(?:e|es|en|ing)|gr[eo]w\w*|up|higher|gain\w*|improv\w*)\b|"
    r"增长|增加|上升|提高|上涨|提升|增幅"
)
_DOWN_RE = re.compile(
    r"\b(?:decreas\w*|declin\w*|fell|fall\w*|drop\w*|down|lower|loss\w*|reduc\w*)\b|"
    r"下降|减少|降低|下跌|下滑|降幅|亏损"
)
_CN_NUMERALS = frozenset("零〇一二两三四五六七八九十百千万亿")
_CLAUSE_RE = re.compile(r"[^,，;；:：。!?！？]+")
# Words that name the kind of statement, not its content: a claim that leaves them out or
# uses another one says the same thing ("a value of 126 signals" / "if 126, ... are").
_LIGHT_WORDS = frozenset(
    """value values field fields signal signals signaled signalled indicate indicates indicated
    mean means meant result results resulted resulting use uses used using make makes made
    show include includes included including contain contains contained number numbers long
    total specific specifically called known given set sets type types kind way ways case
    cases example order part parts go goes went gone get gets got take takes took taken come
    comes came become becomes became against toward towards across along among around beyond
    despite except inside outside near throughout""".split()
)
_LIGHT_STEMS = frozenset(stem(w) for w in _LIGHT_WORDS)


def _units(text: str) -> dict[str, float]:
    """Content units and their weights: stemmed words, CJK bigrams, CJK characters (half)."""
    text = _CN_META.sub(" ", unicodedata.normalize("NFKC", text).lower())
    units: dict[str, float] = {}
    for word in re.findall(r"[a-zäöüß][a-z0-9äöüß]*", text):
        root = stem(word)
        if len(root) > 1 and root not in CLAIM_STOPWORDS and word not in CLAIM_STOPWORDS:
            units[root] = LIGHT_WEIGHT if word in _LIGHT_WORDS else 1.0
    for number in numbers_in(text):  # a number is content: "#21015324"
        units["#" + max(number.values, key=len)] = 1.0
    for run in re.findall(f"[{CJK_RANGES}]+", text):
        for part in re.split(f"[{_CN_PARTICLES}]", run):
            for a, b in zip(part, part[1:], strict=False):
                units[a + b] = 1.0
            for ch in part:
                if ch not in _CN_FUNCTION_CHARS:
                    units.setdefault(ch, CJK_CHAR_WEIGHT)
    return units


@dataclass(frozen=True)
class _Analysed:
    spans: tuple[Span, ...]
    texts: tuple[str, ...]
    units: tuple[frozenset[str], ...]
    all_units: frozenset[str]
    numbers: tuple[Number, ...]


@functools.lru_cache(maxsize=1024)
def _analyse(passage: str) -> _Analysed:
    sentences = split_sentences(passage, table_rows=True) or [Sentence(0, len(passage), passage)]
    units = tuple(frozenset(_units(s.text)) for s in sentences)
    return _Analysed(
        spans=tuple((s.start, s.end) for s in sentences),
        texts=tuple(plain_text(s.text) for s in sentences),
        units=units,
        all_units=frozenset().union(*units),
        numbers=tuple(numbers_in(passage)),
    )


def _direction(text: str) -> int:
    low = text.lower()
    return int(bool(_UP_RE.search(low))) - int(bool(_DOWN_RE.search(low)))


# ----------------------------------------------------------------- scoring one claim
@dataclass(frozen=True)
class ClaimScore:
    verdict: Verdict  # SUPPORTED, PARTIAL, UNSUPPORTED or CONTRADICTED
    score: float  # in [0, 1]
    support: tuple[Span, ...]  # best-supporting passage sentences, offsets into the passage
    reason: str
    coverage: float = 0.0  # share of the claim's content units found in ``support``
    cosine: float | None = None  # best sentence cosine, when an embedder was given
    quote: str = ""  # the passage's words that contradict the claim (or make it conditional)


def _unmatched(units: Mapping[str, float], covered: set[str], passage: frozenset[str]) -> float:
    """Content words of the claim the passage lacks: words count 1 (generic ones never),
    CJK bigrams 1/2 when one of their characters is not in the passage (a bigram across a
    word boundary, "入为", is not a word), single CJK characters and numbers not at all
    (numbers are checked by value)."""
    total = 0.0
    for unit, weight in units.items():
        if unit in covered or unit.startswith("#") or weight < 1.0:
            continue
        if CJK_CHAR.match(unit):
            if any(ch not in passage and ch not in _CN_NUMERALS for ch in unit):
                total += 0.5
            continue
        total += 1.0
    return total


def _verdict_for(score: float) -> Verdict:
    if score >= SUPPORTED_MIN:
        return Verdict.SUPPORTED
    return Verdict.PARTIAL if score >= PARTIAL_MIN else Verdict.UNSUPPORTED


def _cosines(embed: Embed, claim: str, texts: Sequence[str]) -> np.ndarray:
    vectors = np.asarray(embed([claim, *texts]), dtype=np.float32)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    cosines: np.ndarray = vectors[1:] @ vectors[0]
    return cosines


def score_claim(sentence: str, passage: str, embed: Embed | None = None) -> ClaimScore:
    """How well ``passage`` supports ``sentence`` (markers in the sentence are ignored)."""
    claim = plain_text(sentence)
    units = _units(claim)
    total = sum(units.values())
    p = _analyse(passage)
    picks: list[int] = []
    covered: set[str] = set()
    for _ in range(MAX_SUPPORT_SENTENCES):
        gains = [
            sum(units[u] for u in units.keys() & p.units[i] if u not in covered)
            if i not in picks
            else -1.0
            for i in range(len(p.spans))
        ]
        best = max(range(len(gains)), key=gains.__getitem__)
        if total == 0 or gains[best] <= 0 or picks and gains[best] / total < MIN_SUPPORT_GAIN:
            break
        picks.append(best)
        covered |= units.keys() & p.units[best]
    coverage = sum(units[u] for u in covered) / total if total else 0.0
    score, cosine = coverage, None
    latin = sum(w for u, w in units.items() if not CJK_CHAR.search(u))
    if embed is not None and total and latin / total >= EMBED_MIN_LATIN_SHARE:
        cos = _cosines(embed, claim, p.texts)
        top = int(np.argmax(cos))
        cosine = float(cos[top])
        lifted = EMBED_WEIGHT * min(max((cosine - COS_FLOOR) / (COS_CEIL - COS_FLOOR), 0.0), 1.0)
        lifted += (1 - EMBED_WEIGHT) * coverage
        if lifted > score:
            score = lifted
            picks = [top, *(i for i in picks if i != top)]
    claim_numbers = numbers_in(claim)
    if total == 0 and claim_numbers:
        score = 1.0 if not missing_numbers(claim_numbers, p.numbers) else 0.0
    support = tuple(sorted(p.spans[i] for i in picks))
    picked = [p.texts[i] for i in picks]
    missing = missing_numbers(claim_numbers, p.numbers)
    if missing:
        other = _other_number(claim, units, missing, claim_numbers, picked)
        if other is not None:
            reason = f"the passage gives another number than {', '.join(missing)}"
            reason += f"; the passage says: {other}"
            return ClaimScore(Verdict.CONTRADICTED, min(score, CONTRADICTION_CAP), support,
                              reason, coverage, cosine, quote=other)
        stated = ", ".join(dict.fromkeys(n.surface for n in p.numbers)) or "none"
        reason = f"the passage does not state {', '.join(missing)} (numbers there: {stated[:80]})"
        score = min(score, NUMBER_MISMATCH_CAP)
        return ClaimScore(Verdict.UNSUPPORTED, score, support, reason, coverage, cosine)
    moved = _number_elsewhere(units, claim_numbers, p.texts)
    if moved is not None:
        reason = f"the passage states it with another number; the passage says: {moved}"
        return ClaimScore(Verdict.CONTRADICTED, min(score, CONTRADICTION_CAP), support, reason,
                          coverage, cosine, quote=moved)
    paired = _paired_otherwise(claim_numbers, p.texts)
    if paired is not None:
        reason = f"the passage pairs the claim's numbers otherwise; the passage says: {paired}"
        return ClaimScore(Verdict.CONTRADICTED, min(score, CONTRADICTION_CAP), support, reason,
                          coverage, cosine, quote=paired)
    elsewhere = _misattached(claim, claim_numbers, p.texts)
    if elsewhere is not None:
        reason = f"the passage states the number of another thing; the passage says: {elsewhere}"
        return ClaimScore(Verdict.UNSUPPORTED, min(score, NUMBER_MISMATCH_CAP), support, reason,
                          coverage, cosine, quote=elsewhere)
    reason = f"{coverage:.0%} of the claim's content found in {len(picks)} passage sentence(s)"
    if cosine is not None:
        reason += f"; closest sentence cosine {cosine:.2f}"
    if claim_numbers:
        reason += "; numbers agree"
        if SUPPORTED_MIN > score >= ANCHOR_MIN and _anchored(claim, claim_numbers, units, p.texts):
            score = SUPPORTED_MIN
            reason += ", stated with the same words"
    verdict = _verdict_for(score)
    if verdict is Verdict.SUPPORTED and picks and total and (
        sum(units[u] for u in units.keys() & p.units[picks[0]]) / total < MAIN_SENTENCE_MIN
    ):
        verdict, score = Verdict.PARTIAL, min(score, SUPPORTED_MIN - 0.01)
        reason += "; no passage sentence states most of it"
    if _repeats(claim):
        return ClaimScore(Verdict.UNSUPPORTED, 0.0, support, "the sentence repeats itself",
                          coverage, cosine)
    if _fragment(claim):
        return ClaimScore(Verdict.UNSUPPORTED, min(score, PARTIAL_MIN - 0.01), support,
                          "not a whole sentence: it states no complete claim", coverage, cosine)
    unmatched = _unmatched(units, covered, p.all_units)
    if verdict is not Verdict.UNSUPPORTED and picks:
        named = _other_name(claim, p.all_units, p.texts[picks[0]])
        if named is not None:
            reason = f"the passage names {named[1]}, not {named[0]}"
            return ClaimScore(Verdict.UNSUPPORTED, min(score, PARTIAL_MIN - 0.01), support, reason,
                              coverage, cosine, quote=" ".join(p.texts[picks[0]].split()))
    if verdict is Verdict.SUPPORTED and unmatched > MAX_UNMATCHED and "same words" not in reason:
        # a content word the passage does not have: "refused" for "agreed", "little-endian"
        # for "network": a lexical scorer cannot tell a paraphrase from a change; amber, and
        # the judge decides
        verdict, score = Verdict.PARTIAL, min(score, SUPPORTED_MIN - 0.01)
        reason += f"; {unmatched:g} content word(s) of the claim not in the passage"
    if _direction_conflict(claim, claim_numbers, picked):
        reason = "the passage states the number with the opposite direction (rise vs fall)"
        return ClaimScore(Verdict.CONTRADICTED, min(score, CONTRADICTION_CAP), support, reason,
                          coverage, cosine)
    if verdict is not Verdict.UNSUPPORTED:
        found = meaning.conflict(claim, p.texts, _units, p.texts)
        if found is not None:
            verdict = Verdict.CONTRADICTED if found.opposite else Verdict.UNSUPPORTED
            cap = CONTRADICTION_CAP if found.opposite else PARTIAL_MIN - 0.01
            return ClaimScore(verdict, min(score, cap), support, found.reason(), coverage, cosine,
                              quote=found.quote)
    ticked = meaning.ticked_box(claim, p.texts, _units) if verdict is not Verdict.UNSUPPORTED else None
    if ticked is not None and ticked[0]:
        # the box the passage ticked says what the claim says: no second opinion needed
        reason += f"; the passage ticks the box the claim states: {ticked[1]}"
        return ClaimScore(verdict, min(max(score, 0.0), 1.0), support, reason, coverage, cosine,
                          quote=ticked[1])
    if verdict is Verdict.UNSUPPORTED and bool(CJK_CHAR.search(claim)) != bool(
        CJK_CHAR.search(passage)
    ):
        reason += "; claim and passage are in different scripts"
    return ClaimScore(verdict, min(max(score, 0.0), 1.0), support, reason, coverage, cosine)


def _repeats(claim: str) -> bool:
    """A phrase said again at once ("the system the system"), a phrase of five or more
    words said twice, or a run of Chinese characters said again at once: generated
    nonsense, not a claim."""
    low = claim.lower()
    return bool(
        re.search(r"(\b\w+(?:\W+\w+){1,5}\b)\W+\1\b", low)
        or re.search(r"(\b\w+(?:\W+\w+){4,}\b).*\b\1\b", low)
        or re.search(f"([{CJK_RANGES}]{{3,}})\\1", low)
    )


_FRAGMENT_START = re.compile(
    r"^(?:and|or|but|nor|which|whose|whom|than|because|whereas|of|to|for|with|by|from|the|a|an)\b")
_FRAGMENT_END = re.compile(
    r"\b(?:the|a|an|of|to|and|or|for|with|by|from|in|on|at|is|are|was|were|that|which)\W*$"
    r"|[和与及或对把被]\W*$")


def _fragment(claim: str) -> bool:
    """A piece of a sentence: it starts mid-sentence (a lower-case "and", "which", "of"...)
    or breaks off after a word that needs more ("... of the")."""
    text = re.sub(r"\s*\[[^\]]*\]\s*", " ", claim).strip()
    return bool(_FRAGMENT_START.match(text) or _FRAGMENT_END.search(text.rstrip(".。!！ ")))


def _after(text: str, number: Number) -> str:
    """The noun that follows ``number`` in ``text`` ("21,015,324 passages": "passag"); ""
    when a unit follows it (units are compared by :func:`missing_numbers`)."""
    if number.unit is not None:
        return ""
    figure = re.match(r"[$€£¥]?\s?[\d.,*×]*\d[\d.,*×a-z]*?(?=\s|$|[^\d.,*×])", number.surface)
    if figure is None:
        return ""
    low = unicodedata.normalize("NFKC", plain_text(text)).lower()
    m = re.search(r"(?<![\d.,])" + re.escape(figure.group()) + r"[\s-]*([a-z]+|[\u4e00-\u9fff]{1,2})", low)
    return stem(m.group(1)) if m else ""


def _anchored(claim: str, numbers: Sequence[Number], units: Mapping[str, float],
              texts: Sequence[str]) -> bool:
    """Whether one passage sentence states every number of the claim, each with the noun the
    claim gives it or beside other words of the claim."""
    for text in texts:
        stated = numbers_in(text)
        if missing_numbers(numbers, stated):
            continue
        words = sum(w for u, w in _units(text).items() if u in units and not u.startswith("#"))
        nouns = all(
            any(_after(claim, n) and _after(claim, n) == _after(text, m)
                for m in stated if m.values & n.values)
            for n in numbers
        )
        if nouns and words >= 0:
            return True
    return False


def _paired_otherwise(numbers: Sequence[Number], texts: Sequence[str]) -> str | None:
    """The passage sentence that gives one of the claim's numbers with another number of a
    unit the claim also gives ("if 127 ... a 64-bit integer" for "127 ... 16 bits"), when no
    sentence gives it with the claim's."""
    for number in numbers:
        if number.unit == "year" or _is_year(number):
            continue  # a year dates a whole passage: it anchors nothing
        kinds = {n.unit for n in numbers
                 if n is not number and n.unit is not None and n.unit != "year" and not _is_year(n)}
        if not kinds:
            continue
        agree, disagree = False, None
        for text in texts:
            stated = numbers_in(text)
            if not any(m.values & number.values for m in stated):
                continue
            for unit in kinds:
                theirs = {v for m in stated if m.unit == unit and not m.values & number.values
                          for v in m.values}
                mine = {v for n in numbers if n.unit == unit for v in n.values}
                if theirs & mine or not theirs:
                    agree = agree or bool(theirs & mine)
                elif disagree is None:
                    disagree = " ".join(text.split())
        if disagree is not None and not agree:
            return disagree
    return None


_NAME_RE = re.compile(r"(?<![.!?:]\s)(?<!^)(?<![\w-])([A-Z][A-Za-z]+(?:[ -][A-Z][A-Za-z]+)*)")
_NOT_NAMES = frozenset("must must not should may shall required recommended optional".split())


def _names(text: str) -> list[str]:
    """Capitalised words not at the start of a sentence (names: "Andreas Gal", "Mozilla")."""
    return [m.group(1) for m in _NAME_RE.finditer(text.strip())
            if m.group(1).lower() not in _NOT_NAMES and not m.group(1).isupper()]


def _other_name(claim: str, passage: frozenset[str], best: str) -> tuple[str, str] | None:
    """(the claim's name the passage lacks, the name the passage's best sentence gives
    instead): "Brendan Eich" where the passage has "Andreas Gal". German capitalises every
    noun: not for German claims."""
    if re.search(r"[äöüß]|\b(?:der|die|das|und|ist|nicht|wird|eine?)\b", claim):
        return None
    low = claim.lower()
    missing = [n for n in _names(claim) if not any(stem(w) in passage for w in n.lower().split())]
    if not missing:
        return None
    theirs = [n for n in _names(best) if n.lower() not in low]
    return (missing[0], theirs[0]) if theirs else None


def _number_elsewhere(units: Mapping[str, float], numbers: Sequence[Number],
                      texts: Sequence[str]) -> str | None:
    """The passage sentence that states the claim with another number of the same kind,
    when the claim's number is stated only about something else ("OpenType in 1994": 1994
    is TrueType GX's year; OpenType's is 1996)."""
    words = {u: w for u, w in units.items() if not u.startswith("#")}
    total = sum(words.values())
    if not total or not numbers:
        return None
    shares = [sum(w for u, w in words.items() if u in _units(t)) / total for t in texts]
    for number in numbers:
        stating = [i for i, t in enumerate(texts) if any(m.values & number.values for m in numbers_in(t))]
        if not stating or max(shares[i] for i in stating) >= 0.4:
            continue
        best = max(range(len(texts)), key=shares.__getitem__)
        kind = "year" if _is_year(number) else number.unit
        others = [m for m in numbers_in(texts[best]) if not m.values & number.values
                  and ("year" if _is_year(m) else m.unit) == kind]
        if shares[best] >= 0.7 and others:
            return " ".join(texts[best].split())
    return None


def _is_year(number: Number) -> bool:
    return any(v.isdigit() and 1900 <= int(v) <= 2100 for v in number.values)


# a number after one of these names a thing ("section 112", "第 5 条"): what follows it is
# no noun of the number's
_LABELLED = re.compile(
    r"\b(?:section|sec|article|art|chapter|part|page|p|line|table|fig|figure|form|rule|item|no|step"
    r"|version|v|title|pub|publication|rfc|schedule|box)\.?\s*$|第\s*$", re.IGNORECASE)


def _misattached(claim: str, numbers: Sequence[Number], texts: Sequence[str]) -> str | None:
    """The passage sentence that states a claim's number of another noun ("21,015,324
    questions" where the passage has "21,015,324 passages"), when no sentence that states
    the number names the claim's noun."""
    for number in numbers:
        noun = _after(claim, number)
        if not noun or noun in CLAIM_STOPWORDS or noun in _LIGHT_STEMS or _LABELLED.search(
            plain_text(claim).lower().split(number.surface.lower())[0][-12:]
        ):
            continue
        stating = [t for t in texts if any(m.values & number.values for m in numbers_in(t))]
        if not stating or any(noun in _units(t) for t in stating):
            continue
        others = {_after(t, m) for t in stating for m in numbers_in(t) if m.values & number.values}
        if noun not in others and others and all(o and o not in _LIGHT_STEMS for o in others):
            return " ".join(stating[0].split())
    return None


def _other_number(claim: str, units: Mapping[str, float], missing: Sequence[str],
                  numbers: Sequence[Number], texts: Sequence[str]) -> str | None:
    """The passage clause that states the claim with another number of the same kind."""
    words = {u: w for u, w in units.items() if not u.startswith("#")}
    total = sum(words.values())
    kinds = {n.unit for n in numbers if n.surface in missing}
    best: tuple[float, str] | None = None
    for text in texts:
        for clause in [*_CLAUSE_RE.findall(text), text]:
            stated = numbers_in(clause)
            if not stated or not any(n.unit in kinds or None in kinds for n in stated):
                continue
            share = sum(w for u, w in words.items() if u in _units(clause)) / total if total else 0
            if share >= 0.6 and (best is None or share > best[0]):
                best = (share, " ".join(clause.split()))
    return best[1] if best is not None else None


def _direction_conflict(claim: str, numbers: Sequence[Number], window: Sequence[str]) -> bool:
    """True when the passage clauses that state the claim's numbers say the opposite
    direction ("rose 12%" vs "fell 12%")."""
    clauses = [c for text in window for c in _CLAUSE_RE.findall(text)]
    values = {v for n in numbers for v in n.values}
    anchored = [c for c in clauses if values & {v for n in numbers_in(c) for v in n.values}]
    directions = {_direction(c) for c in anchored} - {0}
    claim_direction = _direction(claim)
    return bool(claim_direction) and directions == {-claim_direction}


# ----------------------------------------------------------------- verifying an answer
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
        units = _units(plain_text(claim)).keys()
        keys = [k for k, t in self.candidates.items() if t not in excluded]
        keys.sort(key=lambda k: -len(units & _analyse(self.candidates[k]).all_units))
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
            )
            if best.verdict is not Verdict.UNSUPPORTED:
                return result
        elif ids:
            result = ClaimVerdict(span, Verdict.UNSUPPORTED, ids, reason=note[2].upper() + note[3:])
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
    marker); otherwise the best of the cited passages' verdicts, UNSUPPORTED when every id
    is hallucinated. ``support`` are spans in the text of ``support_id`` (the best cited id,
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
        return self._emit(sentences[:-1], citations)

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
