"""What a reader of the library sees after extraction: the text of each page where it is on
the page, page labels, and an honest status for files that cannot be read."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from desktop_app.core.ingest.extract import clean_text, extract_document, page_ranges
from desktop_app.core.ingest.parse_pool import parse_many
from desktop_app.core.ingest.text_quality import assess_text
from desktop_app.core.types import DocStatus, PageQuality
from tests.conftest import strict
from tests.pdfgen import FONT_SIZE, LEFT, line_origin, write_pdf

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
CORPUS = SHARED / "corpus"
HOSTILE = SHARED / "hostile"
needs_shared = pytest.mark.skipif(not SHARED.is_dir() and not strict(), reason=f"{SHARED} is absent")

ENGLISH = [
    "Hello World (test)",
    "The tenant pays the rent on the first day of each month.",
    "Either party may end the lease with three months notice.",
]
GLYPH_NAMES = "/g18/g152/g135/g148/g3/g145/g136/g3/g150/g138/g135/g3/g23/g135/g133/g138"
GBK_AS_LATIN1 = "Ä¿ ¡¡ ¡¡ Â¼ ¹Ø ÓÚ ºì ¾ü ×÷ Õ½ µÄ Ô­ Ôò £± ¡­ ¡­ ¡­ £¨ Ò» ¾Å Èý Æß Äê"


def test_text_labels_size_rotation_and_title(tmp_path: Path) -> None:
    pdf = write_pdf(
        tmp_path / "lease.pdf",
        [ENGLISH, ["Second page text here."]],
        title="Lease Agreement",
        page_labels=["iv", "1"],
        rotate=[0, 90],
    )
    doc = extract_document(str(pdf))
    assert doc.status == DocStatus.INDEXED and doc.error == ""
    assert doc.title == "Lease Agreement"
    assert doc.page_count == 2
    assert doc.pages[0].text == "\n".join(ENGLISH)
    assert doc.pages[1].text == "Second page text here."
    assert [p.label for p in doc.pages] == ["iv", "1"]
    assert [p.rotation for p in doc.pages] == [0, 90]
    assert (doc.pages[0].width, doc.pages[0].height) == (612.0, 792.0)
    data = pdf.read_bytes()
    assert doc.doc_id == hashlib.sha256(data).hexdigest() and doc.size == len(data)


def test_title_falls_back_to_the_file_name_and_labels_to_numbers(tmp_path: Path) -> None:
    doc = extract_document(str(write_pdf(tmp_path / "minutes-2024.pdf", [["a b c d"], ["e f g"]])))
    assert doc.title == "minutes-2024"
    assert [p.label for p in doc.pages] == ["1", "2"]


def test_each_line_is_a_run_with_its_box_on_the_page(tmp_path: Path) -> None:
    doc = extract_document(str(write_pdf(tmp_path / "runs.pdf", [ENGLISH])))
    page = doc.pages[0]
    assert [page.text[r.char_start : r.char_end] for r in page.runs] == ENGLISH
    for index, run in enumerate(page.runs):
        x, baseline = line_origin(index)
        assert run.x0 == pytest.approx(x, abs=0.4)
        assert run.y0 < baseline < run.y1
        assert run.y0 == pytest.approx(baseline - 0.207 * FONT_SIZE, abs=0.4)  # Helvetica descent
        assert run.y1 == pytest.approx(baseline + 0.718 * FONT_SIZE, abs=0.4)  # and ascent
    # Helvetica advance widths of "Hello World (test)" sum to 7723/1000 em.
    assert page.runs[0].x1 == pytest.approx(LEFT + 7.723 * FONT_SIZE, abs=0.4)


def test_boxes_are_measured_from_the_corner_viewers_show(tmp_path: Path) -> None:
    doc = extract_document(str(write_pdf(tmp_path / "crop.pdf", [ENGLISH],
                                         crop_box=(50, 100, 562, 742))))
    page = doc.pages[0]
    assert (page.width, page.height) == (512.0, 642.0)  # the crop box, as viewers show it
    x, baseline = line_origin(0)
    assert page.runs[0].x0 == pytest.approx(x - 50, abs=0.4)
    assert page.runs[0].y0 < baseline - 100 < page.runs[0].y1


def test_a_blank_page_in_a_text_document_is_fine(tmp_path: Path) -> None:
    doc = extract_document(str(write_pdf(tmp_path / "blank.pdf", [ENGLISH, [], ENGLISH])))
    assert doc.status == DocStatus.INDEXED
    assert [p.quality for p in doc.pages] == [PageQuality.OK, PageQuality.EMPTY, PageQuality.OK]
    assert doc.bad_pages == []


def test_a_document_without_text_says_ocr_is_switched_off(tmp_path: Path) -> None:
    doc = extract_document(str(write_pdf(tmp_path / "scan.pdf", [[], [], ["7"]])))
    assert doc.status == DocStatus.NO_TEXT_LAYER
    assert "OCR is switched off" in doc.error
    assert not doc.status.searchable


def test_glyph_name_pages_are_flagged_and_listed(tmp_path: Path) -> None:
    pages = [ENGLISH, [GLYPH_NAMES] * 5, [GLYPH_NAMES] * 5, ENGLISH]
    doc = extract_document(str(write_pdf(tmp_path / "glyphs.pdf", pages)))
    assert doc.status == DocStatus.INDEXED_PARTIALLY
    assert doc.bad_pages == [2, 3]
    assert "Pages 2–3" in doc.error and "glyph names" in doc.error
    assert doc.pages[1].quality == PageQuality.GARBLED


def test_mojibake_only_document_is_garbled_text(tmp_path: Path) -> None:
    doc = extract_document(str(write_pdf(tmp_path / "gbk.pdf", [[GBK_AS_LATIN1] * 8])))
    assert doc.status == DocStatus.GARBLED_TEXT
    assert "mojibake" in doc.error
    assert not doc.status.searchable


@pytest.mark.parametrize("content", [b"", b"this is not a PDF at all", b"%PDF-1.4\n1 0 obj\n<<"])
def test_broken_bytes_are_unreadable_with_a_reason(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(content)
    doc = extract_document(str(path))
    assert doc.status == DocStatus.UNREADABLE
    assert doc.error.startswith("Cannot read this PDF (") and doc.page_count == 0
    assert doc.doc_id == hashlib.sha256(content).hexdigest()


def test_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    doc = extract_document(str(tmp_path / "gone.pdf"))
    assert doc.status == DocStatus.UNREADABLE and "Cannot open the file" in doc.error


def test_extraction_is_deterministic(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "same.pdf", [ENGLISH, ENGLISH[:1]])
    assert extract_document(str(pdf)) == extract_document(str(pdf))


# --------------------------------------------------------------------------- text quality


def test_quality_score_separates_language_from_garbage() -> None:
    english = " ".join(ENGLISH) * 3
    chinese = "第一条 为了规范建设用地使用标准，根据有关法律法规，制定本标准。本标准适用于安徽省。"
    soup = "၂ٺ҂\u0dfe֥؋ࡥ LATEX 2ε ࢺക ࠇ 112 ٳᇒ࿐߶ ჰϱቔᆀ： ᇏ໓يၲ： ᇏ໓ϱЧ ᆃٺ໓֖൞૧֥ٮ；ᄝ"
    assert assess_text(english).quality == PageQuality.OK
    assert assess_text(chinese).quality == PageQuality.OK
    assert assess_text(english + " x\x00y\x01z").quality == PageQuality.OK  # a few stray controls
    for garbage, why in [
        (GLYPH_NAMES, "glyph names"),
        (GBK_AS_LATIN1, "Latin-1"),
        (soup, "unrelated scripts"),
        ("\ufffd" * 20 + " ab", "replacement"),
    ]:
        verdict = assess_text(garbage)
        assert verdict.quality == PageQuality.GARBLED and verdict.score >= 1, garbage
        assert why in verdict.reason
    verdict = assess_text("abcdefgh", unmapped_chars=8)  # CIDs that happen to be Latin letters
    assert verdict.quality == PageQuality.GARBLED and "Unicode map" in verdict.reason


def test_nearly_empty_text_is_empty_not_garbled() -> None:
    assert assess_text("").quality == PageQuality.EMPTY
    assert assess_text("  12 \n").quality == PageQuality.EMPTY
    assert assess_text("•").quality == PageQuality.EMPTY


def test_clean_text_keeps_offsets_simple() -> None:
    assert clean_text("a\x00b\r\nc\x07\x08d") == "a b\nc d"
    assert clean_text("x\ud800y") == "x\ufffdy"
    assert clean_text("ﬁne 中文\tok") == "ﬁne 中文\tok"  # no NFKC: matches what viewers show


def test_page_ranges() -> None:
    assert page_ranges([2, 3, 4, 9, 11, 12]) == "2–4, 9, 11–12"
    assert page_ranges([5]) == "5"


# --------------------------------------------------------------------------- shared files


@needs_shared
def test_encrypted_files_ask_for_a_password_and_open_with_it() -> None:
    locked = str(HOSTILE / "enc_aes256_both_pw.pdf")
    doc = extract_document(locked)
    assert doc.status == DocStatus.NEEDS_PASSWORD and "password" in doc.error
    wrong = extract_document(locked, ["nope"])
    assert wrong.status == DocStatus.NEEDS_PASSWORD and "none of the 1 password" in wrong.error
    opened = extract_document(locked, ["nope", "foo"])
    assert opened.status == DocStatus.INDEXED and "pdf encryption test" in opened.pages[0].text
    owner_only = extract_document(str(HOSTILE / "enc_aes256_owner_only.pdf"))
    assert owner_only.status == DocStatus.INDEXED  # empty user password: no prompt


@needs_shared
def test_glyph_name_pages_of_the_tam_review_are_not_indexed() -> None:
    doc = extract_document(str(CORPUS / "en_paper_TAMReview.pdf"))
    assert doc.status == DocStatus.INDEXED_PARTIALLY
    assert doc.bad_pages == list(range(2, 23))
    assert "Pages 2–22" in doc.error
    assert "Technology Acceptance Model" in doc.pages[0].text


@pytest.mark.slow
@needs_shared
def test_whole_corpus_extracts_with_only_the_known_trap_flagged() -> None:
    paths = sorted(str(p) for p in CORPUS.glob("*.pdf"))
    started = time.monotonic()
    docs = {Path(d.path).name: d for d in parse_many(paths, timeout_s=300, workers=2)}
    seconds = time.monotonic() - started
    pages = sum(d.page_count for d in docs.values())
    print(
        f"corpus: {len(docs)} files, {pages} pages in {seconds:.1f} s ({pages / seconds:.0f} pages/s)"
    )
    assert len(docs) == 27 and pages == 1218
    tam = docs.pop("en_paper_TAMReview.pdf")
    assert tam.status == DocStatus.INDEXED_PARTIALLY and tam.bad_pages == list(range(2, 23))
    assert {name: d.status for name, d in docs.items()} == dict.fromkeys(docs, DocStatus.INDEXED)
    chinese = docs["zh_audit_letter_scan_ocr.pdf"]  # a scan with an OCR text layer
    assert all(p.quality == PageQuality.OK for p in chinese.pages)
