"""The words of each language Folio reads, one :class:`Lexicon` per language (en.py, de.py,
zh.py), and the registry the rules ask for them. Qt-free, no asyncio.

A rule that needs words of a language (stopwords, a negation, a condition marker, a month)
never lists them itself: it compiles its pattern from every registered lexicon with
:func:`compiled`, which builds it once and again only after :func:`register` added a
language. A new language is one module of this package whose ``LEXICON`` fills a
:class:`Lexicon`: :func:`discover` finds and registers it when the package is imported, with
no edit anywhere else (its prompts are the default language's until it has its own,
core/answer/prompts.py).

Entries of the pattern fields (``negations``, ``modals``, ``conditions``, ...) are regular
expression fragments: a Latin-script lexicon's entries are matched as whole words, case
aside (the rule wraps them in ``\\b(?:...)\\b``), a CJK lexicon's as they are (Chinese has no
word boundaries). Order matters where one entry begins another: write the longer first
("only if" before "only", "如果" before "如").
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from desktop_app.core.text.lang.lexicon import Lexicon

__all__ = [
    "CJK_CHAR", "CJK_RANGES", "DEFAULT", "Lexicon", "all_lexicons", "compiled", "discover", "get", "latin",
    "of", "pattern", "register", "registered", "words",
]

# The one definition of a CJK character (Han, kana, Hangul): tokenising, splitting and every
# rule that tells Chinese text from Latin text read it.
CJK_RANGES = (
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\uac00-\ud7af"  # Hangul syllables
)
CJK_CHAR = re.compile(f"[{CJK_RANGES}]")

_LEXICONS: dict[str, Lexicon] = {}
_generation = 0
DEFAULT = "en"  # the language of a question nothing else marks

T = TypeVar("T")


def register(lexicon: Lexicon) -> None:
    """Add (or replace) a language: every rule compiles its patterns again on next use."""
    global _generation
    _LEXICONS[lexicon.code] = lexicon
    _generation += 1


def unregister(code: str) -> None:
    global _generation
    _LEXICONS.pop(code, None)
    _generation += 1


@contextmanager
def registered(lexicon: Lexicon) -> Iterator[Lexicon]:
    """``lexicon`` registered for the ``with`` block (tests add a language this way)."""
    register(lexicon)
    try:
        yield lexicon
    finally:
        unregister(lexicon.code)


def all_lexicons() -> tuple[Lexicon, ...]:
    """The registered languages, in registration order (en, de, zh first)."""
    return tuple(_LEXICONS.values())


def codes() -> tuple[str, ...]:
    return tuple(_LEXICONS)


def get(code: str) -> Lexicon | None:
    return _LEXICONS.get(code)


def of(code: str) -> Lexicon:
    """The lexicon of ``code``, else the default language's (for a code no lexicon has):
    how a rule asks a decided language what it needs (its script, its sentences)."""
    return _LEXICONS.get(code) or _LEXICONS.get(DEFAULT) or next(iter(_LEXICONS.values()))


def latin() -> tuple[Lexicon, ...]:
    return tuple(lex for lex in _LEXICONS.values() if lex.script == "latin")


def words(name: str, lexicons: Iterable[Lexicon] | None = None) -> frozenset[str]:
    """The union of a word-set field over ``lexicons`` (default: every registered one)."""
    out: set[str] = set()
    for lex in all_lexicons() if lexicons is None else lexicons:
        out |= getattr(lex, name)
    return frozenset(out)


def pattern(entries: Callable[[Lexicon], Iterable[str]], *, latin_bounds: bool = True,
            lexicons: Iterable[Lexicon] | None = None) -> str:
    """One alternation of every language's entries, in registration order: a Latin-script
    language's as whole words (``\\b(?:...)\\b``), a CJK language's as they are."""
    parts: list[str] = []
    for lex in all_lexicons() if lexicons is None else lexicons:
        items = [e for e in entries(lex) if e]
        if not items:
            continue
        if lex.script == "latin" and latin_bounds:
            parts.append(rf"\b(?:{'|'.join(items)})\b")
        else:
            parts.append("|".join(items))
    return "|".join(parts) if parts else r"(?!)"


def compiled(build: Callable[[], T]) -> Callable[[], T]:
    """``build``'s result, made on first use and again after the registry changed: how a
    rule keeps its pattern compiled once from the lexicons."""
    cache: list[tuple[int, T]] = []

    def current() -> T:
        if not cache or cache[0][0] != _generation:
            cache[:] = [(_generation, build())]
        return cache[0][1]

    return current


_NOT_LANGUAGES = frozenset({"lexicon"})  # the modules of this package that hold no language


def discover() -> None:
    """Register the ``LEXICON`` of every module of this package (each file beside this one
    but lexicon.py is a language): the default language first, then the others by module
    name, so that a language added later (its file dropped in) is found without an import
    here. Registering a language again replaces it in place."""
    found: dict[str, Lexicon] = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_") or module.name in _NOT_LANGUAGES:
            continue
        lexicon = vars(importlib.import_module(f"{__name__}.{module.name}")).get("LEXICON")
        if not isinstance(lexicon, Lexicon):
            raise TypeError(f"{__name__}.{module.name} holds no LEXICON: every module of this package is a language")
        found.setdefault(module.name, lexicon)
    for name in sorted(found, key=lambda name: (found[name].code != DEFAULT, name)):
        register(found[name])


discover()
