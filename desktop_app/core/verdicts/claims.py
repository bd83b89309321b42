"""What a sentence of an answer claims: whether it states a fact at all (greetings, meta
sentences about the sources and questions do not), its plain text, and the numbers it
states with their units and scales. The verifier and the judge check claims with these.
Qt-free, no asyncio.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_CHAR, CJK_RANGES
from desktop_app.core.text.markers import strip_markers
from desktop_app.core.text.words import claim_stopwords, stem

# Sentences about the sources or the answer (each language's ``meta``), and greetings.
_meta = lang.compiled(lambda: re.compile(
    "|".join(f"(?:{p})" for x in lang.all_lexicons() for p in x.meta), re.IGNORECASE))
_greeting = lang.compiled(lambda: re.compile(
    f"^({lang.pattern(lambda x: x.greetings, latin_bounds=False)})\\b", re.IGNORECASE))


def plain_text(text: str) -> str:
    """The sentence without markers, markdown emphasis and a leading bullet or list number."""
    text = strip_markers(text, " ")
    text = re.sub(r"(?<=\d) ?\* ?(?=[A-Za-z]\b)", "×", text)  # "2*N" is a figure, not emphasis
    text = re.sub(r"[*_`>#|]+", " ", text)
    text = re.sub(
        r"^\s*(?:[-•·+]|\d{1,3}[.)、]|[(（]\d{1,3}[)）]|[一二三四五六七八九十]{1,3}、)\s*", "", text
    )
    return " ".join(text.split())


def is_factual(sentence_text: str) -> bool:
    """False for greetings, meta sentences about the documents or the answer, questions,
    introductions ending in a colon, and fragments too short to state a fact."""
    text = plain_text(unicodedata.normalize("NFKC", sentence_text))
    if not any(ch.isalnum() for ch in text):
        return False
    if text.endswith(("?", ":")) or _meta().search(text):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*", text)
    cjk = len(CJK_CHAR.findall(text))
    stop = claim_stopwords()
    content = [w for w in words if w[0].isdigit() or stem(w.lower()) not in stop]
    if _greeting().match(text) and len(words) + cjk / 1.5 < 12 and not re.search(r"\d", text):
        return False
    return len(words) + cjk / 1.5 >= 3 and len(content) + cjk / 1.5 >= 2


# Units written as symbols or codes, in any language; each language's words for them are
# in its lexicon (``units``).
_SYMBOL_UNITS = {
    "percent": "%", "usd": "$ usd", "eur": "€ eur", "gbp": "£ gbp", "cny": "¥ rmb cny", "mm": "mm",
    "cm": "cm", "m": "m", "km": "km", "m2": "m2 sqm", "kg": "kg", "g": "g", "t": "t", "mpa": "mpa",
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "celsius": "°c ℃",
}


def _build_units() -> dict[str, str]:
    words: dict[str, str] = {}
    for canon, written in _SYMBOL_UNITS.items():
        words.update(dict.fromkeys(written.split(), canon))
    for lexicon in lang.all_lexicons():
        for canon, written in lexicon.units.items():
            words.update(dict.fromkeys(written.split(), canon))
    return words


_unit_words = lang.compiled(_build_units)
_scales = lang.compiled(lambda: {w: v for x in lang.all_lexicons() for w, v in x.scales.items()})
_CN_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}


def _number_re() -> re.Pattern[str]:
    numerals = "".join(x.numerals for x in lang.all_lexicons())
    numeral_units = "|".join([*(u for x in lang.all_lexicons() for u in x.numeral_units), "%"])
    scales = "|".join(_scales())
    cn = rf"|(?P<cn>[{numerals}]{{2,}}|[二两三四五六七八九十])(?=\s?(?:{numeral_units}))" if numerals else ""
    return re.compile(
        r"(?P<cur>[$€£¥]\s?)?(?<![A-Za-z0-9.])"
        r"(?:(?P<id>\d+(?:\.\d+){2,}|\d+\s?[*×]\s?[a-z](?![a-z]))|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
        rf"{cn})"
        rf"(?:\s?(?P<scale>{scales})(?![a-z]))?"
        rf"(?:[\s-]?(?P<unit>%|°c|℃|[a-z]+|[{CJK_RANGES}]{{1,3}}))?"
    )


_NUMBER_RE = lang.compiled(_number_re)
_unit_qualifiers = lang.compiled(lambda: lang.words("unit_qualifiers"))


def _unit_of(word: str, after: str) -> str | None:
    if not word:
        return None
    units = _unit_words()
    if CJK_CHAR.match(word):
        return next((units[word[:k]] for k in (3, 2, 1) if word[:k] in units), None)
    if word in _unit_qualifiers():
        nxt = re.match(r"\s*([a-z]+)", after)
        return units.get(nxt.group(1)) if nxt else None
    return units.get(word)


def _cn_value(s: str) -> float:
    if all(c in _CN_DIGITS for c in s):
        return float("".join(str(_CN_DIGITS[c]) for c in s))
    total = section = num = 0.0
    for c in s:
        if c in _CN_DIGITS:
            num = _CN_DIGITS[c]
        elif c in "十百千":
            section += (num or 1) * {"十": 10, "百": 100, "千": 1000}[c]
            num = 0
        else:  # 万 亿
            total += (section + num) * (1e4 if c == "万" else 1e8)
            section = num = 0
    return total + section + num


def _fmt(value: float) -> str:
    return format(value, ".9g")


@dataclass(frozen=True)
class Number:
    surface: str
    values: frozenset[str]  # the value as written and scaled ("1.2", "1200000000")
    unit: str | None


# A month named beside a day or a year is a number: "September 21, 2020", "21. September",
# "Oct. 28" state the 9 and the 10 that "2020 年 9 月 21 日" and "10 月 28 日" state (each
# language's ``months``).
_months = lang.compiled(lambda: {name: number for x in lang.all_lexicons()
                                 for number, names in enumerate(x.months, 1) for name in names})


def _month_re() -> re.Pattern[str]:
    names = "|".join(sorted(_months(), key=len, reverse=True)) or r"(?!)"
    return re.compile(rf"(?<![\w.])({names})\.?(?=\s+\d{{1,4}}\b)|(?<=\d[.\s])\s?({names})\b")


_MONTH_RE = lang.compiled(_month_re)


def numbers_in(text: str) -> list[Number]:
    named = _months()
    months = [Number(m.group(1) or m.group(2), frozenset([str(named[m.group(1) or m.group(2)])]), "month")
              for m in _MONTH_RE().finditer(unicodedata.normalize("NFKC", text))]
    return _numbers(text) + months


def _numbers(text: str) -> list[Number]:
    text = strip_markers(unicodedata.normalize("NFKC", text).lower(), " ")
    text = re.sub(r"百分之([\d.]+|[零一二两三四五六七八九十点]+)", r"\1%", text)
    found: list[Number] = []
    scales = _scales()
    units = _unit_words()
    for m in _NUMBER_RE().finditer(text):
        unit = _unit_of(m.group("unit") or "", text[m.end() :])
        if m.group("cur"):
            unit = units.get(m.group("cur").strip(), unit)
        if m.group("id"):
            found.append(Number(m.group(), frozenset([re.sub(r"\s", "", m.group("id")).replace("×", "*")]), unit))
            continue
        if m.group("cn"):
            value = _cn_value(m.group("cn"))
        else:
            value = float(m.group("num").replace(",", ""))
        values = {_fmt(value)}
        if m.group("scale"):
            values.add(_fmt(value * scales[m.group("scale")]))
        found.append(Number(m.group().strip(), frozenset(values), unit))
    return found


def missing_numbers(claim: Sequence[Number], passage: Sequence[Number]) -> list[str]:
    """Numbers of the claim the passage does not state with the same value and a compatible
    unit (a bare number in the passage, e.g. in a table, is compatible with any unit)."""
    missing = []
    for number in claim:
        units = {p.unit for p in passage if p.values & number.values}
        if not units or number.unit is not None and number.unit not in units and None not in units:
            missing.append(number.surface)
    return missing
