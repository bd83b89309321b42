"""Where a claim's content stands in the passage otherwise: its number stated of another
noun, with another number of the same kind, paired with another number, with the opposite
direction (rise vs fall), or another name in its place; and whether one passage sentence
anchors the claim's numbers with the claim's own nouns. Qt-free, no asyncio. Each check
returns the passage's words that show it (a quote) or None; core/verdicts/claim_score.py
turns them into verdicts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_RANGES
from desktop_app.core.text.words import claim_stopwords, stem
from desktop_app.core.verdicts.claim_units import content_units, light_stems
from desktop_app.core.verdicts.claims import Number, missing_numbers, numbers_in, plain_text

__all__ = [
    "anchored", "direction_conflict", "misattached", "number_elsewhere", "other_name",
    "other_number", "paired_otherwise",
]

# A number's direction, in each language's words (``rises``, ``falls``).
_up = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.rises)))
_down = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.falls)))
_CLAUSE_RE = re.compile(r"[^,，;；:：。!?！？]+")


def _direction(text: str) -> int:
    low = text.lower()
    return int(bool(_up().search(low))) - int(bool(_down().search(low)))


def _word_after(text: str, number: Number, gap: str = r"[\s-]*") -> str:
    """The word that follows ``number``'s figure in ``text`` across ``gap``, as written
    ("" if none)."""
    figure = re.match(r"[$€£¥]?\s?[\d.,*×]*\d[\d.,*×a-z]*?(?=\s|$|[^\d.,*×])", number.surface)
    if figure is None:
        return ""
    plain = unicodedata.normalize("NFKC", plain_text(text))
    m = re.search(r"(?<![\d.,])" + re.escape(figure.group()) + gap + rf"([A-Za-z]+|[{CJK_RANGES}]{{1,2}})",
                  plain, re.IGNORECASE)
    return m.group(1) if m else ""


def _after(text: str, number: Number) -> str:
    """The noun that follows ``number`` in ``text`` ("21,015,324 passages": "passag"); ""
    when a unit follows it (units are compared by :func:`missing_numbers`)."""
    if number.unit is not None:
        return ""
    word = _word_after(text, number)
    return stem(word.lower()) if word else ""


def _names_after(text: str, number: Number) -> bool:
    """Whether ``number`` is followed by a capitalised word in ``text``: a label or a title
    ("10.4.9 408 Request Timeout"), not a count of something."""
    return _word_after(text, number, gap=r"[ \t-]*")[:1].isupper()


def anchored(claim: str, numbers: Sequence[Number], units: Mapping[str, float],
              texts: Sequence[str]) -> bool:
    """Whether one passage sentence states every number of the claim, each with the noun the
    claim gives it or beside other words of the claim."""
    for text in texts:
        stated = numbers_in(text)
        if missing_numbers(numbers, stated):
            continue
        words = sum(w for u, w in content_units(text).items() if u in units and not u.startswith("#"))
        nouns = all(
            any(_after(claim, n) and _after(claim, n) == _after(text, m)
                for m in stated if m.values & n.values)
            for n in numbers
        )
        if nouns and words >= 0:
            return True
    return False


def paired_otherwise(numbers: Sequence[Number], texts: Sequence[str]) -> str | None:
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
_not_names = lang.compiled(lambda: lang.words("not_names"))  # "MUST", "SHOULD NOT": no names
# A claim in a language that capitalises every noun (German): its capitals name nothing.
_capitalising = lang.compiled(lambda: re.compile("|".join(
    [f"[{''.join(dict.fromkeys(x.letters.lower()))}]" for x in lang.latin() if x.capitalises_nouns and x.letters]
    + [rf"\b(?:{'|'.join(sorted(x.telltale_words))})\b" for x in lang.latin()
       if x.capitalises_nouns and x.telltale_words]) or r"(?!)"))


def _names(text: str) -> list[str]:
    """Capitalised words not at the start of a sentence (names: "Andreas Gal", "Mozilla")."""
    return [m.group(1) for m in _NAME_RE.finditer(text.strip())
            if m.group(1).lower() not in _not_names() and not m.group(1).isupper()]


def other_name(claim: str, passage: frozenset[str], best: str) -> tuple[str, str] | None:
    """(the claim's name the passage lacks, the name the passage's best sentence gives
    instead): "Brendan Eich" where the passage has "Andreas Gal". Not for a claim in a
    language that capitalises every noun (German)."""
    if _capitalising().search(claim):
        return None
    low = claim.lower()
    missing = [n for n in _names(claim) if not any(stem(w) in passage for w in n.lower().split())]
    if not missing:
        return None
    theirs = [n for n in _names(best) if n.lower() not in low]
    return (missing[0], theirs[0]) if theirs else None


def number_elsewhere(units: Mapping[str, float], numbers: Sequence[Number],
                      texts: Sequence[str]) -> str | None:
    """The passage sentence that states the claim with another number of the same kind,
    when the claim's number is stated only about something else ("OpenType in 1994": 1994
    is TrueType GX's year; OpenType's is 1996)."""
    words = {u: w for u, w in units.items() if not u.startswith("#")}
    total = sum(words.values())
    if not total or not numbers:
        return None
    shares = [sum(w for u, w in words.items() if u in content_units(t)) / total for t in texts]
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
_labelled = lang.compiled(lambda: re.compile("|".join(
    [rf"\b(?:{'|'.join(x.labels)})\.?\s*$" for x in lang.latin() if x.labels]
    + [rf"(?:{'|'.join(x.labels)})\s*$" for x in lang.all_lexicons() if x.script == "cjk" and x.labels]),
    re.IGNORECASE))


def misattached(claim: str, numbers: Sequence[Number], texts: Sequence[str]) -> str | None:
    """The passage sentence that states a claim's number of another noun ("21,015,324
    questions" where the passage has "21,015,324 passages"), when no sentence that states
    the number names the claim's noun."""
    for number in numbers:
        noun = _after(claim, number)
        if not noun or noun in claim_stopwords() or noun in light_stems() or _labelled().search(
            plain_text(claim).lower().split(number.surface.lower())[0][-12:]
        ):
            continue
        stating = [t for t in texts if any(m.values & number.values for m in numbers_in(t))]
        if not stating or any(noun in content_units(t) for t in stating):
            continue
        if any(_names_after(t, number) for t in stating):
            continue  # "408 Request Timeout" names the status the claim calls "408 status"
        others = {_after(t, m) for t in stating for m in numbers_in(t) if m.values & number.values}
        if noun not in others and others and all(o and o not in light_stems() for o in others):
            return " ".join(stating[0].split())
    return None


def other_number(claim: str, units: Mapping[str, float], missing: Sequence[str],
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
            share = sum(w for u, w in words.items() if u in content_units(clause)) / total if total else 0
            if share >= 0.6 and (best is None or share > best[0]):
                best = (share, " ".join(clause.split()))
    return best[1] if best is not None else None


def direction_conflict(claim: str, numbers: Sequence[Number], window: Sequence[str]) -> bool:
    """True when the passage clauses that state the claim's numbers say the opposite
    direction ("rose 12%" vs "fell 12%")."""
    clauses = [c for text in window for c in _CLAUSE_RE.findall(text)]
    values = {v for n in numbers for v in n.values}
    anchored = [c for c in clauses if values & {v for n in numbers_in(c) for v in n.values}]
    directions = {_direction(c) for c in anchored} - {0}
    claim_direction = _direction(claim)
    return bool(claim_direction) and directions == {-claim_direction}
