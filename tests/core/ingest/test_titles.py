"""A document's title as a person would name it: not "10811.exe", "rfc2616.txt" or
"Binder1.pdf" (metadata titles of the shared corpus), but the first page's title line or,
failing that, the file's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.ingest.titles import (
    choose_title,
    is_placeholder,
    looks_like_file_name,
    page_lines,
    title_line,
)
from desktop_app.core.types import PageText, TextRun
from tests.conftest import strict

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
needs_shared = pytest.mark.skipif(not SHARED.is_dir() and not strict(), reason=f"{SHARED} is absent")


@pytest.mark.parametrize("title", [
    "10811.exe", "rfc2616.txt", "Binder1.pdf", "Microsoft Word - report.docx", "C:\\docs\\draft",
    "/tmp/x.dvi", "zhlineskip-man", "final_report_v2",
])
def test_file_names_are_not_titles(title: str) -> None:
    assert looks_like_file_name(title.removeprefix("Microsoft Word - "))


@pytest.mark.parametrize("title", [
    "PDF.js - Wikipedia", "RFC 6455 - The WebSocket Protocol", "COVID-19", "Free Culture",
    "绘图语言 Asymptote 初步", "2007 Instruction 1040-NR",
])
def test_titles_are_titles(title: str) -> None:
    assert not looks_like_file_name(title) and not is_placeholder(title)


@pytest.mark.parametrize("title", ["", "Binder1", "untitled", "Document3", "Title", "\ufffd\ufffd", "1234"])
def test_placeholders_are_not_titles(title: str) -> None:
    assert is_placeholder(title)


def page(lines: list[tuple[str, float]], height: float = 792.0) -> PageText:
    """A page with one run per line, from the top, at the given font sizes."""
    text, runs, y = "", [], height - 72
    for words, size in lines:
        start = len(text)
        text += words + "\n"
        width = len(words) * size * 0.5
        runs.append(TextRun(start, start + len(words), 72.0, y, 72.0 + width, y + size, size))
        y -= size * 1.4
    return PageText(1, "1", 612.0, height, 0, text, runs=tuple(runs))


BODY = [("This paragraph is the body of the page and goes on for a while.", 10.0)] * 8


def test_the_largest_line_near_the_top_is_the_title_and_its_second_line_joins_it() -> None:
    first = page([("Working Papers", 12.0), ("Overview of the Model:", 15.0),
                  ("Origins and Directions", 15.0), ("A. Author", 10.0), *BODY])
    assert [line.text for line in page_lines(first)][:3] == [
        "Working Papers", "Overview of the Model:", "Origins and Directions"]
    assert title_line(first) == ("Overview of the Model: Origins and Directions", True)
    assert choose_title("", first, "file") == "Overview of the Model: Origins and Directions"


def test_the_end_of_a_sentence_set_large_is_not_a_title() -> None:
    """A scan's OCR boxes can make the last line of a paragraph the tallest on the page
    (scan_flattened_loremipsum.pdf gave "ametdapibus justo.")."""
    scan = page([("ametdapibus justo.", 15.0), *BODY])
    assert title_line(scan) == ("", False)
    assert choose_title("", scan, "scan_flattened_loremipsum") == "scan_flattened_loremipsum"


def test_the_rule_in_order() -> None:
    first = page([("Annual Report 2023", 20.0), *BODY])
    # A good metadata title wins; a file name or a placeholder does not.
    assert choose_title("Report of the Board of Directors", first, "ar2023") == "Report of the Board of Directors"
    assert choose_title("ar2023.indd", first, "ar2023") == "Annual Report 2023"
    assert choose_title("Microsoft Word - ar2023.doc", first, "ar2023") == "Annual Report 2023"
    assert choose_title("Binder1", first, "ar2023") == "Annual Report 2023"
    # Fewer than three words: the page's larger title line, unless the metadata holds it.
    assert choose_title("Draft", first, "ar2023") == "Annual Report 2023"
    assert choose_title("Annual Report 2023 - ACME", first, "ar2023") == "Annual Report 2023 - ACME"
    # Nothing larger on the page: the short metadata title stays; nothing at all: the name.
    plain = page(BODY)
    assert choose_title("Draft", plain, "ar2023") == "Draft"
    assert choose_title("", plain, "ar2023") == "ar2023"
    assert choose_title("", None, "ar2023") == "ar2023"


def test_a_plain_text_page_takes_its_centred_line() -> None:
    lines = [("Network Working Group          R. Fielding", 9.0), ("Request for Comments: 2616", 9.0)]
    first = page([*lines, ("", 9.0), ("", 9.0), ("Hypertext Transfer Protocol", 9.0), ("", 9.0),
                  *[("Status of this memo and some more words across the line.", 9.0)] * 6])
    runs = list(first.runs)
    title_run = next(r for r in runs if first.text[r.char_start:r.char_end] == "Hypertext Transfer Protocol")
    width = title_run.x1 - title_run.x0
    left = 72.0 + (len("Status of this memo and some more words across the line.") * 4.5 - width) / 2
    centred = TextRun(title_run.char_start, title_run.char_end, left, title_run.y0, left + width, title_run.y1, 9.0)
    first = PageText(1, "1", 612.0, 792.0, 0, first.text,
                     runs=tuple(centred if r is title_run else r for r in runs if r.char_end > r.char_start))
    assert title_line(first) == ("Hypertext Transfer Protocol", False)
    assert choose_title("rfc2616.txt", first, "rfc2616") == "Hypertext Transfer Protocol"


@needs_shared
@pytest.mark.parametrize(("name", "metadata", "title"), [
    ("en_rfc2616_http11.pdf", "rfc2616.txt", "Hypertext Transfer Protocol -- HTTP/1.1"),
    ("en_gov_scotus_transcript_p1.pdf", "10811.exe", "en_gov_scotus_transcript_p1"),
    ("en_hist_siege_of_vicksburg_ocr.pdf", "Binder1.pdf", "en_hist_siege_of_vicksburg_ocr"),
    ("en_wiki_pdfjs_article.pdf", "PDF.js - Wikipedia", "PDF.js - Wikipedia"),
    ("en_paper_TAMReview.pdf", "Overview of the Technology Acceptance Model",
     "Overview of the Technology Acceptance Model: Origins, Developments and Future Directions"),
    ("en_paper_dpr_multicolumn.pdf", "", "Dense Passage Retrieval for Open-Domain Question Answering"),
    ("zh_manual_zhlineskip.pdf", "zhlineskip-man", "zhlineskip 宏包"),
    ("zh_report_dbdq_2018q1.pdf", "", "东北电气发展股份有限公司 2018 年第一季度报告"),
])
def test_corpus_titles_read_as_titles(name: str, metadata: str, title: str) -> None:
    """The corpus files whose metadata titles are file names or cut short."""
    doc = extract_document(str(SHARED / "corpus" / name), title_only=True)
    assert doc.title == title
    if metadata:
        from pypdf import PdfReader

        assert str(PdfReader(SHARED / "corpus" / name).metadata.get("/Title", "")).startswith(metadata)


@needs_shared
def test_every_corpus_title_is_readable() -> None:
    """No corpus document is named by a file name with an extension or a tool's default."""
    for pdf in sorted((SHARED / "corpus").glob("*.pdf")):
        title = extract_document(str(pdf), title_only=True).title
        assert title and not is_placeholder(title), pdf.name
        assert not title.lower().endswith((".exe", ".txt", ".pdf", ".doc")), (pdf.name, title)
