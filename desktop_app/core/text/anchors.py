"""What a question names exactly, and whether a text says it. Qt-free.

A question often carries a handle that a passage answering it must repeat: a number (a
status code "429", a year "2010", a version "2.0", a figure "1.11") or a name ("HotpotQA",
"LuaLaTeX", "Golan"). When the library never mentions such a name, or none of the passages
found states such a number, the documents cannot state the answer, however close the rest
of the question's words come: "What does HTTP status code 429 mean?" over RFC 2616 (whose
4xx codes end at 417) finds the status-code page, and the model answers from memory.

- numbers: handles of three to four digits, or dotted ("429", "2010", "2.0", "7.4.1"),
  standing alone (not part of "FY2018" or "x432"). Shorter ones ("the 12 steps") are often
  spelled out in the text. Amounts are not handles: a question may give one for the answer
  to work with, and a table states ranges, not the reader's figure ("a 2500 kg vehicle",
  "$1,200", "15 %", "an income of 50000": a unit, a currency, thousands separators or five
  digits and more). Nor is a number the question computes with ("365 * (…) / COGS").
- names: a word with an inner capital ("HotpotQA", "WebGL", "xeCJK"), any Latin word of a
  Chinese question ("LMTX", "ctex"), and in English a capitalised word inside the sentence
  ("Golan v. Holder"). German capitalises every noun, so a German question's names are its
  inner-capital words. Acronyms of a Latin-script question are left out ("COGS" is "cost of
  sales" in the filing, "YYYY-MM-DD" a format), and so are words mixing letters and digits
  ("FY2018", "1040NR"): documents write them in pieces ("fiscal 2018").
- versions: a name and its version after a slash ("HTTP/2", "HTTP/1.1"), as one name: a
  library of HTTP/1.1 RFCs mentions "HTTP" and "2" but never "HTTP/2".
- A name one typing slip away from a word of the passages is taken as that word
  (:func:`near_miss`): "Netfilx" asks about Netflix.
- Across languages (an English question over a Chinese filing) an ordinary name is not
  looked for: the filing writes "Northeast Electric" as 东北电气, so retrieval decides.
  Only handles written the same in every language (:func:`written_alike`: "PDF.js",
  "xeCJK", "HTTP/2", "RFC6455") must still be mentioned (:func:`alike_handles` finds them).

Chosen on the tuning halves of bench/data/eval_*.json, FinanceBench and MMLongBench-Doc;
``bench/anchors.py`` prints what the rules refuse in each set and half.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from desktop_app.core.text import lang

# A number as a question writes it: "1,009" (thousands), "2.0" / "1.11" (versions,
# figures, decimals), "429"; not glued to letters or to another number's separator.
_NUMBER = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)(?![\w]|[.,]\d)")
_ARITHMETIC = re.compile(r"[*×÷/+=]\s*$|^\s*[*×÷/+=]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
# A protocol or format with its version after a slash: "HTTP/2", "HTTP/1.1". Its digits are
# too short for a number handle, and its name alone ("HTTP") is in every RFC.
_VERSIONED = re.compile(r"(?<![\w/])[A-Za-z][A-Za-z0-9]*/\d+(?:\.\d+)*(?![\w/]|\.\d)")
# A capitalised word after a lower-case word, a comma or a number (not the first word of
# the question, not "I"): a name in a language that capitalises only names (English).
_ENGLISH_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]{2,}\b")
MIN_NUMBER_CHARS = 3
MAX_HANDLE_DIGITS = 4  # "2010", "1012"; "50000" is an amount
_CURRENCY_BEFORE = re.compile(r"[$€£¥₹]\s*$|(?:USD|EUR|RMB|CNY)\s*$", re.IGNORECASE)
# After a number, a unit makes it an amount: symbols and SI units here, each language's
# words in its lexicon (``amount_units``: "percent", "Stunden", "元").
_unit_after = lang.compiled(lambda: re.compile(
    r"^\s*(?:%|‰|[kmcµ]?[gmlt]\b|kb\b|mb\b|gb\b|tb\b|kw\b|mw\b|w\b|v\b|"
    r"hz\b|khz\b|mhz\b|ms\b|s\b|sec|min\b|h\b|eur\b|usd\b|yuan\b|rmb\b|"
    rf"{lang.pattern(lambda x: x.amount_units)})",
    re.IGNORECASE))
_CJK_DIGITS = "〇一二三四五六七八九"
_CJK_DIGITS_ZERO = "零一二三四五六七八九"


# A handle with a dot or letters and digits in one word: "PDF.js", "RFC6455", "UTF8".
_ALIKE = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)+(?![\w])|(?<![\w.])"
                    r"(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z][A-Za-z0-9]{2,}(?![\w.])")


def written_alike(name: str) -> bool:
    """Whether ``name`` is written the same in every language: Latin letters with a digit,
    a dot, a slash or an inner capital ("PDF.js", "xeCJK", "HTTP/2", "RFC6455"). An
    ordinary name ("Northeast", "Electric") is translated or transliterated instead."""
    if not re.search(r"[A-Za-z]", name) or not re.fullmatch(r"[A-Za-z0-9./]+", name):
        return False
    return bool(re.search(r"[\d./]", name) or _INNER_CAPITAL.search(name))


def alike_handles(question: str, language: str) -> tuple[str, ...]:
    """The names of ``question`` that a document in another language writes the same way:
    its :func:`anchors` names that are :func:`written_alike`, and its dotted or
    letter-and-digit handles ("PDF.js", "RFC6455"), in order."""
    text = unicodedata.normalize("NFKC", question)
    found = [n for n in anchors(text, language).names if written_alike(n)]
    found += [m.group() for m in _ALIKE.finditer(text) if written_alike(m.group())
              and max(len(part) for part in m.group().split(".")) >= 2]  # not "e.g", "U.S"
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Anchors:
    numbers: tuple[str, ...] = ()  # as written: "1009", "2.0", "7.4.1"
    names: tuple[str, ...] = ()


def anchors(question: str, language: str) -> Anchors:
    """The numbers and names of ``question`` (language "en", "de", "zh": a lexicon's code),
    in order."""
    text = unicodedata.normalize("NFKC", question)
    numbers = [m.group() for m in _NUMBER.finditer(text) if _is_handle(text, m)]
    lexicon = lang.get(language)
    cjk = lexicon is not None and lexicon.script == "cjk"
    names: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        if not word.isalpha():
            continue
        if _INNER_CAPITAL.search(word) or (cjk and len(word) >= 2):
            names.append(word)
    if lexicon is not None and lexicon.names_capitalised:
        names += [m.group() for m in _ENGLISH_NAME.finditer(text)]
    names += [m.group() for m in _VERSIONED.finditer(text)]
    return Anchors(tuple(dict.fromkeys(numbers)), tuple(dict.fromkeys(names)))


def _is_handle(text: str, match: re.Match[str]) -> bool:
    """Whether the number at ``match`` names something (a code, a year, a version), not an
    amount or an operand."""
    number, before, after = match.group(), text[max(0, match.start() - 4):match.start()], text[match.end():]
    if len(number) < MIN_NUMBER_CHARS or "," in number:
        return False
    if "." not in number and len(number) > MAX_HANDLE_DIGITS:
        return False
    if _ARITHMETIC.search(before[-3:]) or _ARITHMETIC.search(after[:3]):
        return False
    return not (_CURRENCY_BEFORE.search(before) or _unit_after().match(after[:12]))


@lru_cache(maxsize=1024)
def _number_pattern(number: str) -> re.Pattern[str]:
    forms = {number}
    whole, _, fraction = number.partition(".")
    if fraction and whole.isdigit() and fraction.isdigit():
        forms.add(f"{whole},{fraction}")  # a German decimal comma
    if not fraction and len(whole) > 3:
        grouped = f"{int(whole):,}"
        forms |= {grouped, grouped.replace(",", "."), grouped.replace(",", " ")}
    if not fraction and len(whole) == 4:  # a year in Chinese digits: 二〇一八, 二零一八
        forms |= {"".join(digits[int(d)] for d in whole) for digits in (_CJK_DIGITS, _CJK_DIGITS_ZERO)}
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<!\d)(?<!\d[.,])(?:{alternatives})(?!\d|[.,]\d)")


def holds_number(text: str, number: str) -> bool:
    """Whether ``text`` states ``number`` (an :func:`anchors` number): "1009" is found as
    "1009", "1,009", "1.009" or "1 009", "1.5" as "1,5", "2018" as "二〇一八"; not inside
    "21009" or "1.111"."""
    return _number_pattern(number).search(unicodedata.normalize("NFKC", text)) is not None


MIN_NEAR_MISS = 5  # letters: a shorter name one edit away from a word is another word


def near_miss(name: str, words: set[str]) -> bool:
    """Whether a word of ``words`` (lower case) is one typing slip from ``name``: a letter
    added, dropped, changed, or two neighbours swapped ("netfilx", "neflix": "netflix")."""
    name = name.lower()
    if len(name) < MIN_NEAR_MISS:
        return False
    return any(abs(len(word) - len(name)) <= 1 and _one_edit(name, word) for word in words)


def _one_edit(a: str, b: str) -> bool:
    if a == b:
        return True
    if len(a) > len(b):
        a, b = b, a
    head = 0
    while head < len(a) and a[head] == b[head]:
        head += 1
    if len(a) < len(b):  # one letter more in b
        return a[head:] == b[head + 1:]
    if a[head + 1:] == b[head + 1:]:  # one letter changed
        return True
    swapped = head + 1 < len(a) and a[head] == b[head + 1] and a[head + 1] == b[head]
    return swapped and a[head + 2:] == b[head + 2:]
