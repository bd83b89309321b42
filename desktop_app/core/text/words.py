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
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache

TOKENIZER_VERSION = "4"

CJK_RANGES = (
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\uac00-\ud7af"  # Hangul syllables
)
_TOKEN = re.compile(rf"([{CJK_RANGES}]+)|([^\W_]+)", re.UNICODE)
CJK_CHAR = re.compile(rf"[{CJK_RANGES}]")  # the one definition of a CJK character
_ALNUM_PART = re.compile(r"\d+|[^\W\d_]+")

# Very common English and German function words, and the words questions are phrased
# with: they carry no evidence and bloat postings.
STOPWORDS = frozenset(
    """a an and are as at be but by for from has have he her his i if in into is it its
    of on or our she that the their them then there these they this to was we were what
    when where which who whom why will with you your do does did not no can could would
    should may might must shall been being than so such also about over under between
    how according please
    der die das und ist von zu den mit sich des auf für im dem nicht ein eine als auch es
    an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen
    so zum war haben nur oder aber vor zur bis mehr durch man""".split()
)
# Words a claim can drop without changing what it states (the verifier's content words
# leave these out): the function words above, and the words answers use about sources.
CLAIM_STOPWORDS = STOPWORDS | frozenset(
    """a about above according after all als also although am an and another answer any are as
    at auch auf aus based be because been before bei being below between billion bn both
    but by can cent context could das dem den der des did die do document documents does
    doing during e.g each ein eine einem einen einer either es etc every for from für had
    has have having he her here him his how i i.e if im in into is ist it it's its just
    kann least less may me mention mentioned mentions might million mit more most must my
    nach neither nicht no nor not note notes oder of on only onto or other our over own
    passage passages per percent provided said same say says shall she should show shown
    shows sich since sind so some source sources state stated states such text than that
    the their theirs them then there these they this those though thousand through to
    trillion und under until upon us very via von was we werden were what when where
    whether which while who whom whose why will wird with within without would yes yet you
    your zu""".split()
)
# Words that say how to answer rather than what about ("Explain...", "Give the answer
# rounded to two decimal places"): indexed like any text, not searched for unless the
# question has nothing else.
QUESTION_WORDS = frozenset(
    """answer answers answered question questions explain explained give given response respond
    describe list listed calculate calculated round rounded decimal decimals format formatted
    directly assume provide tell show shown mentioned using utilizing utilising relying rely
    based primarily please kindly document documents""".split()
)
# Chinese question words: indexed like any text, but not searched for.
CJK_QUESTION_TERMS = frozenset(
    """什么 多少 哪些 哪个 哪一 哪几 哪里 怎么 怎样 如何 为什 是否 是什 是多 是哪 几种 几款
    几个 请问 吗""".split()
)
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
        elif word and (keep_stopwords or word not in STOPWORDS) and len(word) <= 40 and word not in skip:
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
    (:data:`QUESTION_WORDS`, 什么, 多少) left out. A question of stopwords only keeps them."""
    weights: dict[str, float] = {}
    for keep, skip in ((False, QUESTION_WORDS), (True, frozenset())):
        for term, unigram in _scan(text, keep, skip):
            if term not in CJK_QUESTION_TERMS:
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


def cjk_share(text: str) -> float:
    """Share of CJK characters among the letters of ``text`` (0 for empty text)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if CJK_CHAR.match(c)) / len(letters)


LANGUAGES = ("en", "zh", "de")  # the languages Folio prompts and answers in


def is_cjk_query(text: str) -> bool:
    """Whether a question is written in Chinese: CJK characters make 30% of its letters, or
    half of its units when each Latin word counts as one unit ("uniqueMPgraphic 和
    useMPgraphic 两种环境有什么区别？" is Chinese around two English names)."""
    if cjk_share(text) >= 0.3:
        return True
    cjk = sum(1 for c in text if CJK_CHAR.match(c))
    return cjk >= 2 and cjk >= len(_LATIN_WORD.findall(text))


# Function words that tell a German question from an English one (the two Latin-script
# languages Folio answers in). Words both languages share ("in", "was") are left out.
_GERMAN_WORDS = frozenset(
    "der die das den dem des ein eine einer eines einem einen und oder nicht ist sind wird werden "
    "wurde wurden kann können muss müssen soll sollen darf welche welcher welches welchen wie wo "
    "wann warum wieso wer wen wem wessen mit von für auf aus bei nach über unter zwischen durch "
    "gegen ohne sich auch noch nur schon wenn dass ob im am zum zur vom beim es sie er wir ihr "
    "gibt heißt heisst bedeutet nennt man hat haben jede jeder jedes alle kein keine dieser diese "
    "dieses bis seit zwei drei vier fünf sechs sieben acht neun zehn".split()
)
_ENGLISH_WORDS = frozenset(
    "the a an and or not is are was were be been will would can could must should may might "
    "what which who whom whose how where when why does do did of for on with from by at to "
    "this that these those it its there their they he she we you".split()
)
_LATIN_WORD = re.compile(r"[A-Za-zÄÖÜäöüß]+")


def _function_words(text: str) -> tuple[list[str], int, int]:
    """The Latin words of ``text`` (lower case, two letters or more: not "A" of "A5"), and
    how many of them are German and English function words."""
    found = [w.lower() for w in _LATIN_WORD.findall(text) if len(w) > 1]
    return found, sum(w in _GERMAN_WORDS for w in found), sum(w in _ENGLISH_WORDS for w in found)


def text_language(text: str) -> str | None:
    """The language a passage is written in, when its words say so plainly: "zh" for
    mostly CJK text, "de" or "en" when its German function words outnumber its English
    ones (or the reverse) by two to one, at least three of them; None for what they do
    not tell apart (a formula, a table, a list of names)."""
    if is_cjk_query(text):
        return "zh"
    _, german, english = _function_words(text)
    if german >= 3 and german >= 2 * english:
        return "de"
    if english >= 3 and english >= 2 * german:
        return "en"
    return None


def is_german(text: str) -> bool:
    """Whether a Latin-script question reads as German: more German function words than
    English ones (at least two), or one with an umlaut or ß in the text."""
    found, german, english = _function_words(text)
    if german > english and german >= 2:
        return True
    if german >= 1 and german >= english and any(c in text for c in "ÄÖÜäöüß"):
        return True
    # "Was besagt der Fixpunktsatz?": a leading "Was" before a word English does not have
    return (german >= 1 and german >= english and len(found) > 1 and found[0] == "was"
            and found[1] not in _ENGLISH_WORDS and text.lstrip().startswith("Was "))


def question_language(text: str, setting: str = "auto") -> str:
    """The language a question is answered in: the setting when it names one ("en", "zh",
    "de"), else "zh" for a question mostly in CJK characters, "de" for one that reads as
    German and "en" for any other. The one place this is decided: retrieval, the evidence
    gate and the prompt all ask here."""
    if setting in LANGUAGES:
        return setting
    if is_cjk_query(text):
        return "zh"
    return "de" if is_german(text) else "en"
