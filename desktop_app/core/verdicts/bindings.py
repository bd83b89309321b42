"""What a passage binds to what, and a claim may unbind: a condition to the statement it
governs ("SHOULD do X if they provide Y", "若……，将……"), a possessor to its noun (the
client's nonce is not the server's), a number to the group it is given for ("16 for large
and 4 for small"), a ticked box to its option (□ 是 √ 否). core/verdicts/meaning.py calls
these with the passage clauses that best state a claim; each returns the passage's words
that the claim goes against, or None. Qt-free, no asyncio; kept generic (words, not
documents): bench/verdicts.py measures them on pairs they were not written from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_RANGES

Units = Callable[[str], Mapping[str, float]]

# ----------------------------------------------------------------- conditions after the statement
# Markers that make what they govern conditional wherever they stand ("X if Y", "X unless
# Y"): each language's ``conditions`` (core/text/lang/); the looser "when", "如" mostly say
# when something happens, not whether. A claim states a condition or scope of its own with
# any of them, or with "only", "时" (``scope_words``).
_condition = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.conditions), re.IGNORECASE))
_claim_condition = lang.compiled(lambda: re.compile(
    lang.pattern(lambda x: (*x.conditions, *x.loose_conditions, *x.scope_words)), re.IGNORECASE))
_condition_stop = lang.compiled(lambda: re.compile(
    rf"[,，.;；。!?！？]|{lang.pattern(lambda x: x.consequences)}", re.IGNORECASE))


def states_condition(claim: str) -> bool:
    """Whether the claim states a condition or scope of its own ("if", "only", "时")."""
    return bool(_claim_condition().search(claim))


def _share(units: Units, text: str, claim_units: Mapping[str, float]) -> float:
    got = {u: w for u, w in units(text).items() if not u.startswith("#") or u in claim_units}
    total = sum(got.values())
    return sum(w for u, w in got.items() if u in claim_units) / total if total else 1.0


def dropped_condition(units: Units, claim: str, claim_units: Mapping[str, float], sentence: str,
                      start: int, end: int) -> str | None:
    """The condition that follows the clause ``sentence[start:end]`` (which states the claim)
    in its own sentence, when the claim leaves it out: "... SHOULD be able to handle URIs
    of unbounded length if they provide GET-based forms" for "Servers should handle URIs
    of unbounded length". None when the claim states a condition of its own."""
    if states_condition(claim):
        return None
    for m in _condition().finditer(sentence, start + 1):
        before = sentence[start : m.start()]
        if _share(units, before, claim_units) < 0.3 or sum(
            w for u, w in units(before).items() if u in claim_units
        ) < 1.5:
            return None  # the condition is not after the claim's words
        if m.start() > end and re.search(r"[,，]", sentence[end : m.start()].strip(" ,，")):
            return None  # another clause lies between: the condition may be that clause's
        stop = _condition_stop().search(sentence, m.end())
        condition = sentence[m.end() : stop.start() if stop is not None else len(sentence)]
        if not units(condition):
            return None
        if _share(units, condition, claim_units) < 0.5:
            return sentence[start : stop.start() if stop is not None else len(sentence)].strip(" ,，")
        return None
    return None


# ----------------------------------------------------------------- possessors
def _counterparts() -> dict[str, str]:
    """Each party of every language's ``parties`` and its counterpart ("client" -> "server")."""
    out: dict[str, str] = {}
    for lexicon in lang.all_lexicons():
        for a, b in lexicon.parties:
            out.update(dict.fromkeys(a.split("|"), b))
            out.update(dict.fromkeys(b.split("|"), a))
    return out


def _owned_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    party = "|".join(sorted(_counterparts(), key=len, reverse=True)) or r"(?!)"
    return (re.compile(rf"\b({party})(?:s?['’]s?)\s+(?:own\s+)?([a-z][a-z-]+)", re.IGNORECASE),
            re.compile(rf"\b([a-z][a-z-]+)\s+of\s+(?:the|a|an|each|every)\s+({party})s?\b", re.IGNORECASE),
            re.compile(rf"({party})的?([{CJK_RANGES}]{{2}})"))


_COUNTERPART = lang.compiled(_counterparts)
_OWNED = lang.compiled(_owned_patterns)


def _owned(text: str) -> set[tuple[str, str]]:
    """(party, thing) pairs: "client's nonce" and "nonce of the client" -> (client, nonce)."""
    owned, of, owned_cjk = _OWNED()
    pairs = {(m.group(1).lower(), m.group(2).lower().rstrip("s")) for m in owned.finditer(text)}
    pairs |= {(m.group(2).lower(), m.group(1).lower().rstrip("s")) for m in of.finditer(text)}
    pairs |= {(m.group(1), m.group(2)) for m in owned_cjk.finditer(text) if len(m.group(1)) > 1}
    return pairs


def swapped_owner(claim: str, passage: str) -> tuple[str, str] | None:
    """(the claim's party, the passage's) when the claim gives a thing to one party (the
    server's nonce) and the passage gives it only to the other (the client's nonce)."""
    theirs = _owned(passage)
    for party, thing in _owned(claim):
        other = _COUNTERPART().get(party)
        if other is None or (party, thing) in theirs:
            continue
        if any(p in other.split("|") and t == thing for p, t in theirs):
            return party, next(p for p, t in theirs if t == thing and p in other.split("|"))
    return None


# ----------------------------------------------------------------- numbers given per group
_FOR_GROUP = re.compile(
    r"(?<![\w.])(\d+(?:[.,]\d+)*)\s*(?:%|[a-z]{1,3}\b)?\s+(?:for|on)\s+(?:the\s+|a\s+)?([A-Za-z][\w-]+)",
    re.IGNORECASE,
)


def _per_group(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).replace(",", ""), m.group(2).lower()) for m in _FOR_GROUP.finditer(text)]


def regrouped(claim: str, passage: str) -> str | None:
    """The number the passage gives the claim's group, when the claim gives that group a
    number the passage gives another group ("4 for large" where the passage says "16 for
    large and 4 for small")."""
    theirs = _per_group(passage)
    if len(theirs) < 2:
        return None
    for number, group in _per_group(claim):
        if (number, group) in theirs:
            continue
        for_group = {n for n, g in theirs if g == group}
        for_number = {g for n, g in theirs if n == number}
        if for_group and for_number and number not in for_group:
            return sorted(for_group)[0]
    return None


# ----------------------------------------------------------------- tick boxes
_BOX = "□☐▢"
_TICK = "√✓✔☑☒■▣"
_OPTION = re.compile(rf"([{_BOX}{_TICK}])\s*([^\s{_BOX}{_TICK}]{{1,12}})")
_YES_NO = {"是": True, "否": False, "有": True, "无": False, "适用": True, "不适用": False,
           "yes": True, "no": False}


def tick_answer(claim: str, passage: str, negated: Callable[[str], bool], units: Units,
                claim_units: Mapping[str, float]) -> tuple[bool, str] | None:
    """Whether the claim answers the question of the passage's tick boxes as the ticked box
    does, with the question and the ticked option: (False, "……是否经过审计 否") for
    "……经过审计" where the passage has "……是否经过审计 □ 是 √ 否". Each group of boxes
    answers the text before it (since the previous group); None when no group answers the
    claim's question or the claim picks no option."""
    groups = list(re.finditer(rf"(?:[{_BOX}{_TICK}]\s*[^\s{_BOX}{_TICK}]{{1,12}}\s*){{2,}}", passage))
    previous = 0
    for group in groups:
        lines = passage[previous : group.start()].strip().split("\n")
        previous = group.end()
        # the question is the line before the boxes, or the two lines before them
        question = next((q for q in (lines[-1], "\n".join(lines[-2:]))
                         if sum(w for u, w in units(q).items() if u in claim_units)
                         >= 0.6 * sum(claim_units.values())), None)
        if question is None:
            continue
        options = _OPTION.findall(group.group())
        ticked = [o for mark, o in options if mark in _TICK]
        unticked = [o for mark, o in options if mark in _BOX]
        if len(ticked) != 1 or not unticked:
            return None
        chosen = ticked[0].lower()
        quote = f"{' '.join(question.split()[-12:])} {ticked[0]}"
        low = claim.lower()
        named = [o.lower() for o in sorted([*ticked, *unticked], key=len, reverse=True)
                 if len(o) > 1 and o.lower() in low]
        if named:  # the claim names an option ("不适用" before "适用", which it contains)
            return named[0] == chosen, quote
        if chosen in _YES_NO and all(o.lower() in _YES_NO for o in unticked):
            asked = re.sub(r"是否|\bwhether\b|\bob\b", " ", question)
            claim_yes = negated(re.sub(r"是否", " ", claim)) == negated(asked)
            return claim_yes == _YES_NO[chosen], quote
        return None
    return None


def has_tick_boxes(text: str) -> bool:
    return bool(re.search(f"[{_BOX}]", text)) and bool(re.search(f"[{_TICK}]", text))


