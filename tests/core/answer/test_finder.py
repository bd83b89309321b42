"""The answer finder: the document's own sentence that answers, read from the whole page of
each retrieved chunk (core/answer/finder.py). Rules alone here (no embedder); the real
embedder and real PDFs are in tests/e2e/test_finder_real.py."""

from __future__ import annotations

import pytest

from desktop_app.core.answer import evidence, finder
from desktop_app.core.text import words as termlib
from desktop_app.core.types import Found, Passage, SourcePage

PAGE = (
    "Chapter 4 Connections. "
    "Persistent connections reduce the number of TCP handshakes. "
    "Clients that use persistent connections should limit the number of simultaneous connections. "
    "A single-user client should not maintain more than 2 connections with any server or proxy. "
    "These guidelines are intended to improve HTTP response times and avoid congestion."
)


def page_and_chunks(text: str = PAGE, cut: int = 120) -> tuple[SourcePage, list[Passage]]:
    """One page cut into two chunks at ``cut`` (a sentence end), as the chunker does."""
    cut = text.index(". ", cut) + 2
    page = SourcePage("doc", 7, text, ((1, 0, cut), (2, cut, len(text))))
    chunks = [
        Passage(chunk_id=f"doc:7:{i}", doc_id="doc", doc_path="/docs/rfc.pdf", doc_title="RFC", page=7,
                page_label="7", section="", char_start=start, char_end=end, score=1.0, text=text[start:end])
        for i, (_, start, end) in enumerate(page.chunks)
    ]
    return page, chunks


def source_of(chunks: list[Passage]):  # noqa: ANN202 - a test helper
    def find(page: SourcePage, start: int, end: int) -> Passage | None:
        ckey = finder.chunk_holding(page, start, end)
        return chunks[ckey - 1] if ckey is not None else None
    return find


@pytest.mark.parametrize(("question", "language", "kind"), [
    ("When was the act signed?", "en", "date"),
    ("By what date must the form be filed?", "en", "date"),
    ("How many connections may a client keep?", "en", "amount"),
    ("Who wrote the report?", "en", "name"),
    ("Why was the meeting delayed?", "en", "reason"),
    ("Is the fee refundable?", "en", "yesno"),
    ("What are the main findings?", "en", ""),
    ("Bis wann muss der Antrag gestellt werden?", "de", "date"),
    ("Wie viele Studenten haben teilgenommen?", "de", "amount"),
    ("Wer hat das Skript geschrieben?", "de", "name"),
    ("Warum lässt sich die Kugel nicht verformen?", "de", "reason"),
    ("合同什么时候生效？", "zh", "date"),
    ("脚注行距的倍数是多少？", "zh", "amount"),
    ("这份报告是谁写的？", "zh", "name"),
    ("为什么要打补丁？", "zh", "reason"),
])
def test_the_question_says_what_it_asks_for(question: str, language: str, kind: str) -> None:
    assert finder.question_kind(question, language) == kind


def test_a_sentence_gives_what_its_kind_asks_for() -> None:
    assert finder.gives("date", "The act was signed on 28 October 1998.") == 1.0
    assert finder.gives("date", "The act protects authors.") == -1.0
    assert finder.gives("date", "本办法自2019年3月1日起施行。") == 1.0
    wanted = frozenset(termlib.tokenize("How many connections may a client keep?"))
    assert finder.gives("amount", "A client should keep at most 2 connections.", (), wanted) == 1.0
    assert finder.gives("amount", "See RFC 2068 [33] for clients.", (), wanted) == 0.5  # counts nothing asked
    assert finder.gives("amount", "A client should keep few connections.") == -1.0
    assert finder.gives("amount", "缺省值是一点四八倍。") >= 0.0
    assert finder.gives("reason", "It failed because the disk was full.") == 1.0


def test_finds_the_answer_in_the_chunk_search_did_not_return() -> None:
    page, chunks = page_and_chunks()
    # Search returned the page's first chunk; the answer is in its second.
    found = finder.find("How many connections should a single-user client maintain at most?", "en",
                        [chunks[0]], [page], source_of(chunks))
    assert len(found.quotes) == 1
    quote = found.quotes[0]
    assert quote.text == "A single-user client should not maintain more than 2 connections with any server or proxy."
    assert quote.source.chunk_id == chunks[1].chunk_id  # the chunk that holds it, for the model and the marker
    assert PAGE[quote.page_span[0]:quote.page_span[1]] == quote.text
    assert quote.kind == "amount"


def test_no_quote_when_no_sentence_answers() -> None:
    page, chunks = page_and_chunks()
    found = finder.find("What does the licence say about trademarks of the foundation?", "en",
                        chunks, [page], source_of(chunks))
    assert found.quotes == ()


def test_a_sentence_that_points_back_brings_the_one_before() -> None:
    text = ("The Board approved the merger with Acme Holdings in March. "
            "It was signed by both chief executives on 12 April 2019. "
            "The parties expect closing in the third quarter.")
    page = SourcePage("d", 1, text, ((5, 0, len(text)),))
    chunk = Passage(chunk_id="d:1:0", doc_id="d", doc_path="/d.pdf", doc_title="D", page=1, page_label="1",
                    section="", char_start=0, char_end=len(text), score=1.0, text=text)
    found = finder.find("When was the merger agreement signed by the chief executives?", "en", [chunk], [page],
                        lambda p, s, e: chunk)
    assert found.quotes and found.quotes[0].text.startswith("The Board approved the merger")
    assert found.quotes[0].text.endswith("12 April 2019.")


def test_the_quote_is_read_first_and_always_kept() -> None:
    page, chunks = page_and_chunks()
    found = finder.find("How many connections should a single-user client maintain at most?", "en",
                        [chunks[0]], [page], source_of(chunks))
    passages, must = finder.with_quotes([chunks[0]], Found(found.quotes, found.more))
    assert [p.chunk_id for p in passages] == [chunks[1].chunk_id, chunks[0].chunk_id]  # the quote's chunk first
    # A budget too small for anything: the quote is kept whatever it costs.
    read = evidence.select("How many connections should a single-user client maintain at most?", passages,
                           budget_tokens=1, must=must)
    first = read[0]
    quote = found.quotes[0]
    assert first.chunk_id == quote.source.chunk_id
    assert any(s <= quote.span[0] and quote.span[1] <= e for s, e in first.read)
    assert quote.text in evidence.evidence_text(first)


def test_a_two_part_question_gets_a_quote_per_part() -> None:
    text = ("408 Request Timeout: the client did not produce a request within the time that the server was "
            "prepared to wait. Servers log every timeout. The client MAY repeat the request without "
            "modifications at any later time.")
    page = SourcePage("r", 3, text, ((9, 0, len(text)),))
    chunk = Passage(chunk_id="r:3:0", doc_id="r", doc_path="/r.pdf", doc_title="R", page=3, page_label="3",
                    section="", char_start=0, char_end=len(text), score=1.0, text=text)
    found = finder.find("What does a 408 status mean and may the client repeat the request?", "en", [chunk],
                        [page], lambda p, s, e: chunk)
    texts = [q.text for q in found.quotes]
    assert any("408 Request Timeout" in t for t in texts)
    assert any("MAY repeat the request" in t for t in texts)

