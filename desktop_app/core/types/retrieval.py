"""Retrieval: what the search stage hands the answer stage. Qt-free."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from desktop_app.core.types.documents import Passage, Span


@dataclass(frozen=True)
class Retrieval:
    """What the search stage hands the answer stage: the passages, best first, and the
    signals the evidence gate reads."""

    passages: list[Passage]
    # Idf-weighted share of the question's words and CJK bigrams found in the best passage;
    # a term the library never mentions counts at the highest idf. In [0, 1].
    coverage: float
    best_cosine: float  # of the best dense hit; 0 without an embedder or for a CJK question
    cjk: bool
    expansion: str = ""  # what the glossary added to the question ("" when nothing)
    embedder: str = ""  # the model id ``best_cosine`` comes from ("": no dense signal)
    # The one language of the question: the setting, else what it is written in ("en", "de",
    # "zh": text/words.question_language); the gate, the prompt and a refusal read it.
    language: str = ""
    # The question's numbers that no passage states, and its names that no chunk of the
    # library (or of the scope) mentions (text/anchors.py).
    unmatched: tuple[str, ...] = ()
    unmentioned: tuple[str, ...] = ()
    # The language most passages found are written in, when it is not the one the question
    # is written in ("" otherwise, or when they do not say): shared words then measure
    # nothing and the gate leaves it to retrieval.
    documents_language: str = ""
    # Seconds the search spent embedding the question (beside BM25) and on the anchors.
    timings: Mapping[str, float] = field(default_factory=dict)


# Citations of an answer: id -> spans, or (id, span) pairs in order.
Citations = Mapping[str, Sequence[Span]] | Sequence[tuple[str, Span]]


@dataclass(frozen=True)
class SourcePage:
    """A retrieved passage's whole page (a reflowable document's part): its text and where
    each of its chunks lies in it, so the answer finder reads every sentence of the page,
    not only the chunk that matched, and hands the model the chunk that holds its quote."""

    doc_id: str
    page: int
    text: str
    chunks: tuple[tuple[int, int, int], ...] = ()  # (chunk key, char_start, char_end), in order


@dataclass(frozen=True)
class Quote:
    """The document's own sentence (or two adjacent ones) that most likely answers the
    question (core/answer/finder.py): ``source`` is the chunk that holds it, ``span`` its
    offsets in ``source.text``."""

    source: Passage
    span: Span
    score: float  # the finder's confidence, comparable across questions (finder.MIN_SCORE)
    kind: str = ""  # what the question asks for ("date", "amount", ...; "" when it does not say)

    @property
    def text(self) -> str:
        return self.source.text[self.span[0]:self.span[1]]

    @property
    def page_span(self) -> Span:
        """The quote's offsets in its page's text."""
        return (self.source.char_start + self.span[0], self.source.char_start + self.span[1])


@dataclass(frozen=True)
class Found:
    """What the answer finder hands the evidence step: the quotes (best first; none when no
    sentence answers surely enough) and, after the retrieved passages, the chunk that holds
    each retrieved page's best sentence where search returned another chunk of that page."""

    quotes: tuple[Quote, ...] = ()
    more: tuple[Passage, ...] = ()
