"""Sentences of an answer or a passage: sentence splitting (Latin and CJK punctuation,
abbreviations and decimals kept whole, the citation markers after a full stop kept with
the sentence they end, table rows of a passage as units of their own) and which markers
belong to which sentence. Qt-free, no asyncio.

The tracker, the verifier and the evidence localisation all split with this module; the
marker grammar is core/text/markers.py, words and CJK are core/text/words.py, the
abbreviations of each language its lexicon (core/text/lang/).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_CHAR
from desktop_app.core.text.markers import marker_end, strip_markers
from desktop_app.core.types import Citations, Sentence, Span

# ----------------------------------------------------------------- sentence splitting
_CJK_TERMINATORS = "。！？；"
_TERMINATORS = _CJK_TERMINATORS + "!?;"
_CLOSERS = "\"'”’)）」』》〉*"
_HSPACE = " \t\u00a0\u3000"
# Words of each language (core/text/lang/): abbreviations a full stop does not end a
# sentence after ("Dr.", "bzw."), those that stand before a number ("Fig. 3", "Abs. 2"), the
# words a sentence may start with after "U.S.", and the nouns after an ordinal ("28. Oktober").
_always_abbrev = lang.compiled(lambda: lang.words("abbreviations"))
_sentence_starters = lang.compiled(lambda: lang.words("sentence_starters"))
_numbered_abbrev = lang.compiled(lambda: lang.words("numbered_abbreviations"))
_ordinal_next = lang.compiled(lambda: re.compile(
    rf"(?:{lang.pattern(lambda x: x.ordinal_nouns, latin_bounds=False)})\b"))
_BULLET_RE = re.compile(
    r"[ \t]*(?:[-*•·+][ \t]|\d{1,3}[.)][ \t]|\d{1,3}、|[(（]\d{1,3}[)）]|"
    r"[一二三四五六七八九十]{1,3}、|#{1,6}[ \t]|\|)"
)
# two numeric columns ("126, 0, 124" is a list in a sentence, not columns)
_TABLE_ROW_RE = re.compile(r"\d(?:[\d.]|,\d)*%?[ \t]+[-(]?\d[\d,.]*%?")
_WORD_BEFORE = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$")


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _marker_at(text: str, i: int) -> int | None:
    """The end of a citation marker that opens at ``i`` (any style), else None."""
    return marker_end(text, i)


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
    if j >= n:
        return True
    c = text[j]
    head = text[_line_start(text, i) : i]
    match = _WORD_BEFORE.search(head)
    word = match.group(1) if match else ""
    low = word.lower()
    if c.isdigit() and low in _numbered_abbrev():
        return False  # "Abs. 2", "S. 301", also wrapped before its number ("auf S.\n301f")
    if "\n" in text[i + 1 : j]:
        return True
    if _marker_at(text, j) is not None:
        return True
    if c.isascii() and c.islower():
        return False
    if re.fullmatch(r"[ \t]*\d{1,3}", head):
        return False  # "1. First item"
    if re.search(r"(?:^|[\s(])\d{1,4}$", head) and _ordinal_next().match(text, j):
        return False  # an ordinal: "am 28. Oktober", "die 3. Auflage", "im 19. Jahrhundert"
    if "." in word:  # e.g. i.e. U.S.: a sentence ends there only before a typical first word
        following = re.match(r"[A-Za-z]+", text[j:])
        return following is not None and following.group().lower() in _sentence_starters()
    if low in _always_abbrev():
        return False  # Dr. vs. cf.
    following = re.match(r"[A-Za-z]+\.?", text[j:])
    if len(word) == 1 and following is not None:
        if re.fullmatch(r"[A-Za-z]\.", following.group()):
            return False  # "U. S.", "z. B.", "d. h.": spaced initials
        starter = following.group().rstrip(".").lower() in _sentence_starters()
        if re.search(r"(?:^|[\s(])[A-Za-z]\.[ \t]?[A-Za-z]$", head) and not starter:
            return False  # the end of spaced initials: "U. S. Army", "d. h. Werte"
        if word.isupper() and not starter:
            return False  # an initial: "John F. Kennedy"
    return not (low in _numbered_abbrev() and c in "(（")


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
        end = _marker_at(text, k)
        if end is None:
            return j
        j = end


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
                if not (c.isspace() or CJK_CHAR.match(c) or _marker_at(text, j) is not None):
                    i = j
                    continue
            j = _consume_markers(text, j)
            ends.append(j)
            i = j
            continue
        i += 1
    return ends


def has_words(segment: str) -> bool:
    return any(ch.isalnum() for ch in strip_markers(segment))


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


_CLAUSE_END = re.compile(r"[；;][\s\"'”’)）」』》〉*]*$")


def ends_clause(sentence: Sentence) -> bool:
    """Whether ``sentence`` ends at a semicolon: a clause of a longer sentence."""
    return bool(_CLAUSE_END.search(sentence.text))


def attach_citations(
    sentences: Sequence[Sentence], citations: Citations
) -> list[tuple[Sentence, tuple[str, ...]]]:
    """Each sentence with the ids of the markers inside its span, in the order they appear.

    A clause that ends at a semicolon without a marker of its own shares the markers of the
    clause that completes the sentence ("前者只生成一份图形；后者每次都要生成图形 [1]。":
    [1] is the source of both halves), as a reader takes them."""
    marks = sorted(_normalise_citations(citations), key=lambda m: m[1])
    out: list[tuple[Sentence, tuple[str, ...]]] = []
    for sentence in sentences:
        ids: list[str] = []
        for cid, (s, _e) in marks:
            if sentence.start <= s < sentence.end and cid not in ids:
                ids.append(cid)
        out.append((sentence, tuple(ids)))
    for i in range(len(out) - 2, -1, -1):
        clause, own = out[i]
        if not own and ends_clause(clause) and out[i + 1][1]:
            out[i] = (clause, out[i + 1][1])
    return out
