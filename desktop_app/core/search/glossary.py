"""Query expansion from a glossary: what a question calls X, the documents may call Y. Qt-free.

A reader asks for "capex"; the 10-K's cash-flow statement says "Purchases of property,
plant and equipment". The question asks for the "quick ratio"; the balance sheet only
lists the cash, the receivables and the current liabilities it is computed from. Neither
BM25 nor all-MiniLM-L6-v2 connects the two. A glossary entry names the phrases a
question may use (``ask``) and the words documents use for them (``find``); when a
question holds one of the phrases, :meth:`Glossary.expand` returns the ``find`` text,
which the retriever adds to the question at a lower weight (retrieve.py).

The built-in glossary is ``resources/glossary.toml`` (financial statements and ratios,
contracts, in English and Chinese). A user's own ``glossary.toml`` in the config folder
(same format) adds to it: entries for their field's abbreviations.

    [[entry]]
    ask = ["capex", "capital expenditure", "capital expenditures"]
    find = "purchases of property, plant and equipment; additions to property and equipment"
"""

from __future__ import annotations

import logging
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.text.words import cjk_share

logger = logging.getLogger(__name__)

FILENAME = "glossary.toml"


@dataclass(frozen=True)
class Entry:
    ask: tuple[str, ...]
    find: str


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _pattern(phrases: Iterable[str]) -> re.Pattern[str]:
    """One phrase of ``phrases`` as whole words (any run of spaces between them); a CJK
    phrase anywhere (Chinese has no spaces to mark words)."""
    parts = []
    for phrase in sorted({_normalise(p).strip() for p in phrases if p.strip()}, key=len, reverse=True):
        body = r"\s+".join(re.escape(word) for word in phrase.split())
        parts.append(body if cjk_share(phrase) > 0 else rf"(?<!\w){body}(?!\w)")
    return re.compile("|".join(parts) if parts else r"(?!)")


class Glossary:
    def __init__(self, entries: Sequence[Entry] = ()) -> None:
        self.entries = tuple(entries)
        self._patterns = [(_pattern(e.ask), e.find) for e in self.entries]

    def expand(self, question: str) -> str:
        """The ``find`` text of every entry the question asks about, joined ("" if none)."""
        text = _normalise(question)
        found = [find for pattern, find in self._patterns if pattern.search(text)]
        return "; ".join(dict.fromkeys(found))

    @classmethod
    def from_files(cls, paths: Iterable[Path]) -> Glossary:
        """Entries of every file that exists, in order. A file that cannot be read or
        parsed is skipped with a warning: search must not fail over a glossary."""
        entries: list[Entry] = []
        for path in paths:
            if not path.is_file():
                continue
            try:
                entries.extend(parse(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError) as exc:
                logger.warning("glossary %s skipped: %s", path, exc)
        return cls(entries)


def parse(text: str) -> list[Entry]:
    """Entries of a glossary file; ValueError names the first malformed entry."""
    data = tomllib.loads(text)
    out = []
    for i, raw in enumerate(data.get("entry", []), 1):
        ask, find = raw.get("ask"), raw.get("find")
        if isinstance(ask, str):
            ask = [ask]
        if not isinstance(ask, list) or not ask or not all(isinstance(a, str) and a.strip() for a in ask):
            raise ValueError(f"entry {i}: 'ask' must be a phrase or a list of phrases")
        if not isinstance(find, str) or not find.strip():
            raise ValueError(f"entry {i}: 'find' must be the words the documents use")
        out.append(Entry(tuple(ask), find.strip()))
    return out


def load_builtin() -> Glossary:
    """``resources/glossary.toml`` alone (benches and tests: no user's file)."""
    from desktop_app.core import paths

    return Glossary.from_files([paths.resources_dir() / FILENAME])


def load_default() -> Glossary:
    """The built-in glossary, then the user's own in the config folder."""
    from desktop_app.core import paths

    return Glossary.from_files([paths.resources_dir() / FILENAME, paths.config_dir() / FILENAME])
