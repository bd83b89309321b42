"""The type every language fills: the words Folio's rules need (see core/text/lang/)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Words = frozenset[str]
Patterns = tuple[str, ...]


@dataclass(frozen=True)
class Lexicon:
    """The words of one language the rules use. Word sets are lower case; pattern fields
    hold regular-expression fragments (see core/text/lang/__init__.py)."""

    code: str  # "en": what settings, prompts and the gate call the language
    script: Literal["latin", "cjk"]
    letters: str = ""  # letters beyond A-Z its words are written with ("ÄÖÜäöüß")
    name: str = ""  # what the settings dialog calls it ("English")

    # -- what Folio says in it (answer/prompts.py): the prompt's refusal and the model's
    # probe (no_answer), and the answer in place of one when the gate finds no basis
    no_answer: str = ""
    no_basis: str = ""
    # an answer's sentence in it does not end without its source marker: the model is steered
    # to write one (core/models/steer.py, which acts on the CJK full stops "。！？": the default
    # model ends Chinese sentences there unmarked; it cites Latin-script ones as asked)
    marks_sentences: bool = False

    # -- telling the language apart (text/words.py: question_language, text_language)
    function_words: Words = frozenset()  # common words no other registered language has
    openers: Words = frozenset()  # words that open its questions though another language has them ("Was")

    # -- search (text/words.py)
    stopwords: Words = frozenset()  # carry no evidence: not indexed
    claim_stopwords: Words = frozenset()  # a claim may drop them without changing what it states
    question_words: Words = frozenset()  # say how to answer, not what about: not searched for
    document_parts: Patterns = ()  # a document's parts and listings (text/listing.py)
    see_also: Patterns = ()  # an index's cross-reference ("see", "siehe")

    # -- sentences (text/sentences.py)
    abbreviations: Words = frozenset()  # a full stop after them ends no sentence ("Dr.", "bzw.")
    numbered_abbreviations: Words = frozenset()  # ... before a number ("Fig. 3", "Abs. 2")
    sentence_starters: Words = frozenset()  # a sentence may start with them after "U.S."
    ordinal_nouns: Patterns = ()  # after an ordinal "28." they continue the sentence ("Oktober")

    # -- numbers (verdicts/claims.py, text/anchors.py)
    months: tuple[tuple[str, ...], ...] = ()  # twelve entries, each the month's names
    units: Mapping[str, str] = field(default_factory=dict)  # canonical unit -> its words
    unit_qualifiers: Words = frozenset()  # stand between a number and its unit ("5 business days")
    scales: Mapping[str, float] = field(default_factory=dict)  # "million" -> 1e6
    amount_units: Patterns = ()  # after a number they make it an amount, not a handle

    # -- what a sentence claims (verdicts/)
    negations: Patterns = ()
    not_negations: Patterns = ()  # bounds and idioms with a negation word ("not only", "不超过")
    modals: Mapping[str, Patterns] = field(default_factory=dict)  # "must", "should", "may"
    not_modals: Patterns = ()  # modal-looking words that state no obligation ("可能")
    conditions: Patterns = ()  # make what they govern conditional ("if", "wenn", "如果")
    loose_conditions: Patterns = ()  # often conditional, often only "when" ("whenever", "如")
    scope_words: Patterns = ()  # a claim's own scope or time ("only", "when", "时")
    consequences: Patterns = ()  # the "then" of "if A, then B"
    attributions: Patterns = ()  # someone's claim, not a fact ("saying that", "预计")
    reported_speech: Patterns = ()  # "said", "according to"
    conjunctions: Patterns = ()  # join two claims in one sentence ("and", "but", "而且")
    subject_ends: Patterns = ()  # the verb or modal after a sentence's subject (case kept)
    scope_openers: Patterns = ()  # open a sentence's framing phrase ("In", "For"), case kept
    roles: Patterns = ()  # the parties a rule or contract speaks of ("client", "甲方")
    parties: tuple[tuple[str, str], ...] = ()  # counterparts: one's thing is not the other's
    antonyms: tuple[tuple[str, str], ...] = ()  # opposite words ("most" / "least")
    rises: Patterns = ()  # a number's direction
    falls: Patterns = ()
    labels: Patterns = ()  # a number after them names a thing ("section 112", "第")
    not_names: Words = frozenset()  # capitalised words that are no names ("MUST")
    capitalises_nouns: bool = False  # every noun capitalised: a capital says nothing (German)
    telltale_words: Words = frozenset()  # any one of them marks a sentence as this language
    names_capitalised: bool = False  # a capitalised word inside a sentence is a name (English)
    fragment_starts: Patterns = ()  # a claim starting with them is a fragment
    fragment_ends: Patterns = ()  # ... or ending with them
    meta: Patterns = ()  # sentences about the sources or the answer, not about the world
    greetings: Patterns = ()
    source_phrases: Patterns = ()  # "according to the documents": no content of a claim
    light_words: Words = frozenset()  # name the kind of statement, not its content (half weight)
    particles: str = ""  # CJK: characters that split a run into words ("的了")
    numerals: str = ""  # CJK: the digits and powers of ten ("一二十百")
    numeral_units: Patterns = ()  # CJK: units a numeral stands before ("个月", "元")

    # -- a conversation's follow-ups (answer/followup.py)
    follow_up_openers: Patterns = ()  # open an elliptical follow-up ("and what about", "und", "那")
    follow_up_closers: Patterns = ()  # ... or close one ("呢"), matched before the final "?"
    references: Patterns = ()  # point back at what was just asked ("it", "dafür", "这家公司")
    interrogatives: Patterns = ()  # ask but name nothing: not part of a question's topic ("是什么")

    # -- what a question asks for, and the sentences that give it (answer/finder.py)
    # kind -> the words that ask for it: "date" ("when", "bis wann", "何时"), "amount" ("how
    # many", "wie viel", "多少"), "name" ("who", "wer", "谁"), "reason" ("why", "warum", "为什么"),
    # "definition" ("what is", "was ist", "是什么"), "yesno" (a question opening with a verb).
    asks: Mapping[str, Patterns] = field(default_factory=dict)
    # kind -> the words of a sentence that gives it: "reason" ("because"), "definition" ("means")
    gives: Mapping[str, Patterns] = field(default_factory=dict)
