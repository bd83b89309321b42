"""Chunks are what retrieval returns and citations open: they must point at exact text on
one page, follow the document's headings and clauses, and fit the embedder's window."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from desktop_app.core.ids import chunk_id
from desktop_app.core.ingest.chunking import chunk_document, detect_heading, wordpiece_tokens
from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.types import Chunk, DocStatus, ExtractedDocument, PageQuality, PageText
from tests.conftest import require, strict

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
DOC_ID = "ab" * 32


def make_doc(*pages: str, quality: PageQuality = PageQuality.OK) -> ExtractedDocument:
    return ExtractedDocument(
        path="/docs/x.pdf",
        doc_id=DOC_ID,
        size=1,
        mtime=0.0,
        title="x",
        status=DocStatus.INDEXED,
        page_count=len(pages),
        pages=tuple(
            PageText(i + 1, str(i + 1), 612.0, 792.0, 0, text, quality)
            for i, text in enumerate(pages)
        ),
    )


def assert_exact(doc: ExtractedDocument, chunks: list[Chunk]) -> None:
    for chunk in chunks:
        page = doc.pages[chunk.page - 1]
        assert page.text[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.chunk_id == chunk_id(DOC_ID, chunk.page, chunk.index)


def sentences(topic: str, count: int) -> str:
    return " ".join(
        f"Sentence {i} about {topic} explains one more detail of the rule." for i in range(count)
    )


ENGLISH_PAGE_1 = "\n".join(
    [
        "Chapter 3 Results",
        sentences("results", 6),
        "3.1 Setup",
        sentences("setup", 6),
        "Section 4.2 Limits",
        sentences("limits", 6),
    ]
)
ENGLISH_PAGE_2 = "\n".join(
    [
        sentences("limits", 6),
        "§ 12 Fees",
        sentences("fees", 6),
        "Article 5 Termination",
        sentences("termination", 6),
        "DEFINITIONS",
        sentences("definitions", 6),
    ]
)


def test_english_headings_start_chunks_and_name_their_section() -> None:
    doc = make_doc(ENGLISH_PAGE_1, ENGLISH_PAGE_2)
    chunks = chunk_document(doc)
    assert_exact(doc, chunks)
    by_start = {c.text.split("\n", 1)[0]: c.section for c in chunks}
    assert by_start["Chapter 3 Results"] == "Chapter 3 Results"
    assert by_start["3.1 Setup"] == "Chapter 3 Results > 3.1 Setup"
    assert by_start["Section 4.2 Limits"] == "Chapter 3 Results > Section 4.2 Limits"
    first_on_page_2 = next(c for c in chunks if c.page == 2)
    assert first_on_page_2.section.endswith("Section 4.2 Limits")  # carried over the page break
    assert by_start["§ 12 Fees"].endswith("Section 4.2 Limits > § 12 Fees")
    assert by_start["Article 5 Termination"] == "Chapter 3 Results > Article 5 Termination"
    assert by_start["DEFINITIONS"] == "DEFINITIONS"
    assert all("\n" not in c.text or not c.text.endswith("Chapter 3 Results") for c in chunks)


def test_chinese_chapters_sections_and_clauses() -> None:
    page = "\n".join(
        [
            "第三章 总则",
            "第一条 为了规范建设用地，制定本标准。" * 3,
            "第二节 用地指标",
            "各类项目用地应当符合本节规定。" * 4,
            "第8.3.2条 服务设施用地指标不宜超过3.4公顷。" * 3,
            "一、适用范围",
            "本标准适用于全省新建项目。" * 3,
        ]
    )
    doc = make_doc(page)
    chunks = chunk_document(doc, max_tokens=60)
    assert_exact(doc, chunks)
    sections = {c.text[:6]: c.section for c in chunks}
    assert sections["第三章 总则"] == "第三章 总则 > 第一条"  # the text under 第一条
    assert sections["第二节 用地"] == "第三章 总则 > 第二节 用地指标"
    assert sections["第8.3.2"] == "第三章 总则 > 第二节 用地指标 > 第8.3.2条"
    assert sections["一、适用范围"] == "第三章 总则 > 一、 适用范围"


@pytest.mark.parametrize(
    ("line", "entry"),
    [
        ("8.3.2 Fire Resistance", "8.3.2 Fire Resistance"),
        ("8.3.2 The tenant shall keep the building insured at all times.", "8.3.2"),
        ("# Overview", "Overview"),
        ("Chapter IV", "Chapter IV"),
        ("第8.3.2条", "第8.3.2条"),
        ("ANNEX B TECHNICAL DATA", "ANNEX B TECHNICAL DATA"),
        ("Note 5 - Acquisitions and Divestitures", "Note 5 Acquisitions and Divestitures"),
        ("NOTE 8.  GOODWILL AND OTHER INTANGIBLES", "NOTE 8 GOODWILL AND OTHER INTANGIBLES"),
        ("Consolidated Statements of Cash Flows", "Consolidated Statements of Cash Flows"),
        ("Condensed Consolidated Balance Sheets", "Condensed Consolidated Balance Sheets"),
        ("Consolidated Balance Shee", "Consolidated Balance Shee"),  # a word the PDF's text layer broke
    ],
)
def test_heading_forms(line: str, entry: str) -> None:
    heading = detect_heading(line)
    assert heading is not None and heading.entry == entry


@pytest.mark.parametrize(
    "line",
    [
        "3.2 Results ........................ 12",  # a table-of-contents entry
        "3.5 million people lived in the region.",
        "18,870 23,022 22,650 859",
        "The tenant pays the rent.",
        "第2节 宏包依赖 2",
        "Note 3 to the financial statements shows that revenue fell.",
        "Consolidated statements of operations are prepared under GAAP.",
        "52 Weeks Ended",  # a table's column head
        "(MILLIONS)",
        "(UNAUDITED)",
    ],
)
def test_not_headings(line: str) -> None:
    heading = detect_heading(line)
    assert heading is None or heading.entry == ""


def test_chunks_fit_the_token_budget_and_end_at_sentences() -> None:
    doc = make_doc(sentences("budget", 60))
    chunks = chunk_document(doc, max_tokens=100)
    assert_exact(doc, chunks)
    assert len(chunks) > 3
    assert all(wordpiece_tokens(c.text) <= 100 for c in chunks)
    assert all(c.text.endswith("rule.") and c.text.startswith("Sentence") for c in chunks)


def test_overlap_repeats_whole_sentences_within_the_page() -> None:
    short = " ".join(f"Rule {i} is short." for i in range(80))
    doc = make_doc(short)
    chunks = chunk_document(doc, max_tokens=60, overlap_chars=40)
    assert_exact(doc, chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        overlap = before.char_end - after.char_start
        assert 0 < overlap <= 40
        assert after.text.startswith("Rule ")


def test_a_custom_token_counter_is_respected() -> None:
    doc = make_doc(sentences("words", 40))
    words = chunk_document(doc, max_tokens=50, count_tokens=lambda text: len(text.split()))
    assert all(len(c.text.split()) <= 50 for c in words)
    assert len(words) > len(chunk_document(doc, max_tokens=500))


def test_text_without_sentence_ends_is_still_cut_within_budget() -> None:
    doc = make_doc("规范" * 700, "word " * 600)
    chunks = chunk_document(doc, max_tokens=100, overlap_chars=0)
    assert_exact(doc, chunks)
    assert all(wordpiece_tokens(c.text) <= 100 for c in chunks)
    assert "".join(c.text for c in chunks if c.page == 1) == "规范" * 700


def test_only_ok_pages_are_chunked_and_chunks_never_cross_pages() -> None:
    doc = make_doc("First page text. " * 5, "/g3/g4/g5 " * 30, "Third page text. " * 5)
    doc = ExtractedDocument(
        **{
            **doc.__dict__,
            "pages": (
                doc.pages[0],
                PageText(2, "2", 612.0, 792.0, 0, doc.pages[1].text, PageQuality.GARBLED),
                doc.pages[2],
            ),
        }
    )
    chunks = chunk_document(doc)
    assert [c.page for c in chunks] == [1, 3]
    assert [c.index for c in chunks] == [0, 0]


def test_running_heads_are_not_sections() -> None:
    pages = [f"ANNUAL REPORT 2020\n{sentences('page ' + str(i), 3)}\n{i}" for i in range(1, 6)]
    doc = make_doc(*pages)
    assert {c.section for c in chunk_document(doc)} == {""}


def test_chunking_is_deterministic() -> None:
    doc = make_doc(ENGLISH_PAGE_1, ENGLISH_PAGE_2)
    assert chunk_document(doc) == chunk_document(doc)


def test_token_estimate() -> None:
    assert wordpiece_tokens("the cat sat") == 3
    assert wordpiece_tokens("建设用地") == 4
    assert wordpiece_tokens("Hello, world.") == 4
    assert wordpiece_tokens("Vollständigkeit") > 5  # a foreign word splits into many pieces
    assert wordpiece_tokens("Kaliber anderes", english=False) > wordpiece_tokens("Kaliber anderes")


@pytest.mark.skipif(not SHARED.is_dir() and not strict(), reason=f"{SHARED} is absent")
def test_a_real_chinese_standard_page_keeps_its_clause_numbers() -> None:
    doc = extract_document(str(SHARED / "corpus" / "zh_standard_anhui_landuse_p173.pdf"))
    chunks = chunk_document(doc)
    page_text = doc.pages[0].text
    for chunk in chunks:
        assert page_text[chunk.char_start : chunk.char_end] == chunk.text
    assert any(re.search(r"第7\.9条", c.section) for c in chunks)


def test_chunks_fit_the_real_embedder_window(embedder_dir: Path) -> None:
    require(SHARED.is_dir(), f"{SHARED} is absent")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(embedder_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    for name in ("en_paper_dpr_multicolumn.pdf", "zh_manual_ctex.pdf"):
        doc = extract_document(str(SHARED / "corpus" / name))
        lengths = [len(tokenizer.encode(c.text).ids) for c in chunk_document(doc)]  # with CLS/SEP
        assert max(lengths) <= 256, name


def test_a_contract_clause_stays_whole_with_its_sub_clauses(tmp_path: Path) -> None:
    """"Clause 4 Deposit" starts a chunk holding 4.1 (the amount) and 4.2 (the repayment),
    so a question about the deposit gets both from one passage."""
    from desktop_app.core.samples.pdfs import write_samples

    lease = next(p for p in write_samples(tmp_path) if p.name == "office-lease.pdf")
    chunks = chunk_document(extract_document(lease))
    deposit = [c for c in chunks if "14,400" in c.text]
    assert len(deposit) == 1
    assert deposit[0].text.startswith("Clause 4 Deposit") and "repaid within two months" in deposit[0].text
    assert deposit[0].section.startswith("Clause 4 Deposit")


def test_a_statement_page_carries_its_own_title_not_the_previous_pages() -> None:
    """The balance sheet's chunk opens with a "Table of Contents" link and the company's
    name, then "Consolidated Balance Sheets": its section is the balance sheet, not the
    income statement of the page before."""
    rows = "\n".join(f"The value of item {i} at the end of the year was 1,{i:03d}" for i in range(12))
    doc = make_doc(
        f"Table of Contents\nACME Corporation\nConsolidated Statements of Income\n{rows}\n",
        f"Table of Contents\nACME Corporation\nConsolidated Balance Sheets\n{rows}\n",
        "Table of Contents\nACME Corporation\nNote 5 - Acquisitions\nIn 2023 we bought Foo.\n",
    )
    chunks = chunk_document(doc)
    assert_exact(doc, chunks)
    first = {c.page: c.section for c in chunks if c.index == 0}
    assert first == {
        1: "Consolidated Statements of Income",
        2: "Consolidated Balance Sheets",
        3: "Note 5 Acquisitions",
    }


def test_running_heads_never_make_a_chunk_of_their_own() -> None:
    """A page's running heads (here above a "Note 13" heading, in a table-only document)
    stay with the text under them: a chunk of nothing but "PFIZER INC. … (UNAUDITED)"
    would match every question naming the company."""
    rows = "\n".join(f"Line item {i} 1,{i:03d} 2,{i:03d}" for i in range(12))
    head = "ACME INC. AND SUBSIDIARY COMPANIES.\nNOTES TO CONDENSED CONSOLIDATED FINANCIAL STATEMENTS\n(UNAUDITED)\n"
    doc = make_doc(*(f"{head}Note {n}. Commitments\n{rows}\n" for n in (11, 12, 13)))
    chunks = chunk_document(doc)
    assert_exact(doc, chunks)
    assert all("Line item" in c.text for c in chunks)
    assert [c.section for c in chunks if c.index == 0] == [f"Note {n} Commitments" for n in (11, 12, 13)]
