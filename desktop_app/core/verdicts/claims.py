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

from desktop_app.core.text.markers import strip_markers
from desktop_app.core.text.words import CJK_CHAR, CLAIM_STOPWORDS, stem

_META_PATTERNS = [
    r"\b(documents?|sources?|context|passages?|texts?|materials?|excerpts?|provided|given)\b"
    r".{0,60}\b(do(es)?|did)\s*(not|n't)\s+(say|mention|contain|provide|specify|state|include"
    r"|address|discuss|cover|describe|give|explain|indicate|list|answer)",
    r"\bi\s+(could\s*n[o']t|can\s*n[o']t|cannot|was unable to|am unable to|'m unable to"
    r"|do\s*n[o']t know|am not sure|'m not sure|did\s*n[o']t find)",
    r"\bnot\s+(mentioned|specified|stated|provided|covered|addressed|discussed|found)\s+in\s+"
    r"the\s+(provided\s+|given\s+|available\s+)?(documents?|sources?|context|passages?|texts?)",
    r"\bno\s+(relevant\s+)?(information|basis|evidence|mention)\b.{0,60}"
    r"\b(documents?|sources?|context|passages?|provided|given)\b",
    r"^(here\s+is|here\s+are|here's|below\s+(is|are))\b",
    r"\b(please\s+verify|verify\s+(this\s+)?manually|consult\s+the\s+original)",
    r"(资料|文档|文件|材料|来源|上下文|原文|内容)[^。]{0,12}(没有|未|并未|无|不)"
    r"(提及|提到|说明|涉及|包含|给出|记载|明确|规定|找到)",
    r"(无法|不能|难以)(回答|确定|确认|判断|找到|得出)",
    r"(没有|未能?|并未)(找到|检索到|查到)",
    r"^以下(是|为)|如下$|(请|建议)(您)?(人工)?(核实|核对|查阅原文)|我不(知道|确定)|抱歉|对不起",
]
_META_RE = re.compile("|".join(f"(?:{p})" for p in _META_PATTERNS), re.IGNORECASE)
_GREETING_RE = re.compile(
    r"^(hi|hello|hey|thanks|thank you|you're welcome|sure|certainly|of course|great question"
    r"|glad to help|happy to help|(i )?hope (this|that) helps|let me know|feel free|good luck"
    r"|你好|您好|谢谢|感谢|不客气|好的|当然|希望(以上|这些|这)?.{0,8}(帮助|有用)"
    r"|如(有|果您?有)(其他|任何)?(问题|疑问))\b",
    re.IGNORECASE,
)


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
    if text.endswith(("?", ":")) or _META_RE.search(text):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*", text)
    cjk = len(CJK_CHAR.findall(text))
    content = [w for w in words if w[0].isdigit() or stem(w.lower()) not in CLAIM_STOPWORDS]
    if _GREETING_RE.match(text) and len(words) + cjk / 1.5 < 12 and not re.search(r"\d", text):
        return False
    return len(words) + cjk / 1.5 >= 3 and len(content) + cjk / 1.5 >= 2


_UNIT_WORDS = {
    "day": "day days 天 日 工作日",
    "week": "week weeks 周 星期 个星期",
    "month": "month months 个月 月",
    "year": "year years yr yrs 年",
    "hour": "hour hours hr hrs h 小时 个小时",
    "minute": "minute minutes min mins 分钟",
    "second": "second seconds sec secs s 秒",
    "percent": "% percent 百分点",
    "usd": "$ usd dollar dollars 美元",
    "eur": "€ eur euro euros 欧元",
    "gbp": "£ gbp pound pounds 英镑",
    "cny": "¥ rmb cny yuan 元 人民币",
    "mm": "mm 毫米",
    "cm": "cm 厘米",
    "m": "m meter meters metre metres 米",
    "km": "km 公里 千米",
    "m2": "m2 sqm 平方米 平米",
    "kg": "kg 千克 公斤",
    "g": "g gram grams 克",
    "t": "t ton tons tonne tonnes 吨",
    "mpa": "mpa 兆帕",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "byte": "byte bytes 字节",
    "bit": "bit bits",
    "celsius": "°c ℃ 摄氏度 度",
    "times": "times 倍",
    "people": "people persons 人 名",
    "page": "page pages 页",
    "article": "条",
    "item": "项 个 次",
}
_UNIT_OF = {w: canon for canon, words in _UNIT_WORDS.items() for w in words.split()}
_SCALE = {
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "bn": 1e9,
    "千": 1e3,
    "万": 1e4,
    "百万": 1e6,
    "千万": 1e7,
    "亿": 1e8,
}
_CN_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_CN_NUM = "零〇一二两三四五六七八九十百千万亿"
_CN_UNIT = "个月|个小时|小时|分钟|天|日|周|年|月|秒|倍|元|米|公里|千米|吨|公斤|千克|克|页|条|%"
_NUMBER_RE = re.compile(
    r"(?P<cur>[$€£¥]\s?)?(?<![A-Za-z0-9.])"
    r"(?:(?P<id>\d+(?:\.\d+){2,}|\d+\s?[*×]\s?[a-z](?![a-z]))|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    rf"|(?P<cn>[{_CN_NUM}]{{2,}}|[二两三四五六七八九十])(?=\s?(?:{_CN_UNIT})))"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|百万|千万|万|亿|千)(?![a-z]))?"
    r"(?:[\s-]?(?P<unit>%|°c|℃|[a-z]+|[\u4e00-\u9fff]{1,3}))?"
)
_UNIT_QUALIFIERS = frozenset("calendar business working consecutive full additional".split())


def _unit_of(word: str, after: str) -> str | None:
    if not word:
        return None
    if CJK_CHAR.match(word):
        return next((_UNIT_OF[word[:k]] for k in (3, 2, 1) if word[:k] in _UNIT_OF), None)
    if word in _UNIT_QUALIFIERS:
        nxt = re.match(r"\s*([a-z]+)", after)
        return _UNIT_OF.get(nxt.group(1)) if nxt else None
    return _UNIT_OF.get(word)


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
# "Oct. 28" state the 9 and the 10 that "2020 年 9 月 21 日" and "10 月 28 日" state.
_MONTHS = {name: number for number, names in enumerate((
    "January Jan Januar Jänner", "February Feb Februar", "March Mar März", "April Apr",
    "May Mai", "June Jun Juni", "July Jul Juli", "August Aug", "September Sep Sept",
    "October Oct Oktober Okt", "November Nov", "December Dec Dezember Dez"), 1)
    for name in names.split()}
_MONTH_NAME = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_RE = re.compile(rf"(?<![\w.])({_MONTH_NAME})\.?(?=\s+\d{{1,4}}\b)|(?<=\d[.\s])\s?({_MONTH_NAME})\b")


def numbers_in(text: str) -> list[Number]:
    months = [Number(m.group(1) or m.group(2), frozenset([str(_MONTHS[m.group(1) or m.group(2)])]), "month")
              for m in _MONTH_RE.finditer(unicodedata.normalize("NFKC", text))]
    return _numbers(text) + months


def _numbers(text: str) -> list[Number]:
    text = strip_markers(unicodedata.normalize("NFKC", text).lower(), " ")
    text = re.sub(r"百分之([\d.]+|[零一二两三四五六七八九十点]+)", r"\1%", text)
    found: list[Number] = []
    for m in _NUMBER_RE.finditer(text):
        unit = _unit_of(m.group("unit") or "", text[m.end() :])
        if m.group("cur"):
            unit = _UNIT_OF.get(m.group("cur").strip(), unit)
        if m.group("id"):
            found.append(Number(m.group(), frozenset([re.sub(r"\s", "", m.group("id")).replace("×", "*")]), unit))
            continue
        if m.group("cn"):
            value = _cn_value(m.group("cn"))
        else:
            value = float(m.group("num").replace(",", ""))
        values = {_fmt(value)}
        if m.group("scale"):
            values.add(_fmt(value * _SCALE[m.group("scale")]))
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
