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

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_CHAR, CJK_RANGES
from desktop_app.core.text.sentences import split_sentences
from desktop_app.core.text.words import claim_stopwords, stem
from desktop_app.core.types import Sentence, Span
from desktop_app.core.verdicts.claims import Number, numbers_in, plain_text

__all__ = [
    "CJK_CHAR_WEIGHT", "LIGHT_WEIGHT", "Analysed", "analyse", "content_units",
    "light_stems", "unmatched_weight",
]

CJK_CHAR_WEIGHT = 0.5  # single CJK characters count half as much as bigrams
LIGHT_WEIGHT = 0.5  # generic words ("value", "resulted", "signals") count half

# Of each language's lexicon: the CJK particles that split a run into words, its function
# characters (not content alone), its phrases about the sources ("根据提供的资料"), its
# numerals, and the words that name the kind of statement, not its content: a claim that
# leaves them out or uses another one says the same thing ("a value of 126 signals" / "if
# 126, ... are").
_particles = lang.compiled(lambda: re.compile(
    f"[{''.join(x.particles for x in lang.all_lexicons())}]" if any(x.particles for x in lang.all_lexicons())
    else r"(?!)"))
_function_chars = lang.compiled(lambda: lang.words("function_words", [x for x in lang.all_lexicons()
                                                                      if x.script == "cjk"]))
_source_phrases = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.source_phrases, latin_bounds=False)))
_numerals = lang.compiled(lambda: frozenset("".join(x.numerals for x in lang.all_lexicons())))
_light_words = lang.compiled(lambda: lang.words("light_words"))
_light_stems = lang.compiled(lambda: frozenset(stem(w) for w in _light_words()))
_latin_word = lang.compiled(lambda: re.compile(
    "[a-z{0}][a-z0-9{0}]*".format("".join(dict.fromkeys(c for x in lang.latin() for c in x.letters.lower())))))


def light_stems() -> frozenset[str]:
    """The stems of every language's ``light_words`` ("value", "resulted", "signals")."""
    return _light_stems()


def content_units(text: str) -> dict[str, float]:
    """Content units and their weights: stemmed words, CJK bigrams, CJK characters (half)."""
    text = _source_phrases().sub(" ", unicodedata.normalize("NFKC", text).lower())
    stop, light, function_chars = claim_stopwords(), _light_words(), _function_chars()
    units: dict[str, float] = {}
    for word in _latin_word().findall(text):
        root = stem(word)
        if len(root) > 1 and root not in stop and word not in stop:
            units[root] = LIGHT_WEIGHT if word in light else 1.0
    for number in numbers_in(text):  # a number is content: "#21015324"
        units["#" + max(number.values, key=len)] = 1.0
    for run in re.findall(f"[{CJK_RANGES}]+", text):
        for part in _particles().split(run):
            for a, b in zip(part, part[1:], strict=False):
                units[a + b] = 1.0
            for ch in part:
                if ch not in function_chars:
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
    numerals = _numerals()
    for unit, weight in units.items():
        if unit in covered or unit.startswith("#") or weight < 1.0:
            continue
        if CJK_CHAR.match(unit):
            if any(ch not in passage and ch not in numerals for ch in unit):
                total += 0.5
            continue
        total += 1.0
    return total
