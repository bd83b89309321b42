"""Sentences of an answer or a passage: citation markers, sentence splitting (Latin and CJK
punctuation, abbreviations and decimals kept whole), which sentences state facts, and the
numbers (with units and scales) a sentence states. Qt-free, no asyncio.

``core/verify.py`` scores sentences against passages with these; the splitter and the
marker grammar are also used by the benchmarks.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from desktop_app.core.types import Span

Citations = Mapping[str, Sequence[Span]] | Sequence[tuple[str, Span]]

# ----------------------------------------------------------------- citation markers
MARKER_RE = re.compile(
    r"[\[【［]\s*(?:\d{1,3}(?:\s*[-–~,，、]\s*\d{1,3})*|[0-9a-z]{7,8}(?:\s*[,，]\s*[0-9a-z]{7,8})*)"
    r"\s*[\]】］]"
)
UNCLOSED_MARKER_RE = re.compile(r"[\[【［][0-9A-Za-z,，、\s\-–~]{0,40}$")


def find_markers(text: str) -> list[tuple[str, Span]]:
    """(id, span) for every marker; ``[1-3]`` names 1, 2 and 3, ``[1, 3]`` names 1 and 3.

    A fallback for callers without a CitationTracker (tests, re-verifying stored text)."""
    found: list[tuple[str, Span]] = []
    for match in MARKER_RE.finditer(text):
        inner = unicodedata.normalize("NFKC", match.group())[1:-1]
        for part in re.split(r"[,、]", inner):
            bounds = [b.strip() for b in re.split(r"[-–~]", part)]
            if len(bounds) == 2 and all(b.isdigit() for b in bounds):
                low, high = int(bounds[0]), int(bounds[1])
                ids = [str(n) for n in range(low, high + 1)] if 0 <= high - low < 20 else bounds
            else:
                ids = [bounds[0]]
            found.extend((i, (match.start(), match.end())) for i in ids if i)
    return found


# ----------------------------------------------------------------- sentence splitting
@dataclass(frozen=True)
class Sentence:
    start: int  # offsets into the text: text[start:end] == self.text
    end: int
    text: str


_CJK_TERMINATORS = "。！？；"
_TERMINATORS = _CJK_TERMINATORS + "!?;"
_CLOSERS = "\"'”’)）」』》〉*"
_HSPACE = " \t\u00a0\u3000"
_ALWAYS_ABBREV = frozenset(
    "mr mrs ms dr prof sr jr st vs cf al approx ca resp viz dept est".split()
)
_SENTENCE_STARTERS = frozenset(
    "the this that these those it its he she they we you i in on at as for however but and "
    "there a an if when while after before since so thus therefore also".split()
)
_NUMBERED_ABBREV = frozenset(
    "no nos fig figs sec secs p pp art arts eq eqs vol ch chap ref refs tab para "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_BULLET_RE = re.compile(
    r"[ \t]*(?:[-*•·+][ \t]|\d{1,3}[.)][ \t]|\d{1,3}、|[(（]\d{1,3}[)）]|"
    r"[一二三四五六七八九十]{1,3}、|#{1,6}[ \t]|\|)"
)
_TABLE_ROW_RE = re.compile(r"\d[\d,.]*%?[ \t]+[-(]?\d[\d,.]*%?")  # two numeric columns
_WORD_BEFORE = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$")
CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]")


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _marker_at(text: str, i: int) -> re.Match[str] | None:
    return MARKER_RE.match(text, i)


def _period_ends(text: str, i: int) -> bool:
    """Whether the full stop at ``i`` ends a sentence (not a decimal, abbreviation, list
    number, file name or ellipsis dot)."""
    n = len(text)
    if i + 1 >= n:
        return True
    nxt = text[i + 1]
    if nxt.isdigit() or nxt in ".．" or nxt.isascii() and nxt.isalpha() or nxt in ",，:;":
        return False
    if not nxt.isspace():
        return True  # a closer, a CJK character, a marker
    j = i + 1
    while j < n and text[j].isspace():
        j += 1
    if j >= n or "\n" in text[i + 1 : j]:
        return True
    c = text[j]
    if _marker_at(text, j):
        return True
    if c.isascii() and c.islower():
        return False
    head = text[_line_start(text, i) : i]
    if re.fullmatch(r"[ \t]*\d{1,3}", head):
        return False  # "1. First item"
    match = _WORD_BEFORE.search(head)
    word = match.group(1) if match else ""
    low = word.lower()
    if "." in word:  # e.g. i.e. U.S.: a sentence ends there only before a typical first word
        following = re.match(r"[A-Za-z]+", text[j:])
        return bool(following) and following.group().lower() in _SENTENCE_STARTERS
    if low in _ALWAYS_ABBREV:
        return False  # Dr. vs. cf.
    return not (low in _NUMBERED_ABBREV and (c.isdigit() or c in "(（"))


def _newline_splits(text: str, i: int, table_rows: bool) -> bool:
    """A single line break ends a sentence only before a list item, heading or table row,
    after a heading or a colon, or as part of a blank line; PDF text wraps mid-sentence."""
    line = text[_line_start(text, i) : i].strip()
    if not line:
        return False
    rest = text[i + 1 :]
    stripped = rest.lstrip(_HSPACE)
    if stripped.startswith("\n"):
        return True
    if line.startswith("#") or line.endswith((":", "：")):
        return True
    next_line = stripped.split("\n", 1)[0]
    if table_rows and (_TABLE_ROW_RE.search(line) or _TABLE_ROW_RE.search(next_line)):
        return True  # a table row of a passage is its own unit: the viewer highlights the row
    return bool(_BULLET_RE.match(rest))


def _consume_markers(text: str, j: int) -> int:
    while True:
        k = j
        while k < len(text) and text[k] in _HSPACE:
            k += 1
        match = _marker_at(text, k)
        if not match:
            return j
        j = match.end()


def _ends(text: str, start: int, table_rows: bool) -> list[int]:
    ends: list[int] = []
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            if _newline_splits(text, i, table_rows):
                ends.append(i)
            i += 1
            continue
        if ch in _TERMINATORS or ch in ".．" and _period_ends(text, i):
            j = i + 1
            while j < n and (text[j] in _TERMINATORS or text[j] in _CLOSERS):
                j += 1
            if ch in "!?;" and j < n:
                c = text[j]
                if not (c.isspace() or CJK_CHAR.match(c) or _marker_at(text, j)):
                    i = j
                    continue
            j = _consume_markers(text, j)
            ends.append(j)
            i = j
            continue
        i += 1
    return ends


def has_words(segment: str) -> bool:
    return any(ch.isalnum() for ch in MARKER_RE.sub("", segment))


def split_from(text: str, start: int = 0, table_rows: bool = False) -> list[Sentence]:
    sentences: list[Sentence] = []
    prev = start
    for end in [*_ends(text, start, table_rows), len(text)]:
        seg = text[prev:end]
        lead = len(seg) - len(seg.lstrip())
        s, e = prev + lead, prev + len(seg.rstrip())
        prev = end
        if s >= e:
            continue
        if sentences and not has_words(text[s:e]):
            last = sentences[-1]  # a stray marker or closing punctuation: the previous one's
            sentences[-1] = Sentence(last.start, e, text[last.start : e])
        else:
            sentences.append(Sentence(s, e, text[s:e]))
    return sentences


def split_sentences(text: str, *, table_rows: bool = False) -> list[Sentence]:
    """Sentences of English, Chinese or mixed text; markers after a terminator belong to the
    sentence they end; abbreviations, decimals and section numbers stay whole.

    ``table_rows=True`` (for passage text) also ends a unit at each line with two numeric
    columns, so that a table row, not the whole table, is highlighted."""
    return split_from(text, 0, table_rows)


def _normalise_citations(citations: Citations) -> list[tuple[str, Span]]:
    if isinstance(citations, Mapping):
        return [(cid, (s[0], s[1])) for cid, spans in citations.items() for s in spans]
    return [(cid, (s[0], s[1])) for cid, s in citations]


def attach_citations(
    sentences: Sequence[Sentence], citations: Citations
) -> list[tuple[Sentence, tuple[str, ...]]]:
    """Each sentence with the ids of the markers inside its span, in the order they appear."""
    marks = sorted(_normalise_citations(citations), key=lambda m: m[1])
    out: list[tuple[Sentence, tuple[str, ...]]] = []
    for sentence in sentences:
        ids: list[str] = []
        for cid, (s, _e) in marks:
            if sentence.start <= s < sentence.end and cid not in ids:
                ids.append(cid)
        out.append((sentence, tuple(ids)))
    return out


# ----------------------------------------------------------------- factual or not
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
    text = MARKER_RE.sub(" ", text)
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
    content = [w for w in words if w[0].isdigit() or stem(w.lower()) not in STOPWORDS]
    if _GREETING_RE.match(text) and len(words) + cjk / 1.5 < 12 and not re.search(r"\d", text):
        return False
    return len(words) + cjk / 1.5 >= 3 and len(content) + cjk / 1.5 >= 2


# ----------------------------------------------------------------- words and numbers
STOPWORDS = frozenset(
    """a an the and or but nor so yet of to in on at by for with from into onto over under
    about above below between through during before after since until upon within without
    as than then that this these those there here it its it's they them their theirs we us
    our you your he him his she her i me my is are was were be been being am do does did
    doing have has had having can could may might must shall should will would not no yes
    also only just very more most less least such each every any all some both either
    neither other another same own which who whom whose what when where why how if while
    because although though whether per via etc e.g i.e according state states stated say
    says said note notes mention mentions mentioned document documents source sources
    passage passages text context provided based answer shown show shows
    thousand million billion trillion bn percent per cent
    der die das und oder ist sind ein eine einen einem einer zu von mit den dem des im auf
    für nicht sich es als auch an bei aus nach wird werden kann""".split()
)


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """Light, consistent English stemming: plurals, -ing, -ed, a final e."""
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
        if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
            word = word[:-1]
    elif word.endswith("ed") and not word.endswith("eed") and len(word) >= 5:
        word = word[:-2]
        if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
            word = word[:-1]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


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
    "kg": "kg 千克 公斤",
    "g": "g gram grams 克",
    "t": "t ton tons tonne tonnes 吨",
    "mpa": "mpa 兆帕",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "byte": "byte bytes 字节",
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
    r"(?:(?P<id>\d+(?:\.\d+){2,})|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
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


def numbers_in(text: str) -> list[Number]:
    text = MARKER_RE.sub(" ", unicodedata.normalize("NFKC", text).lower())
    text = re.sub(r"百分之([\d.]+|[零一二两三四五六七八九十点]+)", r"\1%", text)
    found: list[Number] = []
    for m in _NUMBER_RE.finditer(text):
        unit = _unit_of(m.group("unit") or "", text[m.end() :])
        if m.group("cur"):
            unit = _UNIT_OF.get(m.group("cur").strip(), unit)
        if m.group("id"):
            found.append(Number(m.group(), frozenset([m.group("id")]), unit))
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
