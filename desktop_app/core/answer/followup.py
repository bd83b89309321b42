"""Follow-up questions: the question a conversation's next turn stands for. Qt-free.

"What does a 404 status code mean?" then "And what about 410?": the second question,
searched as written, finds passages about nothing in particular. Before searching, a
question asked in a conversation is checked for what makes it lean on the turn before
(rules, on the path to the first word: microseconds, no model):

- an elliptical opener or closer of its language ("And what about …", "Und …?",
  "那…呢"): the new words take the place of their counterpart in the previous question (a
  number for a number, "in Kentucky" for "in Kansas"), or, without a counterpart, are
  searched together with the previous question's topic;
- a reference ("it", "that one", "dafür", "这家公司") in a question that names little else
  (at most :data:`MAX_REFERRING_TERMS` search terms besides it): searched with the
  previous question's topic.

Any other question stands alone and is searched exactly as written. The words of each
language are its lexicon's (``follow_up_openers``, ``follow_up_closers``, ``references``,
``interrogatives``); bench/followup.py measures recall on follow-up pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.text import lang
from desktop_app.core.text import words as termlib

# A question holding a reference and naming at most this much besides it (content_size)
# leans on the previous turn; one naming more says what it is about. Chosen on the tuning
# half of bench/data/followup_pairs.jsonl (bench/followup.py), which also counts the
# questions of the existing sets the rules would take for a follow-up (2 of 288).
MAX_REFERRING_TERMS = 5
MAX_TOPIC_WORDS = 10  # a topic carried from turn to turn stays a few words long
MAX_TOPIC_CHARS = 30  # ... a Chinese one a few words' characters
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LATIN_WORD = re.compile(r"[^\W_](?:[^\s?!。？！,;:()\"“”]*[^\W_])?")
_END = r"[\s?？!！.。]*$"


@dataclass(frozen=True)
class Standalone:
    """What a question is searched for. ``rule``: "" (it stands alone), "replaced" (a word
    of the previous question swapped for the new one), "elliptical" or "reference"."""

    question: str
    searched: str
    rule: str = ""

    @property
    def rewritten(self) -> bool:
        return bool(self.rule)


def _lexicon(question: str) -> lang.Lexicon:
    """The lexicon of the language ``question`` is written in. A follow-up is read before
    its question's retrieval (it says what retrieval is asked), so no language is decided
    for it yet: :func:`standalone` asks once per question and hands the lexicon on."""
    return lang.of(termlib.question_language(question))


def _flags(lex: lang.Lexicon) -> int:
    return re.IGNORECASE if lex.script == "latin" else 0


def _bounded(entries: Sequence[str], lex: lang.Lexicon) -> str:
    body = "|".join(entries)
    return rf"\b(?:{body})\b" if lex.script == "latin" else f"(?:{body})"


def _opener(question: str, lex: lang.Lexicon) -> re.Match[str] | None:
    if not lex.follow_up_openers:
        return None
    return re.match(rf"\s*{_bounded(lex.follow_up_openers, lex)}[\s,，、:：]*", question, _flags(lex))


def _closer(question: str, lex: lang.Lexicon) -> re.Match[str] | None:
    if not lex.follow_up_closers:
        return None
    return re.search(rf"{_bounded(lex.follow_up_closers, lex)}{_END}", question, _flags(lex))


def references(question: str, lex: lang.Lexicon | None = None) -> list[str]:
    """The words of ``question`` that point back at what was asked before."""
    lex = lex or _lexicon(question)
    if not lex.references:
        return []
    return [m.group(0) for m in re.finditer(_bounded(lex.references, lex), question, _flags(lex))]


def content_size(question: str, lex: lang.Lexicon, refs: Sequence[str] = ()) -> int:
    """How much ``question`` names besides its references: its search terms, a CJK run
    counting one for every two characters (about a word)."""
    text = question
    for ref in refs:
        text = text.replace(ref, " ")
    if lex.interrogatives:
        text = re.sub("|".join(lex.interrogatives), " ", text)
    size = 0
    for term, weight in termlib.query_terms(text).items():
        if weight < 1.0:
            continue
        size += 0 if lang.CJK_CHAR.match(term) else 1
    cjk = sum(1 for ch in text if lang.CJK_CHAR.match(ch))
    return size + (cjk + 1) // 2


def topic(question: str, lex: lang.Lexicon | None = None) -> str:
    """The words of ``question`` that say what it is about: without its question words,
    function words and references, in their order (a CJK question: its text without its
    interrogatives and punctuation). ``lex``: its language's lexicon (default: the language
    it is written in)."""
    lex = lex or _lexicon(question)
    text = re.sub(r"[?？!！。()（）]+", " ", question)  # a chain's earlier topic comes in brackets
    if lex.script == "cjk":
        if lex.interrogatives:
            text = re.sub("|".join(lex.interrogatives), " ", text)
        for ref in references(text, lex):
            text = text.replace(ref, " ")
        return re.sub(r"\s+", " ", text).strip(" ，,、的是")[-MAX_TOPIC_CHARS:]
    skip = lex.stopwords | lex.function_words | lex.question_words | lex.openers
    refs = {r.lower() for r in references(text, lex)}
    kept = [w for w in _LATIN_WORD.findall(text) if w.lower() not in skip and w.lower() not in refs]
    return " ".join(kept[-MAX_TOPIC_WORDS:])


def _new_words(question: str, lex: lang.Lexicon) -> str:
    """An elliptical question without its opener, closer and final punctuation."""
    text = question
    opener = _opener(text, lex)
    if opener is not None:
        text = text[opener.end():]
    closer = _closer(text, lex)
    if closer is not None:
        text = text[:closer.start()]
    return re.sub(_END, "", text).strip(" ，,、")


def _replace(previous: str, new: str, lex: lang.Lexicon) -> str | None:
    """``previous`` with the new words in place of their counterpart: a number for its one
    number ("404" -> "410"), or the words after the same preposition ("in Kansas" ->
    "in Kentucky"); None when there is no counterpart."""
    new_numbers = _NUMBER.findall(new)
    old_numbers = _NUMBER.findall(previous)
    if new_numbers and len(old_numbers) == 1 and _NUMBER.sub("", new).strip(" ?？") == "":
        return _NUMBER.sub(new_numbers[0], previous, count=1)
    if lex.script != "latin":
        return None
    parts = new.split()
    if len(parts) < 2 or parts[0].lower() not in lex.stopwords | lex.function_words:
        return None
    slot = re.search(rf"\b{re.escape(parts[0])}\s+((?:[A-Z0-9][\w.-]*\s*)+)", previous)
    if slot is None or not parts[1][:1].isupper() or lex.capitalises_nouns:
        return None
    head, tail = previous[:slot.start(1)], previous[slot.end(1):]
    return f"{head}{' '.join(parts[1:])}{' ' if tail[:1].isalnum() else ''}{tail}"


def _with_topic(question: str, about: str) -> str:
    question = question.strip()
    return f"{question} ({about})" if about and about.lower() not in question.lower() else question


def standalone(question: str, previous: Sequence[str] = ()) -> Standalone:
    """What ``question`` is searched for, after the conversation's earlier questions
    ``previous`` (each as it was searched, oldest first)."""
    question = question.strip()
    if not previous or not question:
        return Standalone(question, question)
    last = previous[-1].strip()
    # A short follow-up says little of its language ("Und GLn(R)?"): the previous
    # question's language is asked too. Each language is read once, here.
    lexicons, earlier = [_lexicon(question)], _lexicon(last)
    if earlier.code != lexicons[0].code:
        lexicons.append(earlier)
    for lex in lexicons:
        if _opener(question, lex) is None and _closer(question, lex) is None:
            continue
        new = _new_words(question, lex)
        if not new:
            return Standalone(question, last, "elliptical")
        replaced = _replace(last, new, lex)
        if replaced is not None:
            return Standalone(question, replaced, "replaced")
        shown = new[:1].upper() + new[1:] if lex.script == "latin" else new
        return Standalone(question, _with_topic(shown, topic(last, earlier)), "elliptical")
    for lex in lexicons:
        refs = references(question, lex)
        if refs and content_size(question, lex, refs) <= MAX_REFERRING_TERMS:
            return Standalone(question, _with_topic(question, topic(last, earlier)), "reference")
        if refs:
            break
    return Standalone(question, question)


@dataclass(frozen=True)
class Conversation:
    """What a question carries of its conversation into answering: the conversation's id
    (its first answer's), the earlier turns (question, answer text; oldest first) the
    prompt recalls briefly, and the question as it is searched (the gate, the anchors and
    the evidence judge that one)."""

    conversation_id: str = ""
    turns: tuple[tuple[str, str], ...] = ()
    searched: str = ""
    replaces: str = ""  # the answer this one was asked again for (its "Searched for" edited)
