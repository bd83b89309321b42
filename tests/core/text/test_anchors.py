"""A question's numbers and names, and the gate that refuses when the documents lack them."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.answer.gate import RefusalKind, refusal
from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.text.anchors import Anchors, anchors, holds_number, near_miss
from tests.core.answer.test_gate import Found
from tests.core.search.test_retrieve import add_document


@pytest.mark.parametrize(("question", "language", "expected"), [
    ("What does HTTP status code 429 Too Many Requests mean?", "en",
     Anchors(("429",), ("Too", "Many", "Requests"))),
    ("What top-20 retrieval accuracy does DPR reach on HotpotQA?", "en", Anchors((), ("HotpotQA",))),
    ("What did the Supreme Court decide in Golan v. Holder?", "en", Anchors((), ("Supreme", "Court", "Golan"))),
    ("What is the filing deadline for the 2010 Form 1040NR?", "en", Anchors(("2010",), ("Form",))),
    # A number the question computes with, an acronym, a word of letters and digits: none.
    ("What is the FY2017 DPO? DPO is 365 * (average payables) / COGS", "en", Anchors()),
    ("Von wem stammen die Knotenbilder in Abbildung 1.11?", "de", Anchors(("1.11",), ())),
    # German nouns are capitalised: not names. "[0,1]" is two short numbers.
    ("Warum ist das Intervall [0,1] im Jahr 2016 keine Mannigfaltigkeit?", "de", Anchors(("2016",), ())),
    # Amounts are not handles: a unit, a currency, thousands separators, five digits.
    ("What torque does a 2500 kg vehicle need, and is the $1,200 fee or 15 % of 50000 due?", "en", Anchors()),
    ("一个 150 公顷的项目在 2018 年要交多少？", "zh", Anchors(("2018",), ())),
    ("What does section 7.4.1 of RFC 6455 say about code 1012?", "en", Anchors(("7.4.1", "6455", "1012"), ())),
    ("新一代 ConTeXt LMTX 怎么安装？", "zh", Anchors((), ("ConTeXt", "LMTX"))),
    ("ctex 宏包 2.0 版新增的 \\ctexset 命令怎么用？", "zh", Anchors(("2.0",), ("ctex", "ctexset"))),
    ("How many days does the tenant have to report damage?", "en", Anchors()),
    # A version after a slash is part of its name; "3/4" and "and/or" are not versions.
    ("在 HTTP/2 上用扩展 CONNECT 方法建立 WebSocket 时要设置哪个参数？", "zh",
     Anchors((), ("HTTP", "CONNECT", "WebSocket", "HTTP/2"))),
    ("Welchen Statuscode definiert HTTP/1.1 für 3/4 und/oder mehr Anfragen?", "de", Anchors((), ("HTTP/1.1",))),
])
def test_the_numbers_and_names_of_a_question(question: str, language: str, expected: Anchors) -> None:
    assert anchors(question, language) == expected


def test_a_number_is_found_as_documents_write_it() -> None:
    assert holds_number("1009 indicates that an endpoint is terminating", "1009")
    assert holds_number("a message of 1,009 bytes", "1009")
    assert holds_number("mit 1.009 Einträgen", "1009")
    assert holds_number("Abbildung 1.11: Knoten", "1.11")
    assert holds_number("2,5 % der Fläche", "2.5")
    assert holds_number("GB18030-2005", "2005")
    assert holds_number("二〇一二年四月十六日", "2012") and holds_number("二零一八年", "2018")
    assert holds_number("２０１８年一季度", "2018")  # full-width digits
    assert not holds_number("code 21009 and version 1.1009", "1009")
    assert not holds_number("Abbildung 1.111", "1.11")
    assert not holds_number("Abbildung 11.11", "1.11")


def test_a_typing_slip_is_not_a_new_name() -> None:
    words = {"netflix", "tabular", "luatex", "holder"}
    assert near_miss("Netfilx", words)  # two neighbours swapped
    assert near_miss("Neflix", words)  # a letter dropped
    assert near_miss("TABULUAR", words)  # a letter added
    assert not near_miss("LuaLaTeX", words)
    assert not near_miss("Golan", {"logan"})
    assert not near_miss("Hold", {"holder", "hole"})  # too short to guess


def test_the_gate_refuses_a_name_or_a_number_the_documents_lack() -> None:
    close = Found(0.9, 0.95)
    assert refusal(close) is None
    refused = refusal(Found(0.9, 0.95, unmentioned=("HotpotQA",)))
    assert refused is not None and refused.kind is RefusalKind.UNMENTIONED and refused.show_passages
    assert refused.reason.startswith("The documents never mention \u201cHotpotQA\u201d")
    refused = refusal(Found(0.9, 0.95, unmatched=("2010", "1040")))
    assert refused is not None and refused.kind is RefusalKind.UNMATCHED and refused.show_passages
    assert "\u201c2010\u201d or \u201c1040\u201d" in refused.reason


CODES = [
    ["7.4.1. Defined Status Codes. 1000 indicates a normal closure.",
     "1001 indicates that an endpoint is going away. 1002 indicates a protocol error."],
    ["1009 indicates that an endpoint is terminating the connection because it has received"
     " a message that is too big for it to process.",
     "Status codes 1000 to 1011 are defined here. The close code table lists the codes and the"
     " status code meaning of each close code in this protocol."],
]


def test_a_page_is_read_from_its_chunk_that_states_the_number(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.duckdb")
    add_document(store, None, "websocket", CODES)
    retriever = Retriever(store, None)
    # Page 2's best chunk for these words is the table's summary; its other chunk states 1009.
    question = "What does close status code 1009 mean in the close code table?"
    found = retriever.search(question, k=2)
    page2 = next(p for p in found.passages if p.page == 2)
    assert "1009 indicates" in page2.text and found.unmatched == ()
    # A code no page states: the gate refuses and says which.
    found = retriever.search("What does close status code 1012 mean in the close code table?", k=2)
    assert found.unmatched == ("1012",)
    # A name no chunk holds, even inside a word; one that a chunk holds inside a word is there.
    found = retriever.search("Which close codes does HotpotQA define?", k=2)
    assert found.unmentioned == ("HotpotQA",)
    assert retriever.search("Which codes does WebSocket define?", k=2).unmentioned == ()
    add_document(store, None, "senate", [["37,499.96DISTRICT DIRECTORBAIN, J MATTHEW"]])
    assert retriever.search("How much was paid to J Matthew Bain as district director?", k=2).unmentioned == ()
    # Within a scope the name must be in the scope's chunks.
    scoped = retriever.search("Which close status code did Matthew Bain define?", k=2,
                              scope=["/library/websocket.pdf"])
    assert scoped.passages and scoped.unmentioned == ("Matthew", "Bain")
    assert retriever.search("Which close status code did Matthew Bain define?", k=2).unmentioned == ()
    # "HTTP" and "2" are both in the library, "HTTP/2" is not; "HTTP/1.1" is.
    add_document(store, None, "http", [["HTTP/1.1 clients keep at most 2 connections to a server."]])
    assert retriever.search("How many connections may an HTTP/2 client keep?", k=2).unmentioned == ("HTTP/2",)
    assert retriever.search("How many connections may an HTTP/1.1 client keep?", k=2).unmentioned == ()
    store.close()


def test_handles_written_alike_in_every_language_and_ordinary_names() -> None:
    from desktop_app.core.text.anchors import alike_handles, written_alike

    assert [written_alike(n) for n in ("PDF.js", "xeCJK", "HTTP/2", "RFC6455")] == [True] * 4
    assert not any(written_alike(n) for n in ("Northeast", "Electric", "2018", "东北电气", "Golan"))
    assert alike_handles("Who launched the PDF.js project, and in which year?", "en") == ("PDF.js",)
    assert alike_handles("Does xeCJK speak HTTP/2 as RFC6455 says, e.g. in 2018?", "en") == (
        "xeCJK", "HTTP/2", "RFC6455")
    assert alike_handles("What was Northeast Electric's revenue in 2018?", "en") == ()
