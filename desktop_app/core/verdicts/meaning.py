"""Checks that look at what a sentence means, not only at its words: whether the passage
says the opposite (SHOULD NOT vs SHOULD, 不得 vs 应, MAY vs MUST), states it only under a
condition or as someone's claim (if/unless/除非/如果, "saying that"), gives a number to
another subject (a proxy's 2*N connections are not a client's), or gives another number
for the same thing. Qt-free, no asyncio; core/verdicts/claim_score.py calls :func:`conflict`
with the passage sentences that best cover a claim.

Each finding carries the passage's own words (``quote``), which the verdict shows: "the
passage says: A single-user client SHOULD NOT maintain more than 2 connections".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from desktop_app.core.text import lang
from desktop_app.core.text.lang import CJK_RANGES
from desktop_app.core.verdicts import bindings
from desktop_app.core.verdicts.claims import Number, numbers_in

Units = Callable[[str], Mapping[str, float]]


@dataclass(frozen=True)
class Finding:
    kind: str  # "negation", "modality", "subject", "number", "condition", "attribution"
    quote: str  # the passage's words that say otherwise
    opposite: bool  # True: the passage states the opposite; False: not as a plain fact

    def reason(self) -> str:
        what = {
            "negation": "the passage says the opposite",
            "opposite": "the passage uses the opposite word",
            "modality": "the passage states another obligation (MUST/SHOULD/MAY)",
            "subject": "the passage says it of another subject",
            "number": "the passage gives another number for it",
            "condition": "the passage states it only under a condition",
            "attribution": "the passage reports it as someone's claim, not as a fact",
            "owner": "the passage gives it to the other party",
            "group": "the passage gives that number to another group",
            "tick": "the passage ticks another box",
        }[self.kind]
        return f"{what}; the passage says: {self.quote}"


# ----------------------------------------------------------------- polarity and modality
# Each language's words (core/text/lang/): negations, the bounds and idioms that carry a
# negation word but state none ("not only", "不超过"), and the obligation words.
_negations = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.negations), re.IGNORECASE))
_not_negation = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.not_negations), re.IGNORECASE))
def _modal_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each obligation, strongest first, with every language's words for it."""
    def of(name: str) -> re.Pattern[str]:
        return re.compile(lang.pattern(lambda x: x.modals.get(name, ())), re.IGNORECASE)
    return tuple((name, of(name)) for name in ("must", "should", "may"))


_modals = lang.compiled(_modal_patterns)
_not_modals = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.not_modals, latin_bounds=False)))


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _not_modals().sub(" ", text)  # "方可" (only then), "可能" (perhaps): no obligation
    # a name in brackets or quotes is not a statement: "304 (Not Modified)", "No-Cache"
    return re.sub(r"\((?:[A-Z][^()]*)\)|\"[^\"]*\"|“[^”]*”", " ", text)


def negated(text: str) -> bool:
    text = _not_negation().sub(" ", _clean(text))
    return bool(_negations().search(text))


def modality(text: str) -> str | None:
    """The strongest obligation word of ``text``: "must", "should", "may" or None."""
    text = _clean(text)
    for name, pattern in _modals():
        if pattern.search(text):
            return name
    return None


def modalities(text: str) -> set[str]:
    """Every obligation word of ``text``: a subset of {"must", "should", "may"}."""
    text = _clean(text)
    return {name for name, pattern in _modals() if pattern.search(text)}


# ----------------------------------------------------------------- opposite words
def _antonyms() -> list[tuple[re.Pattern[str], re.Pattern[str]]]:
    """Each language's opposite words, both ways round: a Latin-script language's as whole
    words, case aside."""
    out = []
    for lexicon in lang.all_lexicons():
        for pair in lexicon.antonyms:
            for a, b in (pair, pair[::-1]):
                if lexicon.script == "latin":
                    out.append((re.compile(rf"\b(?:{a})\b", re.IGNORECASE), re.compile(rf"\b(?:{b})\b", re.IGNORECASE)))
                else:
                    out.append((re.compile(a), re.compile(b)))
    return out


_antonym_res = lang.compiled(_antonyms)


def opposite_word(claim: str, clause: str) -> str | None:
    """A word of ``claim`` whose opposite ``clause`` says instead ("least" for "most")."""
    for mine, theirs in _antonym_res():
        m = mine.search(claim)
        if m and theirs.search(clause) and not mine.search(clause) and not theirs.search(claim):
            return m.group()
    return None


# ----------------------------------------------------------------- conditions, attribution
# Conditions, once for every rule: a marker that makes what it governs conditional ("if",
# "wenn", "如果"), and the looser ones that often only say when ("whenever", "如"); a clause
# that opens with a condition; the "then" that ends the condition of "if A, then B".
_conditions = lang.compiled(lambda: re.compile(
    lang.pattern(lambda x: (*x.conditions, *x.loose_conditions)), re.IGNORECASE))
_condition_open = lang.compiled(lambda: re.compile(
    rf"\s*(?:\d{{1,3}}[.)、]\s*)?(?:{lang.pattern(lambda x: x.conditions)})", re.IGNORECASE))
_condition_open_word = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.conditions), re.IGNORECASE))
_then = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.consequences), re.IGNORECASE))
_condition_end = lang.compiled(lambda: re.compile(
    rf"{lang.pattern(lambda x: x.consequences)}|[,，;；:：]", re.IGNORECASE))
# Someone's claim or plan, not a fact ("saying that", "expects", "预计").
_attribution = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.attributions), re.IGNORECASE))


def _share(units: Units, part: str, whole: Mapping[str, float]) -> float:
    got = units(part)
    total = sum(got.values())
    return sum(w for u, w in got.items() if u in whole) / total if total else 1.0


def _condition(units: Units, claim: str, claim_units: Mapping[str, float], sentence: str,
               at: int) -> str | None:
    """The condition governing position ``at`` of ``sentence`` that the claim leaves out. A
    condition governs the clause after it (after its "then" when it has one), not the
    clauses after that one ("if A, then B, and C": C is stated as a fact); a condition on
    another number than the claim's ("If 126, ...") is another case, not the claim's."""
    if _conditions().search(claim) or _attribution().search(claim):
        return None
    claim_values = {u for u in claim_units if u.startswith("#")}
    inside = _antecedent(sentence, at) if not _reported().search(claim) else None
    if inside is not None:
        return inside
    for m in _conditions().finditer(sentence[:at]):
        end = _condition_end().search(sentence, m.end() + 1)
        stop = end.start() if end is not None and end.start() < at else at
        if end is not None and end.group().lower() in (",", "，") and end.start() < at:
            # "if, as X had said, A, then B": the condition runs to "then" when there is one
            then = _then().search(sentence[m.end() : at])
            stop = m.end() + then.start() if then else stop
        if re.search(r"[,，;；]", sentence[stop + 1 : at]):
            continue  # ``at`` lies beyond the clause the condition governs
        condition = sentence[m.start() : stop]
        values = {u for u in units(condition) if u.startswith("#")}
        if values and claim_values and not values & claim_values:
            continue  # "If 126, ..." for a claim about 0-125: another case
        if _share(units, condition[m.end() - m.start() :], claim_units) < 0.5:
            return condition.strip(" ,，")
    return None


_reported = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.reported_speech), re.IGNORECASE))


def _antecedent(sentence: str, at: int) -> str | None:
    """The "if" part of "if A, then B" when position ``at`` lies in A (the claim states
    the condition itself as a fact: "their land reached upwards" from "But if, as they
    had said, their land reached upwards, then ...")."""
    then = _then().search(sentence[at:])
    if then is None:
        return None
    opens = list(_condition_open_word().finditer(sentence[:at]))
    if not opens or _then().search(sentence[opens[-1].end() : at]):
        return None
    return sentence[opens[-1].start() : at + then.start()].strip(" ,，")


# ----------------------------------------------------------------- subjects
_subject_end = lang.compiled(lambda: re.compile("|".join(
    [rf"\s(?:{'|'.join(x.subject_ends)})\b" for x in lang.latin() if x.subject_ends]
    + ["|".join(x.subject_ends) for x in lang.all_lexicons() if x.script == "cjk" and x.subject_ends])))
_scope_opener = lang.compiled(lambda: re.compile(
    rf"^\s*(?:{lang.pattern(lambda x: x.scope_openers, latin_bounds=False)})\b[^,]{{0,60}},\s*"))


def subject(text: str) -> str:
    """The words before the first verb or modal: the thing a sentence speaks about."""
    text = _scope_opener().sub("", _clean(text).strip())
    m = _subject_end().search(text)
    return text[: m.start()] if m is not None and m.start() <= 60 else ""


_roles = lang.compiled(lambda: re.compile(lang.pattern(lambda x: x.roles)))


# ----------------------------------------------------------------- the check
@dataclass(frozen=True)
class _Clause:
    sentence: str
    start: int
    text: str


def _clauses(sentences: Sequence[str]) -> list[_Clause]:
    out = []
    for s in sentences:
        for m in re.finditer(r"[^,，;；:：]+", s):
            if m.group().strip():
                out.append(_Clause(s, m.start(), m.group()))
    return out


def _asks(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？"))


def _values(numbers: Sequence[Number]) -> set[str]:
    return {v for n in numbers for v in n.values}


def conflict(claim: str, sentences: Sequence[str], units: Units,
             all_sentences: Sequence[str] = ()) -> Finding | None:
    """What about ``sentences`` (the passage sentences that best cover ``claim``) shows the
    claim false or not stated as a fact; ``all_sentences`` are the passage's others, where
    the claim's subject may be spoken of. None when nothing does."""
    claim_units = dict(units(claim))
    if not claim_units or not sentences:
        return None
    # A question the passage asks (an FAQ's "如何禁止对 PS 查看器的自动调用？") states nothing.
    sentences = [_joined(s) for s in sentences if not _asks(s)]
    all_sentences = [_joined(s) for s in all_sentences if not _asks(s)]
    claim_numbers = numbers_in(claim)
    claim_values = _values(claim_numbers)
    words = {u: w for u, w in claim_units.items() if not u.startswith("#")}
    scored = []
    for clause in _clauses(sentences):
        clause_units = units(clause.text)
        matched = sum(w for u, w in words.items() if u in clause_units)
        if matched >= 1.5 and matched >= 0.3 * sum(words.values()):
            scored.append((matched, clause))
    if not scored:
        return None
    scored.sort(key=lambda mc: -mc[0])
    best = scored[0][1]
    # 1. the claim's number stated in the passage for another subject
    if claim_values:
        finding = _subject_swap(claim, claim_values, sentences, all_sentences or sentences, units)
        if finding is not None:
            return finding
    # 2. a tick box answers the claim's question: it decides
    ticked = ticked_box(claim, sentences, units)
    if ticked is not None:
        return None if ticked[0] else Finding("tick", ticked[1], True)
    # 3. negation and modality of the clauses that state the claim
    strong = [c for m, c in scored if m >= 0.5 * scored[0][0]]
    claim_modal = modality(claim)
    for part in _claim_parts().split(_clean(claim)):
        finding = _negation(part, units, [c for _, c in scored])
        if finding is not None and not _stated_alike(claim, words, sentences, units):
            return finding
    for _, clause in scored[:1]:
        word = opposite_word(claim, clause.text) if scored[0][0] >= 0.6 * sum(words.values()) else None
        if word is not None and not _says_itself(word, words, sentences, units):
            return Finding("opposite", _quote(clause), True)
    if claim_modal is not None:
        claimed = modalities(claim)
        modals = set().union(*(modalities(c.text) for c in strong))
        if modals and not claimed & modals and not _stated_alike(claim, words, sentences, units):
            return Finding("modality", _quote(best), True)
    # 4. what the passage binds to what: a party's thing, a group's number
    finding = _unbound(claim, [c.sentence for c in strong])
    if finding is not None:
        return finding
    # 5. a condition or a report the claim states as a plain fact
    conditional = bool(_conditions().search(claim) or bindings.states_condition(claim))
    stated = [c for c in strong if _condition(units, claim, claim_units, c.sentence, c.start) is None
              and (conditional or not _condition_open().match(c.text))
              and not _attributed(claim, c, units, claim_units)]
    if best not in stated or _dropped(units, claim, claim_units, best) is not None:
        # the clause that best states the claim holds only under a condition it leaves out
        stated = []
    if not stated:
        cond = _condition(units, claim, claim_units, best.sentence, best.start)
        if cond is not None:
            return Finding("condition", _quote(best, whole=True), False)
        dropped = _dropped(units, claim, claim_units, best)
        if dropped is not None:
            return Finding("condition", _quote_text(dropped), False)
        return Finding("attribution", _quote(best), False)
    return None


def _says_itself(word: str, words: Mapping[str, float], sentences: Sequence[str], units: Units) -> bool:
    """Whether a passage sentence that states most of the claim uses the claim's own
    ``word`` (whose opposite a clause uses): "The length of the Payload data, in bytes"
    beside "7 bits, 7+16 bits" states "given in bytes"."""
    total = sum(words.values())
    pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
    for sentence in sentences:
        have = units(sentence)
        if sum(w for u, w in words.items() if u in have) >= STATED_ALIKE_MIN * total and pattern.search(sentence):
            return True
    return False


def negations(text: str) -> int:
    """How many negations ``text`` states (bounds such as "not more than" are none)."""
    return len(_negations().findall(_not_negation().sub(" ", _clean(text))))


def _stated_alike(claim: str, words: Mapping[str, float], sentences: Sequence[str], units: Units) -> bool:
    """Whether a passage sentence that states most of the claim states it with the same
    negations (each negating the claim's own words) and, if the claim has one, its
    obligation: then a negation or an obligation found in another clause is not about the
    same thing ("BM25 negatives are passages that do not contain the answer" against "top
    passages returned by BM25 which don't contain the answer"; "kann ..., ohne dass Sie das
    root-Passwort mitteilen müssen"). bench/verdicts.py measures it."""
    total = sum(words.values())
    if not total:
        return False
    own_scopes = [{u for u in units(scope) if not u.startswith("#")} for scope in _negated_scopes(claim)]
    claimed = modalities(claim)
    for sentence in sentences:
        have = units(sentence)
        if sum(w for u, w in words.items() if u in have) < STATED_ALIKE_MIN * total:
            continue
        if negations(sentence) != negations(claim) or claimed and not claimed & modalities(sentence):
            continue
        theirs = [set(units(scope)) for scope in _negated_scopes(sentence)]
        if all(not own or any(len(own & t) >= 0.5 * len(own) for t in theirs) for own in own_scopes):
            return True
    return False


# the share of a claim's words a passage sentence must state for its negations and its
# obligation to decide (bench/verdicts.py, tuning half)
STATED_ALIKE_MIN = 0.6


def _negated_scopes(text: str, cjk_chars: int = 12) -> list[str]:
    """What each negation of ``text`` negates: the words after it up to the clause's end
    (at most five words, or ``cjk_chars`` characters in Chinese)."""
    clean = _not_negation().sub(" ", _clean(text))
    scopes = []
    for m in _negations().finditer(clean):
        rest = re.split(r"[,;:.!?，；：。！？()（）]", clean[m.end():], maxsplit=1)[0]
        rest = " ".join(rest.split()[:5])
        scopes.append(rest.strip()[:cjk_chars] if re.match(rf"\s*[{CJK_RANGES}]", rest) else rest)
    return scopes


# A Chinese negation negates the word right after it (未经审计, 非经常性损益, 不是标点): the
# characters of it that must be the claim's for a negation to be about the claim's thing.
NEGATED_WORD_CHARS = 4


def _negates_shared(negated_text: str, other: Mapping[str, float], units: Units) -> bool:
    """Whether a negation of ``negated_text`` negates words of ``other`` (the other side's
    units): "未经审计" in a passage says nothing against a claim without 审计. True when what
    is negated has no content words to compare ("operiert nicht auf H")."""
    scopes = [[u for u in units(scope) if not u.startswith("#")]
              for scope in _negated_scopes(negated_text, NEGATED_WORD_CHARS)]
    stems = {u[:5] for u in other if len(u) >= 5}  # "refundable" negates "refunded"
    return all(not words for words in scopes) or any(
        u in other or len(u) >= 5 and u[:5] in stems for words in scopes for u in words)


# the share of a claim's words one passage sentence must state for its negations to decide
STATED_ALIKE_MIN = 0.6


def _dropped(units: Units, claim: str, claim_units: Mapping[str, float], clause: _Clause) -> str | None:
    return bindings.dropped_condition(units, claim, claim_units, clause.sentence, clause.start,
                                      clause.start + len(clause.text))


def _unbound(claim: str, strong: Sequence[str]) -> Finding | None:
    """A thing the claim gives to the other party, or a number it gives to another group."""
    for sentence in dict.fromkeys(strong):
        if bindings.swapped_owner(claim, sentence) is not None:
            return Finding("owner", _quote_text(sentence), True)
        if bindings.regrouped(claim, sentence) is not None:
            return Finding("group", _quote_text(sentence), True)
    return None


def ticked_box(claim: str, sentences: Sequence[str], units: Units) -> tuple[bool, str] | None:
    """Whether the passage's tick box for the claim's question is ticked as the claim says,
    with the question and the ticked option; None when no tick box answers it."""
    passage = "\n".join(_joined(s) for s in sentences)
    if not bindings.has_tick_boxes(passage):
        return None
    ticked = bindings.tick_answer(claim, passage, negated, units, units(claim))
    return None if ticked is None else (ticked[0], _quote_text(ticked[1]))


_claim_parts = lang.compiled(lambda: re.compile(rf"[,;，；]|{lang.pattern(lambda x: x.conjunctions)}"))


def _negation(part: str, units: Units, clauses: Sequence[_Clause]) -> Finding | None:
    """A negation in the passage clause that best states ``part`` of a claim (or in the
    part and not that clause): SHOULD NOT vs SHOULD, 不得 vs 应."""
    words = {u: w for u, w in units(part).items() if not u.startswith("#")}
    total = sum(words.values())
    if total < 1.5:
        return None
    polarity = negated(part)
    polarity_outside = negated(_unbracketed(part))
    same = opposite = 0.0
    quote: _Clause | None = None
    for clause in clauses:
        clause_units = units(clause.text)
        matched = sum(w for u, w in words.items() if u in clause_units)
        if matched < 1.5 or matched < 0.3 * total:
            continue
        outside = _outside_brackets(clause.text, words, matched, units)
        text = outside if outside is not None else clause.text
        own = polarity_outside if outside is not None else polarity
        if negated(text) == own:
            same = max(same, matched)
        elif matched > opposite and (_negates_shared(part, clause_units, units) if own
                                     else _negates_shared(text, words, units)):
            opposite, quote = matched, clause
    if quote is not None and opposite >= same:
        return Finding("negation", _quote(quote), True)
    return None


def _unbracketed(text: str) -> str:
    """``text`` without its bracketed asides in Latin script (a Chinese bracket often holds
    what a figure is: "财务报表（未经审计）")."""
    return re.sub(rf"\([^(){CJK_RANGES}]*\)", " ", text)


def _outside_brackets(text: str, words: Mapping[str, float], matched: float, units: Units) -> str | None:
    """``text`` without its bracketed asides when the claim's words are outside them: a
    negation in brackets ("the server might redirect the client (but clients are not
    required to follow them)") does not negate what the claim takes from the rest. None
    when there are no brackets or the claim needs their words."""
    outside = _unbracketed(text)
    if outside == text:
        return None
    kept = units(outside)
    return outside if sum(w for u, w in words.items() if u in kept) >= 0.8 * matched else None


def _attributed(claim: str, clause: _Clause, units: Units,
                claim_units: Mapping[str, float]) -> bool:
    """Whether the claim's words in ``clause`` follow a "saying that" the claim leaves out."""
    if _attribution().search(claim):
        return False
    end = clause.start + len(clause.text)
    m = None
    for m in _attribution().finditer(clause.sentence[:end]):  # noqa: B007 - the last match is wanted
        pass
    if m is None:
        return False
    before = units(clause.sentence[max(clause.start, 0) : m.start()])
    after = units(clause.sentence[m.end() : end])
    return sum(claim_units.get(u, 0) for u in after) > sum(claim_units.get(u, 0) for u in before)


def roles(text: str) -> set[str]:
    """The parties a subject names: client, proxy, 甲方... (each language's ``roles``)."""
    low = _joined(text).lower()
    return {m.group().replace("-", " ") for m in _roles().finditer(low)}


def _subject_swap(claim: str, values: set[str], sentences: Sequence[str],
                  all_sentences: Sequence[str], units: Units) -> Finding | None:
    """The claim gives its figure to one party (a client) where the passage gives that
    figure to another (a proxy) and never to the claim's."""
    own_roles = roles(subject(claim))
    own = units(subject(claim))
    if not own_roles:
        return None
    stating = [c.text for c in _clauses(all_sentences) if values <= _values(numbers_in(c.text))]
    if not stating:
        return None
    others = [roles(subject(s)) for s in stating]
    if any(not o or o & own_roles for o in others):
        return None  # the passage states the figure of the claim's party (or of no party)
    about = [s for s in all_sentences if set(units(subject(s))) & set(own)]
    about.sort(key=lambda s: (-len(set(units(subject(s))) & set(own)), -len(set(units(s)) & set(own))))
    quote = _quote_text(about[0]) if about else _quote_text(stating[0])
    return Finding("subject", quote, True)


def _joined(text: str) -> str:
    """PDF text with its line-end hyphens joined again ("say- ing" -> "saying")."""
    return re.sub(r"(?<=[a-z])- (?=[a-z])", "", unicodedata.normalize("NFKC", text))


def _quote(clause: _Clause, whole: bool = False) -> str:
    return _quote_text(clause.sentence if whole or len(clause.text) < 25 else clause.text)


def _quote_text(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).strip(" ,，;；")
    text = re.sub(r"(?<=\d)×(?=[A-Za-z]\b)", "*", text)  # plain_text's "2×N" is the PDF's "2*N"
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
