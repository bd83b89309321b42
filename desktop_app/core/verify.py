"""Per-sentence trust: split an answer into sentences, attach its citation markers, and
check each factual sentence against the passages it cites. Qt-free, no asyncio.

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

from desktop_app.core.types import ClaimVerdict, Span, Verdict

logger = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], np.ndarray]
Citations = Mapping[str, Sequence[Span]] | Sequence[tuple[str, Span]]

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
SUGGEST_PREFILTER = 20  # at most this many candidates (by word overlap) get a full score

# ----------------------------------------------------------------- citation markers
MARKER_RE = re.compile(
    r"[\[【［]\s*(?:\d{1,3}(?:\s*[-–~,，、]\s*\d{1,3})*|[0-9a-z]{7,8}(?:\s*[,，]\s*[0-9a-z]{7,8})*)"
    r"\s*[\]】］]"
)
_UNCLOSED_MARKER = re.compile(r"[\[【［][0-9A-Za-z,，、\s\-–~]{0,40}$")


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
_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]")


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
                if not (c.isspace() or _CJK_CHAR.match(c) or _marker_at(text, j)):
                    i = j
                    continue
            j = _consume_markers(text, j)
            ends.append(j)
            i = j
            continue
        i += 1
    return ends


def _has_words(segment: str) -> bool:
    return any(ch.isalnum() for ch in MARKER_RE.sub("", segment))


def _split(text: str, start: int = 0, table_rows: bool = False) -> list[Sentence]:
    sentences: list[Sentence] = []
    prev = start
    for end in [*_ends(text, start, table_rows), len(text)]:
        seg = text[prev:end]
        lead = len(seg) - len(seg.lstrip())
        s, e = prev + lead, prev + len(seg.rstrip())
        prev = end
        if s >= e:
            continue
        if sentences and not _has_words(text[s:e]):
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
    return _split(text, 0, table_rows)


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
    r"|glad to help|happy to help|hope (this|that) helps|let me know|feel free|good luck"
    r"|你好|您好|谢谢|感谢|不客气|好的|当然|希望(以上|这些|这)?.{0,8}(帮助|有用)"
    r"|如(有|果您?有)(其他|任何)?(问题|疑问))\b",
    re.IGNORECASE,
)


def _plain(text: str) -> str:
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
    text = _plain(unicodedata.normalize("NFKC", sentence_text))
    if not any(ch.isalnum() for ch in text):
        return False
    if text.endswith(("?", ":")) or _META_RE.search(text):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*", text)
    cjk = len(_CJK_CHAR.findall(text))
    content = [w for w in words if w[0].isdigit() or _stem(w.lower()) not in _STOPWORDS]
    if _GREETING_RE.match(text) and len(words) + cjk / 1.5 < 12 and not re.search(r"\d", text):
        return False
    return len(words) + cjk / 1.5 >= 3 and len(content) + cjk / 1.5 >= 2


# ----------------------------------------------------------------- text analysis
_STOPWORDS = frozenset(
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
_CN_PARTICLES = "的了着吗呢吧啊呀"
_CN_FUNCTION_CHARS = frozenset(
    "的了着吗呢吧啊呀是在和与及或也都就而之其这那为对被把将于以等中有个上下一"
)
_CN_META = re.compile(
    r"根据(提供的|所给的|上述|以上)?(资料|文档|文件|材料|来源|上下文|内容|规定)?[，,]?|"
    r"(资料|文档|文件|材料|来源)(中)?(显示|表明|指出|提到|所述|记载)[，,：:]?"
)
_NEGATION_RE = re.compile(
    r"\b(not|no|never|cannot|none|neither|nor|without)\b|n't\b|"
    r"不(?!同|仅|但|论|过|久|断)|没有|无(?!论)|未(?!来)|禁止|严禁|勿|非(?!常)"
)
# bounds and idioms that contain a negation word but state no negation
_NOT_NEGATION_RE = re.compile(
    r"\b(?:not only|(?:if it )?were not for|were it not for|no (?:later|more|less|fewer) than"
    r"|not (?:later|more|less|fewer) than|not exceed(?:ing)?)\b|"
    r"不得?(?:少于|多于|超过|低于|高于|大于|小于|迟于|早于)|不晚于|不早于"
)
_UP_RE = re.compile(
    r"\b(?:increas\w*|rose|ris(?:e|es|en|ing)|gr[eo]w\w*|up|higher|gain\w*|improv\w*)\b|"
    r"增长|增加|上升|提高|上涨|提升|增幅"
)
_DOWN_RE = re.compile(
    r"\b(?:decreas\w*|declin\w*|fell|fall\w*|drop\w*|down|lower|loss\w*|reduc\w*)\b|"
    r"下降|减少|降低|下跌|下滑|降幅|亏损"
)
_CLAUSE_RE = re.compile(r"[^,，;；:：。!?！？]+")


@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
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


def _units(text: str) -> dict[str, float]:
    """Content units and their weights: stemmed words, CJK bigrams, CJK characters (half)."""
    text = _CN_META.sub(" ", unicodedata.normalize("NFKC", text).lower())
    units: dict[str, float] = {}
    for word in re.findall(r"[a-zäöüß][a-z0-9äöüß]*", text):
        stem = _stem(word)
        if len(stem) > 1 and stem not in _STOPWORDS and word not in _STOPWORDS:
            units[stem] = 1.0
    for run in re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]+", text):
        for part in re.split(f"[{_CN_PARTICLES}]", run):
            for a, b in zip(part, part[1:], strict=False):
                units[a + b] = 1.0
            for ch in part:
                if ch not in _CN_FUNCTION_CHARS:
                    units.setdefault(ch, CJK_CHAR_WEIGHT)
    return units


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
    if _CJK_CHAR.match(word):
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
class _Number:
    surface: str
    values: frozenset[str]  # the value as written and scaled ("1.2", "1200000000")
    unit: str | None


def _numbers(text: str) -> list[_Number]:
    text = MARKER_RE.sub(" ", unicodedata.normalize("NFKC", text).lower())
    text = re.sub(r"百分之([\d.]+|[零一二两三四五六七八九十点]+)", r"\1%", text)
    found: list[_Number] = []
    for m in _NUMBER_RE.finditer(text):
        unit = _unit_of(m.group("unit") or "", text[m.end() :])
        if m.group("cur"):
            unit = _UNIT_OF.get(m.group("cur").strip(), unit)
        if m.group("id"):
            found.append(_Number(m.group(), frozenset([m.group("id")]), unit))
            continue
        if m.group("cn"):
            value = _cn_value(m.group("cn"))
        else:
            value = float(m.group("num").replace(",", ""))
        values = {_fmt(value)}
        if m.group("scale"):
            values.add(_fmt(value * _SCALE[m.group("scale")]))
        found.append(_Number(m.group().strip(), frozenset(values), unit))
    return found


def _missing_numbers(claim: Sequence[_Number], passage: Sequence[_Number]) -> list[str]:
    """Numbers of the claim the passage does not state with the same value and a compatible
    unit (a bare number in the passage, e.g. in a table, is compatible with any unit)."""
    missing = []
    for number in claim:
        units = {p.unit for p in passage if p.values & number.values}
        if not units or number.unit is not None and number.unit not in units and None not in units:
            missing.append(number.surface)
    return missing


@dataclass(frozen=True)
class _Analysed:
    spans: tuple[Span, ...]
    texts: tuple[str, ...]
    units: tuple[frozenset[str], ...]
    all_units: frozenset[str]
    numbers: tuple[_Number, ...]


@functools.lru_cache(maxsize=1024)
def _analyse(passage: str) -> _Analysed:
    sentences = split_sentences(passage, table_rows=True) or [Sentence(0, len(passage), passage)]
    units = tuple(frozenset(_units(s.text)) for s in sentences)
    return _Analysed(
        spans=tuple((s.start, s.end) for s in sentences),
        texts=tuple(_plain(s.text) for s in sentences),
        units=units,
        all_units=frozenset().union(*units),
        numbers=tuple(_numbers(passage)),
    )


def _negated(text: str) -> bool:
    text = re.sub(r"\([^()]*\)|（[^（）]*）", " ", text.lower())  # "304 (Not Modified)" is a name
    return bool(_NEGATION_RE.search(_NOT_NEGATION_RE.sub(" ", text)))


def _direction(text: str) -> int:
    low = text.lower()
    return int(bool(_UP_RE.search(low))) - int(bool(_DOWN_RE.search(low)))


def _polarity_conflict(
    claim: str, units: Iterable[str], numbers: Sequence[_Number], window: Sequence[str]
) -> str | None:
    """Return "negation" or "direction" when the passage clauses that state the claim say the
    opposite ("must not" vs "must", "rose 12%" vs "fell 12%"), else None."""
    claim_units = set(units)
    clauses = [c for text in window for c in _CLAUSE_RE.findall(text)]
    values = {v for n in numbers for v in n.values}
    anchored = [c for c in clauses if values & {v for n in _numbers(c) for v in n.values}]
    directions = {_direction(c) for c in anchored} - {0}
    claim_direction = _direction(claim)
    if claim_direction and directions == {-claim_direction}:
        return "direction"
    relevant = []
    for clause in clauses:
        clause_units = set(_units(clause))
        matched = len(clause_units & claim_units)
        if matched >= 2 and matched >= 0.4 * len(clause_units):
            relevant.append(clause)
    if relevant and _negated(claim) != any(_negated(c) for c in relevant):
        return "negation"
    return None


# ----------------------------------------------------------------- scoring one claim
@dataclass(frozen=True)
class ClaimScore:
    verdict: Verdict  # SUPPORTED, PARTIAL or UNSUPPORTED
    score: float  # in [0, 1]
    support: tuple[Span, ...]  # best-supporting passage sentences, offsets into the passage
    reason: str
    coverage: float = 0.0  # share of the claim's content units found in ``support``
    cosine: float | None = None  # best sentence cosine, when an embedder was given


def _verdict_for(score: float) -> Verdict:
    if score >= SUPPORTED_MIN:
        return Verdict.SUPPORTED
    return Verdict.PARTIAL if score >= PARTIAL_MIN else Verdict.UNSUPPORTED


def _cosines(embed: Embed, claim: str, texts: Sequence[str]) -> np.ndarray:
    vectors = np.asarray(embed([claim, *texts]), dtype=np.float32)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors[1:] @ vectors[0]


def score_claim(sentence: str, passage: str, embed: Embed | None = None) -> ClaimScore:
    """How well ``passage`` supports ``sentence`` (markers in the sentence are ignored)."""
    claim = _plain(sentence)
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
    latin = sum(w for u, w in units.items() if not _CJK_CHAR.search(u))
    if embed is not None and total and latin / total >= EMBED_MIN_LATIN_SHARE:
        cos = _cosines(embed, claim, p.texts)
        top = int(np.argmax(cos))
        cosine = float(cos[top])
        lifted = EMBED_WEIGHT * min(max((cosine - COS_FLOOR) / (COS_CEIL - COS_FLOOR), 0.0), 1.0)
        lifted += (1 - EMBED_WEIGHT) * coverage
        if lifted > score:
            score = lifted
            picks = [top, *(i for i in picks if i != top)]
    claim_numbers = _numbers(claim)
    if total == 0 and claim_numbers:
        score = 1.0 if not _missing_numbers(claim_numbers, p.numbers) else 0.0
    support = tuple(sorted(p.spans[i] for i in picks))
    missing = _missing_numbers(claim_numbers, p.numbers)
    if missing:
        stated = ", ".join(dict.fromkeys(n.surface for n in p.numbers)) or "none"
        reason = f"the passage does not state {', '.join(missing)} (numbers there: {stated[:80]})"
        score = min(score, NUMBER_MISMATCH_CAP)
        return ClaimScore(Verdict.UNSUPPORTED, score, support, reason, coverage, cosine)
    verdict = _verdict_for(score)
    reason = f"{coverage:.0%} of the claim's content found in {len(picks)} passage sentence(s)"
    if cosine is not None:
        reason += f"; closest sentence cosine {cosine:.2f}"
    if claim_numbers:
        reason += "; numbers agree"
    conflict = _polarity_conflict(claim, units.keys(), claim_numbers, [p.texts[i] for i in picks])
    if conflict == "direction":
        reason = "the passage states the number with the opposite direction (rise vs fall)"
        score = min(score, NUMBER_MISMATCH_CAP)
        return ClaimScore(Verdict.UNSUPPORTED, score, support, reason, coverage, cosine)
    if conflict:  # one level down, and the score into that level's band
        if verdict is Verdict.SUPPORTED:
            verdict, score = Verdict.PARTIAL, min(score, SUPPORTED_MIN - 0.01)
        elif verdict is Verdict.PARTIAL:
            verdict, score = Verdict.UNSUPPORTED, min(score, PARTIAL_MIN - 0.01)
        reason += f"; {conflict} differs from the passage"
    if verdict is Verdict.UNSUPPORTED and bool(_CJK_CHAR.search(claim)) != bool(
        _CJK_CHAR.search(passage)
    ):
        reason += "; claim and passage are in different scripts"
    return ClaimScore(verdict, min(max(score, 0.0), 1.0), support, reason, coverage, cosine)


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
        units = _units(_plain(claim)).keys()
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


def all_unsupported(verdicts: Iterable[ClaimVerdict]) -> bool:
    """True when the answer states facts and none of them is backed: every factual sentence
    is unsupported or uncited, and Folio found no source for it either (no ``suggested``).
    The window then shows a banner."""
    factual = [v for v in verdicts if v.verdict is not Verdict.NOT_FACTUAL]
    return bool(factual) and all(
        v.verdict in (Verdict.UNSUPPORTED, Verdict.UNCITED) and v.suggested is None for v in factual
    )


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
        sentences = _split(text, self._offset)
        if len(sentences) < 2:
            return []
        tail = text[sentences[-2].end :]
        first_line = tail.lstrip().split("\n", 1)[0]
        if not _has_words(_UNCLOSED_MARKER.sub("", first_line)) or re.fullmatch(
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
        return self._emit(_split(self._text, self._offset), self._citations)
