"""Folio's own tokenizer for BM25: lowercase words, CJK as characters and bigrams. Qt-free.

The same function fills the postings table (:func:`term_counts`) and tokenises
questions (:func:`query_terms`), so a Chinese question matches Chinese text without a
word segmenter: ``"土地利用"`` indexes as the bigrams ``土地 地利 利用`` and, with a
lower weight at query time, the characters ``土 地 利 用`` (a two-character question
word still matches when the text splits it across a line break or a bigram boundary).

Postings store a 63-bit hash of each term (:func:`term_id`), so BM25 joins on integers
and needs no vocabulary table. Bump :data:`TOKENIZER_VERSION` whenever the terms a
text yields change: the store then rebuilds the postings from the stored chunk text.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_CHAR, CJK_RANGES

__all__ = [
    "CJK_CHAR", "CJK_RANGES", "claim_stopwords", "cjk_share", "estimate_tokens", "is_cjk_char", "is_cjk_query",
    "answer_language", "languages", "query_terms", "question_language", "stem",
    "stopwords", "term_counts", "term_id", "text_language", "tokenize", "unmarked_language",
]

TOKENIZER_VERSION = "4"

_TOKEN = re.compile(rf"([{CJK_RANGES}]+)|([^\W_]+)", re.UNICODE)
_ALNUM_PART = re.compile(r"\d+|[^\W\d_]+")

# Very common function words, and the words questions are phrased with: they carry no
# evidence and bloat postings (each language's ``stopwords``, core/text/lang/).
_stopwords = lang.compiled(lambda: lang.words("stopwords"))
# Words a claim can drop without changing what it states (the verifier's content words
# leave these out): the function words above, and the words answers use about sources.
_claim_stopwords = lang.compiled(lambda: lang.words("stopwords") | lang.words("claim_stopwords"))
# Words that say how to answer rather than what about ("Explain...", "Give the answer
# rounded to two decimal places"; Chinese 什么, 多少): indexed like any text, not searched
# for unless the question has nothing else.
_question_words = lang.compiled(lambda: lang.words("question_words", lang.latin()))
_cjk_question_terms = lang.compiled(
    lambda: lang.words("question_words", [x for x in lang.all_lexicons() if x.script == "cjk"]))


def stopwords() -> frozenset[str]:
    """The stopwords of every registered language."""
    return _stopwords()


def claim_stopwords() -> frozenset[str]:
    """The words a claim can drop without changing what it states, in every language."""
    return _claim_stopwords()


# A CJK character of a longer run also comes as bigrams: at query time it counts this much.
CJK_UNIGRAM_WEIGHT = 0.2


@lru_cache(maxsize=1 << 14)
def stem(word: str) -> str:
    """A deliberately small English suffix stripper: plurals, -ing and -ed, and a final
    e, so that "expense", "expenses", "increased" and "increasing" meet ("expens",
    "increas"). Words of four letters or fewer, and non-ASCII words, stay as they are."""
    if len(word) <= 4 or not word.isascii():
        return word
    if word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith(("ing", "ed")) and len(word) - (3 if word.endswith("ing") else 2) >= 3:
        word = word[: -3 if word.endswith("ing") else -2]
    elif word.endswith(("ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def _scan(text: str, keep_stopwords: bool, skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, bool]]:
    """(term, is the character of a longer CJK run) in text order. A word mixing letters
    and digits also yields its parts of two or more characters: ``fy2018`` gives
    ``fy2018 fy 2018``, so "FY2018" finds "fiscal 2018"."""
    text = unicodedata.normalize("NFKC", text).lower()
    stop = _stopwords()
    for match in _TOKEN.finditer(text):
        cjk, word = match.groups()
        if cjk:
            if len(cjk) == 1:
                yield cjk, False
                continue
            for i in range(len(cjk) - 1):
                yield cjk[i : i + 2], False
            for char in cjk:
                yield char, True
        elif word and (keep_stopwords or word not in stop) and len(word) <= 40 and word not in skip:
            yield stem(word), False
            if not word.isalpha() and not word.isdigit():
                for part in _ALNUM_PART.findall(word):
                    if len(part) > 1 and part != word:
                        yield stem(part), False


def tokenize(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Terms of ``text`` (with repeats): words, and CJK runs as bigrams (a lone CJK
    character as itself). For overlap measures; BM25 uses :func:`term_counts`."""
    return [term for term, unigram in _scan(text, keep_stopwords) if not unigram]


def term_counts(text: str) -> Counter[str]:
    """What the postings hold for ``text``: :func:`tokenize` plus every CJK character."""
    return Counter(term for term, _ in _scan(text, keep_stopwords=False))


def query_terms(text: str) -> dict[str, float]:
    """The BM25 terms of a question with their weights: how often each occurs, a CJK
    character of a longer run counting :data:`CJK_UNIGRAM_WEIGHT`, and question words
    (each language's ``question_words``: "explain", 什么, 多少) left out. A question of
    stopwords only keeps them."""
    weights: dict[str, float] = {}
    cjk_questions = _cjk_question_terms()
    for keep, skip in ((False, _question_words()), (True, frozenset[str]())):
        for term, unigram in _scan(text, keep, skip):
            if term not in cjk_questions:
                weights[term] = weights.get(term, 0.0) + (CJK_UNIGRAM_WEIGHT if unigram else 1.0)
        if weights:
            break
    return weights


@lru_cache(maxsize=1 << 18)
def term_id(term: str) -> int:
    """A stable 63-bit id for ``term`` (the same in every process and every run)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little") >> 1


def is_cjk_char(term: str) -> bool:
    """Whether ``term`` is a single CJK character (a unigram term)."""
    return len(term) == 1 and CJK_CHAR.match(term) is not None


def estimate_tokens(text: str, *, chars_per_token: float = 3.6, cjk_tokens: float = 0.9,
                    at_least: int = 1) -> int:
    """Folio's one estimate of a generator's tokens when no tokenizer is at hand: a CJK
    character costs ``cjk_tokens``, any other character 1/``chars_per_token`` (~4 a token
    for Latin text), rounded up, at least ``at_least``. The defaults are the evidence
    budget's (core/answer/evidence.py); a model server that cannot tokenize counts
    conservatively with 3 characters and 1 a CJK character, so that prompts are packed a
    little short, never over (core/models/server_http.py)."""
    cjk = len(CJK_CHAR.findall(text))
    return max(at_least, math.ceil(cjk * cjk_tokens + (len(text) - cjk) / chars_per_token))


def cjk_share(text: str) -> float:
    """Share of CJK characters among the letters of ``text`` (0 for empty text)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if CJK_CHAR.match(c)) / len(letters)


def languages() -> tuple[str, ...]:
    """The languages Folio prompts and answers in: every registered lexicon's code."""
    return lang.codes()


def is_cjk_query(text: str) -> bool:
    """Whether a question is written in Chinese: CJK characters make 30% of its letters, or
    half of its units when each Latin word counts as one unit ("uniqueMPgraphic 和
    useMPgraphic 两种环境有什么区别？" is Chinese around two English names)."""
    if cjk_share(text) >= 0.3:
        return True
    cjk = sum(1 for c in text if CJK_CHAR.match(c))
    return cjk >= 2 and cjk >= len(_latin_word().findall(text))


# A word of a Latin-script language: A-Z and the letters its lexicon adds (ä, ß).
_latin_word = lang.compiled(
    lambda: re.compile(f"[A-Za-z{''.join(dict.fromkeys(c for x in lang.latin() for c in x.letters))}]+"))


def _function_words(text: str) -> tuple[list[str], dict[str, int]]:
    """The Latin words of ``text`` (lower case, two letters or more: not "A" of "A5"), and
    how many of them are each Latin-script language's function words."""
    found = [w.lower() for w in _latin_word().findall(text) if len(w) > 1]
    return found, {x.code: sum(w in x.function_words for w in found) for x in lang.latin()}


def _cjk_code() -> str | None:
    return next((x.code for x in lang.all_lexicons() if x.script == "cjk"), None)


def unmarked_language(cjk: bool) -> str:
    """The language of a question nothing else marks: the CJK language for a question in
    CJK characters, else the default ("en"). :func:`question_language` falls back to it,
    and so does whatever reads a retrieval made without a language (a replayed bench row)."""
    return (_cjk_code() or lang.DEFAULT) if cjk else lang.DEFAULT


def answer_language(written: str, setting: str = "auto") -> str:
    """The language a question written in ``written`` is answered in: the setting when it
    names a registered language, else ``written``. Applies the setting to a language
    already decided (:func:`question_language` decides it)."""
    return setting if setting in lang.codes() else written


def text_language(text: str) -> str | None:
    """The language a passage is written in, when its words say so plainly: "zh" for
    mostly CJK text, a Latin-script language when its function words outnumber every other
    one's by two to one, at least three of them; None for what they do not tell apart (a
    formula, a table, a list of names)."""
    if is_cjk_query(text):
        return _cjk_code()
    _, counts = _function_words(text)
    for code, count in counts.items():
        others = max((n for c, n in counts.items() if c != code), default=0)
        if count >= 3 and count >= 2 * others:
            return code
    return None


def _reads_as(lexicon: lang.Lexicon, text: str, found: list[str], counts: dict[str, int]) -> bool:
    """Whether a Latin-script question reads as ``lexicon``'s language rather than the
    default one: more of its function words (at least two), or one with a letter of its
    own in the text, or one of its openers first before a word the default lacks."""
    mine, default = counts[lexicon.code], counts.get(lang.DEFAULT, 0)
    if mine > default and mine >= 2:
        return True
    if mine >= 1 and mine >= default and any(c in text for c in lexicon.letters):
        return True
    default_lexicon = lang.get(lang.DEFAULT)
    default_words = default_lexicon.function_words if default_lexicon is not None else frozenset()
    return (mine >= 1 and mine >= default and len(found) > 1 and found[0] in lexicon.openers
            and found[1] not in default_words and text.lstrip().startswith(found[0].capitalize() + " "))


def question_language(text: str, setting: str = "auto") -> str:
    """The language a question is answered in: the setting when it names a registered one,
    else the CJK language for a question mostly in CJK characters, a Latin-script language
    the question reads as (more of its function words than the default's), and the default
    ("en") for any other. The one place this is decided: retrieval, the evidence gate and
    the prompt all ask here."""
    if setting in lang.codes():
        return setting
    if is_cjk_query(text):
        return unmarked_language(cjk=True)
    found, counts = _function_words(text)
    readings = [x for x in lang.latin() if x.code != lang.DEFAULT and _reads_as(x, text, found, counts)]
    if not readings:
        return unmarked_language(cjk=False)
    return max(readings, key=lambda x: counts[x.code]).code
