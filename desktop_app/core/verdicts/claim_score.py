"""Scoring one claim against one passage: the verdict rules. Qt-free, no asyncio.

The scorer is fast and deterministic: content-word coverage (stopwords removed, light
English stemming; core/verdicts/claim_units.py), CJK character bigrams (and, at half weight,
characters), number and unit agreement (a number the passage does not state makes the
claim unsupported; core/verdicts/mismatch.py finds a number, noun, name or direction the
passage gives otherwise), and, when an ``embed`` callable is given, the cosine between the
sentence and each passage sentence. It also returns the passage sentences that best support
the claim: the viewer highlights those most strongly (sub-chunk localisation). Negation,
conditions and opposite words are core/verdicts/meaning.py's.

Thresholds were calibrated on the hand-made English/Chinese pairs in
``tests/core/verdicts/test_verify.py`` (and, for the cosine, on all-MiniLM-L6-v2 int8).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_CHAR, CJK_RANGES
from desktop_app.core.text.words import question_language, text_language
from desktop_app.core.types import Span, Verdict
from desktop_app.core.verdicts import meaning
from desktop_app.core.verdicts.claim_units import analyse, content_units, unmatched_weight
from desktop_app.core.verdicts.claims import missing_numbers, numbers_in, plain_text
from desktop_app.core.verdicts.mismatch import (
    anchored,
    direction_conflict,
    misattached,
    number_elsewhere,
    other_name,
    other_number,
    paired_otherwise,
)

__all__ = ["PARTIAL_MIN", "SUPPORTED_MIN", "ClaimScore", "Embed", "Rule", "score_claim"]

Embed = Callable[[Sequence[str]], np.ndarray]

# ----------------------------------------------------------------- calibrated constants
SUPPORTED_MIN = 0.70  # score at or above: the cited passage states the claim
PARTIAL_MIN = 0.35  # score at or above (and below SUPPORTED_MIN): part of the claim is there
NUMBER_MISMATCH_CAP = 0.20  # a claim with a number the passage lacks scores at most this
MAX_SUPPORT_SENTENCES = 3  # passage sentences combined to cover one claim
MIN_SUPPORT_GAIN = 0.15  # a further passage sentence must add this much coverage
COS_FLOOR, COS_CEIL = 0.50, 0.90  # MiniLM cosine mapped linearly onto [0, 1] between these
EMBED_WEIGHT = 0.5  # the embedding's share when it raises the lexical score
# The default embedder (all-MiniLM-L6-v2) is English-only: on Chinese claims its cosine was
# noise (0.73 for an unrelated pair), so it is consulted only for mostly-Latin claims.
EMBED_MIN_LATIN_SHARE = 0.5
ANCHOR_MIN = 0.55  # a claim whose distinctive number the passage states with the same noun
# is supported from this coverage on ("This resulted in 21,015,324 passages")
CONTRADICTION_CAP = 0.10  # score of a claim the passage contradicts
MAIN_SENTENCE_MIN = 0.5  # a supported claim has one passage sentence stating this much of it
MAX_UNMATCHED = 0.5  # content words (1 each; CJK bigrams 1/2) a supported claim may lack


class Rule(StrEnum):
    """The rule scorer's four grades. The reader sees three (:attr:`ClaimScore.verdict`):
    PARTIAL and UNSUPPORTED are both "not confirmed"; a PARTIAL one (score from
    PARTIAL_MIN) is worth the judge's question (core/verdicts/judge.py)."""

    SUPPORTED = "supported"
    PARTIAL = "partial"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


_SHOWN = {Rule.SUPPORTED: Verdict.SUPPORTED, Rule.PARTIAL: Verdict.NOT_CONFIRMED,
          Rule.UNSUPPORTED: Verdict.NOT_CONFIRMED, Rule.CONTRADICTED: Verdict.CONTRADICTED}
# What a meaning.Finding of each kind conflicts in (types.CONFLICT_KINDS).
_CONFLICT = {"negation": "negation", "opposite": "negation", "modality": "negation", "tick": "negation",
             "subject": "party", "owner": "party", "group": "party", "number": "number",
             "condition": "condition", "attribution": "condition"}


@dataclass(frozen=True)
class ClaimScore:
    rule: Rule
    score: float  # in [0, 1]
    support: tuple[Span, ...]  # best-supporting passage sentences, offsets into the passage
    reason: str
    coverage: float = 0.0  # share of the claim's content units found in ``support``
    cosine: float | None = None  # best sentence cosine, when an embedder was given
    quote: str = ""  # the passage's words that contradict the claim (or make it conditional)
    conflict: str = ""  # what ``quote`` states otherwise: one of types.CONFLICT_KINDS

    @property
    def verdict(self) -> Verdict:
        return _SHOWN[self.rule]


def _verdict_for(score: float) -> Rule:
    if score >= SUPPORTED_MIN:
        return Rule.SUPPORTED
    return Rule.PARTIAL if score >= PARTIAL_MIN else Rule.UNSUPPORTED


def _cosines(embed: Embed, claim: str, texts: Sequence[str]) -> np.ndarray:
    vectors = np.asarray(embed([claim, *texts]), dtype=np.float32)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    cosines: np.ndarray = vectors[1:] @ vectors[0]
    return cosines


def score_claim(sentence: str, passage: str, embed: Embed | None = None) -> ClaimScore:
    """How well ``passage`` supports ``sentence`` (markers in the sentence are ignored)."""
    claim = plain_text(sentence)
    units = content_units(claim)
    total = sum(units.values())
    p = analyse(passage)
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
        other = other_number(claim, units, missing, claim_numbers, picked)
        if other is not None:
            reason = f"the passage gives another number than {', '.join(missing)}"
            reason += f"; the passage says: {other}"
            return ClaimScore(Rule.CONTRADICTED, min(score, CONTRADICTION_CAP), support,
                              reason, coverage, cosine, quote=other, conflict="number")
        stated = ", ".join(dict.fromkeys(n.surface for n in p.numbers)) or "none"
        reason = f"the passage does not state {', '.join(missing)} (numbers there: {stated[:80]})"
        score = min(score, NUMBER_MISMATCH_CAP)
        return ClaimScore(Rule.UNSUPPORTED, score, support, reason, coverage, cosine)
    moved = number_elsewhere(units, claim_numbers, p.texts)
    if moved is not None:
        reason = f"the passage states it with another number; the passage says: {moved}"
        return ClaimScore(Rule.CONTRADICTED, min(score, CONTRADICTION_CAP), support, reason,
                          coverage, cosine, quote=moved, conflict="number")
    paired = paired_otherwise(claim_numbers, p.texts)
    if paired is not None:
        reason = f"the passage pairs the claim's numbers otherwise; the passage says: {paired}"
        return ClaimScore(Rule.CONTRADICTED, min(score, CONTRADICTION_CAP), support, reason,
                          coverage, cosine, quote=paired, conflict="number")
    elsewhere = misattached(claim, claim_numbers, p.texts)
    if elsewhere is not None:
        # Only a sign that the number may belong to another noun ("UTF8 使用 UTF-8 编码" for
        # "UTF8 选项使用 UTF-8 编码" is true): not confirmed, and the judge is asked
        # (bench/verdicts.py: 5 of 11 true tuning sentences the judge was never asked about).
        reason = f"the passage may state the number of another thing; the passage says: {elsewhere}"
        return ClaimScore(Rule.PARTIAL, max(min(score, SUPPORTED_MIN - 0.01), PARTIAL_MIN), support,
                          reason, coverage, cosine)
    reason = f"{coverage:.0%} of the claim's content found in {len(picks)} passage sentence(s)"
    if cosine is not None:
        reason += f"; closest sentence cosine {cosine:.2f}"
    if claim_numbers:
        reason += "; numbers agree"
        if SUPPORTED_MIN > score >= ANCHOR_MIN and anchored(claim, claim_numbers, units, p.texts):
            score = SUPPORTED_MIN
            reason += ", stated with the same words"
    verdict = _verdict_for(score)
    if verdict is Rule.SUPPORTED and picks and total and (
        sum(units[u] for u in units.keys() & p.units[picks[0]]) / total < MAIN_SENTENCE_MIN
    ):
        verdict, score = Rule.PARTIAL, min(score, SUPPORTED_MIN - 0.01)
        reason += "; no passage sentence states most of it"
    if _repeats(claim):
        return ClaimScore(Rule.UNSUPPORTED, 0.0, support, "the sentence repeats itself",
                          coverage, cosine)
    if _fragment(claim):
        return ClaimScore(Rule.UNSUPPORTED, min(score, PARTIAL_MIN - 0.01), support,
                          "not a whole sentence: it states no complete claim", coverage, cosine)
    unmatched = unmatched_weight(units, covered, p.all_units)
    if verdict is not Rule.UNSUPPORTED and picks:
        named = other_name(claim, p.all_units, p.texts[picks[0]])
        if named is not None:
            reason = f"the passage names {named[1]}, not {named[0]}"
            return ClaimScore(Rule.UNSUPPORTED, min(score, PARTIAL_MIN - 0.01), support, reason,
                              coverage, cosine, quote=" ".join(p.texts[picks[0]].split()))
    if verdict is Rule.SUPPORTED and unmatched > MAX_UNMATCHED and "same words" not in reason:
        # a content word the passage does not have: "refused" for "agreed", "little-endian"
        # for "network": a lexical scorer cannot tell a paraphrase from a change; amber, and
        # the judge decides
        verdict, score = Rule.PARTIAL, min(score, SUPPORTED_MIN - 0.01)
        reason += f"; {unmatched:g} content word(s) of the claim not in the passage"
    if direction_conflict(claim, claim_numbers, picked):
        reason = "the passage states the number with the opposite direction (rise vs fall)"
        return ClaimScore(Rule.CONTRADICTED, min(score, CONTRADICTION_CAP), support, reason,
                          coverage, cosine, quote=" ".join(picked[0].split()) if picked else "",
                          conflict="number")
    if verdict is not Rule.UNSUPPORTED:
        found = meaning.conflict(claim, p.texts, content_units, p.texts)
        if found is not None:
            verdict = Rule.CONTRADICTED if found.opposite else Rule.UNSUPPORTED
            cap = CONTRADICTION_CAP if found.opposite else PARTIAL_MIN - 0.01
            return ClaimScore(verdict, min(score, cap), support, found.reason(), coverage, cosine,
                              quote=found.quote, conflict=_CONFLICT[found.kind])
    ticked = meaning.ticked_box(claim, p.texts, content_units) if verdict is not Rule.UNSUPPORTED else None
    if ticked is not None and ticked[0]:
        # the box the passage ticked says what the claim says: no second opinion needed
        reason += f"; the passage ticks the box the claim states: {ticked[1]}"
        return ClaimScore(verdict, min(max(score, 0.0), 1.0), support, reason, coverage, cosine,
                          quote=ticked[1])
    if verdict is Rule.UNSUPPORTED and _other_language(claim, passage):
        # A Chinese or German sentence citing an English passage shares no words with it
        # ("签署" / "signed"), so its coverage says nothing; its numbers agreed above. Amber,
        # and the judge (judge.py) weighs it: it tells such true and false sentences apart
        # where the rules cannot (bench/verdicts.py rules --origin crosslingual).
        reason += "; the passage is in another language, so its words cannot be matched"
        return ClaimScore(Rule.PARTIAL, PARTIAL_MIN, support, reason, coverage, cosine)
    return ClaimScore(verdict, min(max(score, 0.0), 1.0), support, reason, coverage, cosine)


def _other_language(claim: str, passage: str) -> bool:
    """Whether the claim and its passage are plainly in two languages (a German passage of
    formulas may not say it is German: then they are not)."""
    written = text_language(passage)
    return written is not None and written != question_language(claim)


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


# Each language's words a sentence cannot start or end with (``fragment_starts``, ``fragment_ends``).
_FRAGMENT_START = lang.compiled(lambda: re.compile(rf"^(?:{lang.pattern(lambda x: x.fragment_starts)})"))
_FRAGMENT_END = lang.compiled(lambda: re.compile(rf"(?:{lang.pattern(lambda x: x.fragment_ends)})\W*$"))


def _fragment(claim: str) -> bool:
    """A piece of a sentence: it starts mid-sentence (a lower-case "and", "which", "of"...)
    or breaks off after a word that needs more ("... of the")."""
    text = re.sub(r"\s*\[[^\]]*\]\s*", " ", claim).strip()
    return bool(_FRAGMENT_START().match(text) or _FRAGMENT_END().search(text.rstrip(".。!！ ")))
