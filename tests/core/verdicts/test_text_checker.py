"""Reading a text to check (Markdown, plain text, an exported answer, --claims lines) and
checking its sentences against passages (core/verdicts/check_input.py, text_checker.py)."""

from __future__ import annotations

import json

import pytest

from desktop_app.core.library.history import export_markdown
from desktop_app.core.text.markers import find_markers
from desktop_app.core.types import Passage, SavedAnswer, Verdict
from desktop_app.core.verdicts.check_input import (
    BadClaimLine,
    markdown_to_prose,
    read_claims_line,
    read_text,
)
from desktop_app.core.verdicts.text_checker import TextChecker, check_claim, claim_result, quote_of
from desktop_app.services.checking import check_claims

RFC = ("If 126, the following 2 bytes interpreted as a 16-bit unsigned integer are the payload "
       "length. If 127, the following 8 bytes are the payload length.")
LEASE = "The tenant must report damage to the landlord within 30 days of discovering it."


def passage(chunk_id: str, text: str, page: int = 3, char_start: int = 100) -> Passage:
    return Passage(chunk_id, "doc-" + chunk_id, f"/lib/{chunk_id}.pdf", chunk_id.title(), page, str(page),
                   "", char_start, char_start + len(text), 1.0, text)


# ----------------------------------------------------------------- Markdown stripping
def test_markdown_syntax_is_removed_and_blocks_stay_apart() -> None:
    raw = (
        "# Notes\n\nThe **tenant** must _report_ damage within `30 days`,\nsee [the lease](http://x/l.pdf).\n"
        "![figure](f.png)\n\n- First item states a fact.\n* Second item states another.\n"
        "1. A numbered item.\n\n> A quoted line.\n\n```\ncode = 'never a claim.'\n```\n"
        "| Term | Days |\n|---|---|\n| notice | 30 |\n\n---\nsnake_case_name stays <b>bold</b>.\n"
    )
    title, prose, footnotes = markdown_to_prose(raw)
    assert title == "Notes" and not footnotes
    assert prose.split("\n\n") == [
        "Notes",
        "The tenant must report damage within 30 days, see the lease. figure",
        "First item states a fact.", "Second item states another.", "A numbered item.",
        "A quoted line.", "Term · Days", "notice · 30", "snake_case_name stays bold.",
    ]


def test_plain_text_keeps_its_paragraphs_and_takes_the_file_name_as_title() -> None:
    checked = read_text("One fact is here.\nIt wraps here.\n\nAnother paragraph states 3 things.", "draft.txt")
    assert checked.title == "draft.txt" and not checked.exported
    assert [s.text for s in checked.sentences] == [
        "One fact is here.", "It wraps here.", "Another paragraph states 3 things."]
    assert all(checked.text[s.start:s.end] == s.text for s in checked.sentences)


# ----------------------------------------------------------------- markers and exports
def exported_answer() -> str:
    text = ("A value of 126 means a 16-bit payload length [1]. The tenant has 30 days [2]. "
            "Hello there!\n\n- Both sources agree on nothing [1][2].")
    citations: dict[str, list[list[int]]] = {}
    for cid, span in find_markers(text):
        citations.setdefault(cid, []).append(list(span))
    source = {"doc_id": "d", "version": 1, "section": "5.2", "char_start": 0, "char_end": 9}
    return export_markdown(SavedAnswer.from_json({
        "answer_id": "a1", "question": "What do the sources say?", "text": text, "citations": citations,
        "sources": [
            {**source, "id": "1", "chunk_id": "rfc", "doc_path": "/lib/rfc6455.pdf", "doc_title": "RFC 6455",
             "page": 31, "page_label": "29", "text": RFC},
            {**source, "id": "2", "chunk_id": "lease", "doc_path": "/lib/lease.pdf", "doc_title": "Lease",
             "page": 2, "page_label": "2", "text": LEASE},
        ],
        "claims": [{"sentence_span": [0, 50], "verdict": "partial", "ids": ["1"], "reason": "a reason"}],
        "status": "finished", "model_id": "m", "created_at": "2026-12-01",
    }))


def test_an_exported_answer_gives_its_sentences_their_footnotes_and_drops_folios_notes() -> None:
    checked = read_text(exported_answer(), "answer.md")
    assert checked.exported and checked.title == "What do the sources say?"
    assert [(s.text, ids) for s, ids in zip(checked.sentences, checked.cited, strict=True)] == [
        ("A value of 126 means a 16-bit payload length.", ("1",)),
        ("The tenant has 30 days.", ("2",)),
        ("Hello there!", ()),
        ("Both sources agree on nothing.", ("1", "2")),
    ]
    assert "[" not in checked.text and "Checks" not in checked.text and "Model" not in checked.text
    rfc = checked.footnotes["1"]
    assert (rfc.chunk_id, rfc.file_name, rfc.page_label, rfc.passage) == ("rfc", "rfc6455.pdf", "29", RFC)
    assert checked.footnotes["2"].passage == LEASE


def test_an_answer_exported_as_json_is_read_like_the_markdown() -> None:
    from desktop_app.core.library.history import audit_record

    record = SavedAnswer.from_json({
        "answer_id": "a2", "question": "Which frame?", "style": "shortid",
        "text": "A value of 126 means a 16-bit payload length [ab12cd3]. Thanks for asking!",
        "citations": {"ab12cd3": [[46, 55]]},
        "sources": [{"id": "ab12cd3", "chunk_id": "rfc", "doc_id": "d", "doc_path": "/lib/rfc6455.pdf",
                     "page": 31, "page_label": "29", "text": RFC, "char_start": 0, "char_end": 9}],
    })
    checked = read_text(json.dumps(audit_record(record)), "answer.json")
    assert checked.exported and checked.title == "Which frame?"
    assert checked.text == "A value of 126 means a 16-bit payload length. Thanks for asking!"
    assert checked.cited == (("ab12cd3",), ())
    note = checked.footnotes["ab12cd3"]
    assert (note.chunk_id, note.file_name, note.page_label, note.passage) == ("rfc", "rfc6455.pdf", "29", RFC)
    (first, _thanks) = run(TextChecker(), json.dumps(audit_record(record)))
    assert first.verdict is Verdict.SUPPORTED and first.where == "rfc6455.pdf p. 29"
    # A JSON text that is no audit record is read as text.
    assert read_text('{"note": "Rent is due monthly."}').sentences


def test_plain_markers_are_read_and_removed_without_footnotes() -> None:
    checked = read_text("The rent is due monthly [3]. Nothing cites here.")
    assert checked.text == "The rent is due monthly. Nothing cites here."
    assert checked.cited == (("3",), ())


# ----------------------------------------------------------------- checking sentences
class FakeLibrary:
    def __init__(self, *passages: Passage) -> None:
        self.passages = {p.chunk_id: p for p in passages}
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[Passage]:
        self.queries.append(query)
        words = set(query.lower().split())
        ranked = sorted(self.passages.values(), key=lambda p: -len(words & set(p.text.lower().split())))
        return ranked[:k]

    def lookup(self, chunk_id: str) -> Passage | None:
        return self.passages.get(chunk_id)


def run(checker: TextChecker, raw: str) -> list:  # type: ignore[type-arg]
    events = list(checker.run(read_text(raw)))
    assert events[-1].event == "check_finished" and events[-1].sentences == len(events) - 1
    return events[:-1]


def test_cited_passages_come_first_and_are_looked_up_in_the_library() -> None:
    rfc, lease = passage("rfc", RFC, page=31, char_start=40), passage("lease", LEASE, page=2)
    library = FakeLibrary(rfc, lease)
    checks = run(TextChecker(library.search, library.lookup), exported_answer())
    first, second, hello, both = checks
    assert first.verdict is Verdict.SUPPORTED and first.from_citation and first.source is not None
    assert (first.source.id, first.source.chunk_id, first.source.page, first.where) == ("1", "rfc", 31, "rfc.pdf p. 31")
    # A supported cited sentence needs no retrieval: only the other sentences were searched.
    assert "A value of 126" not in " ".join(library.queries)
    assert first.quote.startswith("If 126, the following 2 bytes")
    a, b = first.support[0]
    assert first.highlight()[0] == (40 + a, 40 + b)  # offsets into the page's text
    assert second.source is not None and second.source.chunk_id == "lease" and second.from_citation
    assert hello.verdict is Verdict.NOT_FACTUAL and hello.source is None
    assert str(both.verdict) in {"not_confirmed", "contradicted"}


def test_without_the_library_the_exported_quote_is_checked() -> None:
    checks = run(TextChecker(), exported_answer())
    assert checks[0].verdict is Verdict.SUPPORTED and checks[0].source is None
    assert checks[0].where == "rfc6455.pdf p. 29" and checks[0].quote.startswith("If 126")


def test_a_draft_sentence_gets_the_best_passage_retrieval_finds() -> None:
    library = FakeLibrary(passage("rfc", RFC), passage("lease", LEASE, page=7))
    draft = "# Notes on the tenant and the landlord\n\nThe tenant must report damage to the landlord within 30 days.\n\nMoon rocks taste of cheese."
    title, tenant, moon = run(TextChecker(library.search, library.lookup), draft)
    assert title.verdict is Verdict.NOT_FACTUAL and title.reason == "a heading"  # shown, not checked
    assert tenant.verdict is Verdict.SUPPORTED and not tenant.from_citation
    assert tenant.source is not None and tenant.source.page == 7 and tenant.where == "lease.pdf p. 7"
    assert tenant.reason.startswith("best passage found in the library")
    assert moon.verdict is Verdict.NOT_CONFIRMED


def test_a_cited_passage_that_does_not_support_gives_way_to_a_better_one() -> None:
    library = FakeLibrary(passage("rfc", RFC), passage("lease", LEASE, page=7))
    raw = ("The tenant must report damage within 30 days [^1].\n\n"
           "[^1]: RFC (`rfc.pdf`), p. 3 — sha256 d, version 1, chunk rfc\n\n    > " + RFC + "\n")
    (check,) = run(TextChecker(library.search, library.lookup), raw)
    assert check.cited == ("1",) and not check.from_citation
    assert check.source is not None and check.source.chunk_id == "lease"
    assert "the cited [1] support it less" in check.reason


def test_quotes_fold_whitespace_and_stay_short() -> None:
    text = "First  line\nof the passage. " + "word " * 100
    assert quote_of(text, [(0, 27)]) == "First line of the passage."
    assert len(quote_of(text, [(0, len(text))], limit=50)) <= 50


# ----------------------------------------------------------------- --claims lines
def test_claims_lines_are_read_or_say_what_is_wrong() -> None:
    claim = read_claims_line(json.dumps({"sentence": "S.", "passages": [{"label": 1, "text": "T."}], "ids": [1], "id": "q7"}))
    assert (claim.sentence, claim.passages, claim.ids, claim.key) == ("S.", {"1": "T."}, ("1",), "q7")
    for line, words in [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"passages": []}', '"sentence"'),
        ('{"sentence": "S.", "passages": {"1": "T"}}', '"passages" must be a list'),
        ('{"sentence": "S.", "passages": [{"label": "1"}]}', 'passage 1 must be an object with a "text"'),
        ('{"sentence": "S.", "passages": [], "ids": "1"}', '"ids" must be a list'),
    ]:
        with pytest.raises(BadClaimLine, match=words):
            read_claims_line(line)


def test_claims_get_one_result_per_line_in_order_with_the_quote() -> None:
    passages = [{"label": "1", "text": RFC}, {"label": "2", "text": LEASE}]
    lines = [
        json.dumps({"sentence": "The tenant must report damage to the landlord within 30 days.",
                    "passages": passages, "ids": ["2"], "id": "a"}),
        "",
        "{broken",
        json.dumps({"sentence": "The tenant must report damage within 90 days.", "passages": passages, "ids": ["2"]}),
        json.dumps({"sentence": "The payload length is 16 bits when the value is 126.", "passages": passages,
                    "ids": ["9"]}),
    ]
    results: list[dict] = []  # type: ignore[type-arg]
    check_claims(lines, results.append, lambda: False)
    assert [r["line"] for r in results] == [1, 3, 4, 5]
    good, broken, wrong_number, invented = results
    assert good["id"] == "a" and good["verdict"] == "supported" and good["support_label"] == "2"
    assert good["quote"] == LEASE and good["score"] > 0.7
    assert broken["error"].startswith("not JSON") and "verdict" not in broken
    assert wrong_number["verdict"] in {"not_confirmed", "contradicted"} and "90" in wrong_number["reason"]
    assert invented["verdict"] != "supported" or invented["support_label"] == "1"
    assert "[9]" in invented["reason"]


def test_a_claim_without_ids_is_uncited_as_in_an_answer() -> None:
    claim = read_claims_line(json.dumps({"sentence": LEASE, "passages": [{"label": "1", "text": LEASE}]}))
    result = claim_result(claim, check_claim(claim))
    assert result["verdict"] == "uncited" and result["support_label"] == "1" and result["quote"] == LEASE


def test_a_passage_that_says_otherwise_is_shown_over_a_loosely_related_one() -> None:
    """The issue's 2*N sentence in a draft: the RFC passage states the opposite for a
    single-user client; it outranks a passage that merely shares words."""
    rfc = ("Clients that use persistent connections SHOULD limit the number of simultaneous connections "
           "that they maintain to a given server. A single-user client SHOULD NOT maintain more than 2 "
           "connections with any server or proxy. A proxy SHOULD use up to 2*N connections to another "
           "server or proxy, where N is the number of simultaneously active users.")
    loose = "Users of a server keep connections open; the number of active users varies during the day."
    library = FakeLibrary(passage("loose", loose, page=3), passage("rfc", rfc, page=47))
    sentence = ("A single-user client should keep up to 2*N connections to one server, where N is the number "
                "of simultaneously active users.")
    (check,) = run(TextChecker(library.search, library.lookup), sentence)
    assert check.source is not None and check.source.chunk_id == "rfc"
    assert str(check.verdict) in {"contradicted", "not_confirmed"}
    assert "SHOULD NOT maintain more than 2" in check.quote
