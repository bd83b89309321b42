"""Is this page text language, or garbage a broken font produced? Qt-free, stdlib only.

pypdf returns *something* for most pages, and some of it is not text: glyph names
(``/g135/g152``) from fonts without a Unicode map, character ids of CID fonts read as
code points (a soup of Myanmar, Sinhala, Thaana… where Chinese was printed), GBK bytes
read as Latin-1 (``¹Ø ÓÚ ºì``), replacement and control characters. Indexing that would
fill search results with noise, so each page gets a **garble score**.

The score is the worst of five detectors, each measured as a share and divided by its
own threshold, so ``score >= 1.0`` means GARBLED:

=================  =======================================================  =========
detector           counts (share of the page's non-space characters)         threshold
=================  =======================================================  =========
glyph names        characters inside ``/g123``, ``/uni4E2D``, ``(cid:12)``   0.05
unmapped font      characters drawn by a CID font with an Identity           0.10
                   encoding and no /ToUnicode (the extractor counts them)
junk               U+FFFD, private use, unassigned, surrogates, control      0.20
                   characters, combining marks with no base letter
Latin-1 mojibake   characters U+0080–U+00FF (GBK bytes read as Latin-1)      0.30
script soup        letters next to a letter of another script, other than    0.05
                   Latin↔CJK (share of adjacent letter pairs)
=================  =======================================================  =========

Tuned on ``../shared``: the 1,196 clean pages of the corpus score at most 0.43 (math
fonts in the German lecture notes emit control characters); the glyph-name pages of
TAMReview score 18 and up, the GBK page 3.3, the vertical Japanese page 10, and 97 of
the 123 text pages of the lshort mojibake book 1.05 and up (the rest carry so little
Chinese that the extractor's document rule catches them). A detector also needs at
least three offending characters, so one stray bullet does not condemn a page, and a
page with fewer than three letters or digits and no garbage is EMPTY (blank or a scan).
A test for "too few word-like tokens" (Latin words without vowels) was tried and
dropped: code listings in the Chinese manuals reach 47% such words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from desktop_app.core.types import PageQuality

GLYPH_NAME = re.compile(
    r"/(?:g|G|gid|cid|uni|glyph|index)[0-9A-Fa-f]{1,6}(?![A-Za-z])|\(cid:\d+\)"
)

_THRESHOLDS = {
    "glyph names instead of text": 0.05,
    "a font without a Unicode map": 0.10,
    "replacement or control characters": 0.20,
    "Latin-1 mojibake of CJK bytes": 0.30,
    "characters from unrelated scripts (mojibake)": 0.05,
}
# What a garbled page's message names as the reason (the detectors above).
GARBLE_REASONS = tuple(_THRESHOLDS)
_MIN_EVIDENCE = 3
_MIN_WORD_CHARS = 3
_MIN_LETTER_PAIRS = 10
_JUNK_CATEGORIES = frozenset({"Co", "Cn", "Cs"})
_CJK_WORDS = frozenset(
    {"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH", "HALFWIDTH", "IDEOGRAPHIC", "BOPOMOFO"}
)
_LATIN_WORDS = frozenset({"LATIN", "MATHEMATICAL", "MODIFIER", "DOUBLE-STRUCK", "SCRIPT"})


@dataclass(frozen=True)
class TextAssessment:
    """The verdict on one page's text. ``score >= 1`` means garbled; ``reason`` says why."""

    quality: PageQuality
    score: float
    reason: str = ""
    suspect_chars: int = 0  # glyph-name and unmapped-font characters: text a broken font drew


@lru_cache(maxsize=4096)
def letter_script(char: str) -> str:
    """A coarse script name for a letter: LATIN, CJK, GREEK, ARABIC, MYANMAR…"""
    if ord(char) < 0x250:
        return "LATIN"
    try:
        word = unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return "UNKNOWN"
    if word in _CJK_WORDS:
        return "CJK"
    if word in _LATIN_WORDS:
        return "LATIN"
    return word


def _is_junk(text: str, index: int, category: str) -> bool:
    char = text[index]
    if char == "\ufffd" or category in _JUNK_CATEGORIES:
        return True
    if category == "Cc":
        return char not in "\t\n\r"
    if category == "Mn":  # a combining mark must follow a letter (or another mark)
        return index == 0 or unicodedata.category(text[index - 1])[0] not in "LM"
    return False


def assess_text(text: str, unmapped_chars: int = 0) -> TextAssessment:
    """Score ``text`` (one page, as extracted) and classify it OK, EMPTY or GARBLED.

    ``unmapped_chars`` is how many of its non-space characters came from fonts that
    cannot be mapped to Unicode (the extractor knows the font of every run).
    """
    non_space = 0
    word_chars = 0
    junk = 0
    latin1 = 0
    pairs = 0
    foreign_switches = 0
    previous_script = ""
    for index, char in enumerate(text):
        if char.isspace():
            previous_script = ""
            continue
        non_space += 1
        if char.isalnum():
            word_chars += 1
        code = ord(char)
        if 0x80 <= code <= 0xFF:
            latin1 += 1
        category = unicodedata.category(char)
        if category[0] == "L":
            script = letter_script(char)
            if previous_script:
                pairs += 1
                if script != previous_script and {script, previous_script} != {"LATIN", "CJK"}:
                    foreign_switches += 1
            previous_script = script
        else:
            previous_script = ""
            if _is_junk(text, index, category):
                junk += 1
    if non_space == 0:
        return TextAssessment(PageQuality.EMPTY, 0.0)

    glyph_chars = sum(len(match.group()) for match in GLYPH_NAME.finditer(text))
    evidence = {
        "glyph names instead of text": glyph_chars,
        "a font without a Unicode map": unmapped_chars,
        "replacement or control characters": junk,
        "Latin-1 mojibake of CJK bytes": latin1,
        "characters from unrelated scripts (mojibake)": foreign_switches,
    }
    score = 0.0
    reason = ""
    for name, count in evidence.items():
        if count < _MIN_EVIDENCE:
            continue
        if name.startswith("characters from") and pairs < _MIN_LETTER_PAIRS:
            continue
        base = pairs if name.startswith("characters from") else non_space
        value = count / base / _THRESHOLDS[name]
        if value > score:
            score, reason = value, name
    suspect = glyph_chars + unmapped_chars
    if score >= 1.0:
        return TextAssessment(PageQuality.GARBLED, round(score, 3), reason, suspect)
    if word_chars < _MIN_WORD_CHARS:
        return TextAssessment(PageQuality.EMPTY, round(score, 3), "", suspect)
    return TextAssessment(PageQuality.OK, round(score, 3), "", suspect)
