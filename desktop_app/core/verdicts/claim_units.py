"""The content units the verifier compares a claim with a passage by: stemmed words
(generic ones at half weight), numbers, CJK bigrams and (at half weight) characters; a
passage's sentences analysed once (cached) and the claim's words a passage lacks. Qt-free,
no asyncio. Read by core/verdicts/claim_score.py, mismatch.py and verify.py; meaning.py is
handed :func:`content_units` as its ``units`` callable.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from desktop_app.core.text.sentences import Sentence, split_sentences
from desktop_app.core.text.words import CJK_CHAR, CJK_RANGES, CLAIM_STOPWORDS, stem
from desktop_app.core.types import Span
from desktop_app.core.verdicts.claims import Number, numbers_in, plain_text

__all__ = [
    "CJK_CHAR_WEIGHT", "LIGHT_STEMS", "LIGHT_WEIGHT", "Analysed", "analyse", "content_units",
    "unmatched_weight",
]

CJK_CHAR_WEIGHT = 0.5  # single CJK characters count half as much as bigrams
LIGHT_WEIGHT = 0.5  # generic words ("value", "resulted", "signals") count half

_CN_PARTICLES = "的了着吗呢吧啊呀"
_CN_FUNCTION_CHARS = frozenset(
    "的了着吗呢吧啊呀是在和与及或也都就而之其这那为对被把将于以等中有个上下一"
)
_CN_META = re.compile(
    r"根据(提供的|所给的|上述|以上)?(资料|文档|文件|材料|来源|上下文|内容|规定)?[，,]?|"
    r"(资料|文档|文件|材料|来源)(中)?(显示|表明|指出|提到|所述|记载)[，,：:]?"
)
_CN_NUMERALS = frozenset("零〇一二两三四五六七八九十百千万亿")

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
LIGHT_STEMS = frozenset(stem(w) for w in _LIGHT_WORDS)


def content_units(text: str) -> dict[str, float]:
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
class Analysed:
    spans: tuple[Span, ...]
    texts: tuple[str, ...]
    units: tuple[frozenset[str], ...]
    all_units: frozenset[str]
    numbers: tuple[Number, ...]


@functools.lru_cache(maxsize=1024)
def analyse(passage: str) -> Analysed:
    sentences = split_sentences(passage, table_rows=True) or [Sentence(0, len(passage), passage)]
    units = tuple(frozenset(content_units(s.text)) for s in sentences)
    return Analysed(
        spans=tuple((s.start, s.end) for s in sentences),
        texts=tuple(plain_text(s.text) for s in sentences),
        units=units,
        all_units=frozenset().union(*units),
        numbers=tuple(numbers_in(passage)),
    )



def unmatched_weight(units: Mapping[str, float], covered: set[str],
                     passage: frozenset[str]) -> float:
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
