"""Section names a reader sees beside a source: never a MIME boundary ("--THIS_STRING_
SEPARATES--" in RFC 2616), a row of punctuation, a running head or footer, or a sentence
that goes on; and libraries indexed before get their names re-derived without re-parsing."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from pathlib import Path

import pytest

from desktop_app.core.ingest.chunking import (
    chunk_document,
    detect_heading,
    is_separator,
    sections_of,
)
from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.ingest.parse_pool import parse_many
from desktop_app.core.types import DocStatus, ExtractedDocument, PageQuality, PageText
from tests.conftest import strict

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
CORPUS = SHARED / "corpus"
needs_shared = pytest.mark.skipif(not SHARED.is_dir() and not strict(), reason=f"{SHARED} is absent")
MIME_BOUNDARY = re.compile(r"--\S+")
LONGEST_NAME = 100  # characters: the longest a section name can be (label + a title)


@pytest.mark.parametrize("line", [
    "--THIS_STRING_SEPARATES--", "--THIS_STRING_SEPARATES", "----------", "* * * * *", "=====",
    "__________________", "-- --",
])
def test_separators_are_never_headings(line: str) -> None:
    assert is_separator(line) and detect_heading(line) is None


@pytest.mark.parametrize(("line", "entry"), [
    ("Section 404 of the DMCA amends the exemption for nonprofit libraries and", "Section 404"),
    ("Section 106 , describes the authority of", "Section 106"),
    ("Section 4.2 Opening Handshake", "Section 4.2 Opening Handshake"),
    ("3.1 Setup", "3.1 Setup"),
])
def test_a_heading_that_goes_on_like_a_sentence_is_named_by_its_label(line: str, entry: str) -> None:
    heading = detect_heading(line)
    assert heading is not None and heading.entry == entry


def make_doc(*pages: str) -> ExtractedDocument:
    return ExtractedDocument(
        path="/docs/x.pdf", doc_id="ab" * 32, size=1, mtime=0.0, title="x", status=DocStatus.INDEXED,
        page_count=len(pages),
        pages=tuple(PageText(i + 1, str(i + 1), 612.0, 792.0, 0, t) for i, t in enumerate(pages)),
    )


BODY = " ".join(f"Sentence {i} says one more thing about the subject at hand." for i in range(12))


def body(topic: str) -> str:
    return " ".join(f"Sentence {i} says one more thing about {topic}." for i in range(12))


def test_a_running_head_drawn_mid_page_with_its_page_number_is_not_a_section() -> None:
    # Like Free Culture: "INTRODUCTION 7" sits in the middle of the page's text layer.
    pages = [f"{body(topic)}\nINTRODUCTION {n}\n{body(topic + ' law')}\n{body(topic + ' court')}"
             for n, topic in ((1, "piracy"), (3, "radio"), (5, "film"), (7, "books"))]
    sections = {c.section for c in chunk_document(make_doc("INTRODUCTION\n" + body("radio"), *pages))}
    assert sections == {"INTRODUCTION"}


def test_a_running_head_misread_once_by_ocr_is_still_one() -> None:
    heads = ["THE SIEGE OF VICKSBURG. 49", "50 THE SIEGE OF VICKSBURG.", "THE SIEGE OP VICKSBURG. 51",
             "THE SIEGE OF VICKSBURG. 53"]
    doc = make_doc(*(f"{head}\n{BODY}" for head in heads))
    assert {c.section for c in chunk_document(doc)} == {""}


def test_the_chapters_a_table_of_contents_lists_head_nothing_after_it() -> None:
    # Like ConTeXt 学习笔记: the contents list "第 7 章 制作演示文档" last, with no page
    # numbers, and p. 3's sections were "第7章 制作演示文档 > 1.1 ConTEXt Minimals".
    contents = "目 录\n第 1 章 让 ConTEXt 工作起来\n第 7 章 制作演示文档\n7.1 不用 ConTEXt 的模板 0."
    chapter = f"1.1 ConTEXt Minimals\n{body('installing')}"
    sections = [(c.page, c.section) for c in chunk_document(make_doc(contents, chapter))]
    assert sections[0] == (1, "目 录") and {s for page, s in sections if page == 2} == {"1.1 ConTEXt Minimals"}
    # A filing's "Table of Contents" link atop every page is a running head, not a contents page.
    notes = ["Note 1 Acquisitions", "Note 2 Goodwill", "Note 3 Leases", "Note 4 Debt"]
    pages = [f"Table of Contents\n{note}\n{body('deals')}" for note in notes]
    assert {c.section for c in chunk_document(make_doc(*pages))} == set(notes)


def test_indented_lines_of_a_plain_text_document_are_not_headings() -> None:
    # An RFC: headings at the margin, text, examples and reference lists indented.
    page = "\n".join([
        "14.35 Range", *[f"   {BODY[i * 60:(i + 1) * 60]}" for i in range(10)],
        "   --THIS_STRING_SEPARATES", "        Part 9: Latin alphabet No. 5, ISO-8859-9, 1990.",
        "   CRLF", *[f"   {BODY[i * 60:(i + 1) * 60]}" for i in range(10)],
    ])
    sections = {c.section for c in chunk_document(make_doc(page, page.replace("14.35 Range", "14.36 Referer")))}
    assert sections == {"14.35 Range", "14.36 Referer"}


def test_sections_of_stored_chunks_follow_todays_rules() -> None:
    page = "\n".join(["1 Scope", BODY, "W3C/MIT", BODY, "2 Terms", BODY])
    doc = make_doc(page)
    chunks = chunk_document(doc, max_tokens=60)
    spans = [(i, c.page, c.char_start, c.char_end) for i, c in enumerate(chunks)]
    spans.append((99, 1, chunks[-1].char_start + 3, chunks[-1].char_end))  # cut differently before
    sections = sections_of(doc, spans, max_tokens=60)
    assert [sections[i] for i in range(len(chunks))] == [c.section for c in chunks]
    assert sections[99] == chunks[-1].section == "2 Terms"


def running_heads(doc: ExtractedDocument) -> set[str]:
    """Lines at the top or bottom (three lines each) of at least a fifth of the pages,
    spaces collapsed, lower case, digits as '#' (a rule of this test, not the chunker's)."""
    pages = [p for p in doc.pages if p.quality == PageQuality.OK]
    seen: Counter[str] = Counter()
    for page in pages:
        lines = [_key(line) for line in page.text.splitlines() if line.strip()]
        seen.update(set(lines[:3] + lines[-3:]))
    floor = max(3, len(pages) / 5)
    return {key for key, count in seen.items() if count >= floor}


def _key(text: str) -> str:
    return re.sub(r"\d", "#", re.sub(r"\s+", " ", text.strip().lower()))


def bad_section_names(doc: ExtractedDocument) -> list[str]:
    heads = running_heads(doc)
    names = {part for c in chunk_document(doc) for part in c.section.split(" > ") if part}
    bad = []
    for name in sorted(names):
        key = _key(name)
        if MIME_BOUNDARY.fullmatch(name) or is_separator(name) or len(name) > LONGEST_NAME:
            bad.append(name)
        elif any(difflib.SequenceMatcher(None, key, head).ratio() >= 0.9 for head in heads):
            bad.append(name)
    return bad


@needs_shared
@pytest.mark.parametrize("name", ["en_rfc2616_http11.pdf", "en_hist_siege_of_vicksburg_ocr.pdf"])
def test_the_issues_documents_have_no_boundary_or_running_head_sections(name: str) -> None:
    doc = extract_document(str(CORPUS / name))
    assert bad_section_names(doc) == []
    names = {part for c in chunk_document(doc) for part in c.section.split(" > ")}
    assert not any("THIS_STRING_SEPARATES" in n or "VICKSBURG" in n for n in names)
    if name.startswith("en_rfc2616"):
        assert {"14.35 Range", "19.2 Internet Media Type multipart/byteranges"} <= names
        assert not any(n.startswith("Part ") or n in ("W3C/MIT", "CRLF") for n in names)


@pytest.mark.slow
@needs_shared
def test_no_section_name_in_the_corpus_is_a_boundary_or_a_running_head() -> None:
    paths = sorted(str(p) for p in CORPUS.glob("*.pdf"))
    docs = [d for d in parse_many(paths, timeout_s=300, workers=2) if d.status.searchable]
    assert len(docs) == 27
    bad = {Path(d.path).name: names for d in docs if (names := bad_section_names(d))}
    assert bad == {}
