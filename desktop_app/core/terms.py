"""Folio's own tokenizer for BM25: lowercase words, CJK as character bigrams. Qt-free.

The same function fills the postings table and tokenises queries, so a Chinese
question matches Chinese text without a word segmenter: ``"土地利用"`` becomes
``土地 地利 利用``. A lone CJK character (a run of one) is kept as a unigram.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_CJK_RANGES = (
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\uac00-\ud7af"  # Hangul syllables
)
_TOKEN = re.compile(rf"([{_CJK_RANGES}]+)|([^\W_]+)", re.UNICODE)
_CJK_CHAR = re.compile(rf"[{_CJK_RANGES}]")

# Very common English and German function words: they carry no evidence and bloat postings.
STOPWORDS = frozenset(
    """a an and are as at be but by for from has have he her his i if in into is it its
    of on or our she that the their them then there these they this to was we were what
    when where which who whom why will with you your do does did not no can could would
    should may might must shall been being than so such also about over under between
    der die das und ist von zu den mit sich des auf für im dem nicht ein eine als auch es
    an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen
    so zum war haben nur oder aber vor zur bis mehr durch man""".split()
)


def _light_stem(word: str) -> str:
    """A deliberately small English suffix stripper: plurals and -ing/-ed."""
    if len(word) <= 4 or not word.isascii():
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + keep
    return word


def tokenize(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Terms of ``text`` in order (with repeats)."""
    text = unicodedata.normalize("NFKC", text).lower()
    terms: list[str] = []
    for match in _TOKEN.finditer(text):
        cjk, word = match.groups()
        if cjk:
            if len(cjk) == 1:
                terms.append(cjk)
            else:
                terms.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
        elif word:
            if not keep_stopwords and word in STOPWORDS:
                continue
            if len(word) > 40:
                continue
            terms.append(_light_stem(word))
    return terms


def term_counts(text: str) -> Counter[str]:
    return Counter(tokenize(text))


def cjk_share(text: str) -> float:
    """Share of CJK characters among the letters of ``text`` (0 for empty text)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if _CJK_CHAR.match(c)) / len(letters)


def is_cjk_query(text: str) -> bool:
    return cjk_share(text) >= 0.3
