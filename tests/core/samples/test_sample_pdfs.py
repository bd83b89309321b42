"""The sample folder: real PDFs in English and Chinese whose text extracts as written."""

from __future__ import annotations

from pathlib import Path

import pypdf

from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.samples.pdfs import text_width, wrap, write_samples
from desktop_app.core.types import DocStatus, PageQuality


def test_samples_extract_in_english_and_chinese(tmp_path: Path) -> None:
    files = write_samples(tmp_path / "samples")
    assert [f.name for f in files] == [
        "pump-maintenance-manual.pdf", "office-lease.pdf", "pump-manual-zh.pdf", "lease-zh.pdf",
    ]  # fmt: skip
    texts = {f.name: "\n".join(p.extract_text() for p in pypdf.PdfReader(f).pages) for f in files}
    assert "The warranty period is 24 months from the date of delivery" in " ".join(texts["pump-maintenance-manual.pdf"].split())
    assert "3.2 Rent and service charges are due in advance" in texts["office-lease.pdf"]
    assert "第4.1条 保修期为自交货之日起24个月" in texts["pump-manual-zh.pdf"]
    assert "押金人民币13000元" in texts["lease-zh.pdf"].replace("\n", "")
    assert pypdf.PdfReader(files[3]).metadata.title == "房屋租赁合同"


def test_folio_indexes_the_chinese_sample_as_readable_text(tmp_path: Path) -> None:
    lease = write_samples(tmp_path)[3]
    document = extract_document(str(lease))
    assert document.status is DocStatus.INDEXED
    assert document.pages and all(p.quality is PageQuality.OK for p in document.pages)
    assert "第3条 租金及支付方式" in document.pages[0].text


def test_writing_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    first = [f.read_bytes() for f in write_samples(tmp_path / "a")]
    second = [f.read_bytes() for f in write_samples(tmp_path / "b")]
    assert first == second


def test_wrapping_keeps_lines_inside_the_margin_and_numbers_whole() -> None:
    width = 200.0
    english = wrap("The rent is 4,800 euros per month, plus service charges of 620 euros.", width, 11, "sans")
    assert len(english) > 1 and all(text_width(line, 11) <= width for line in english)
    chinese = wrap("甲方将位于上海市浦东新区东方路88号5号楼1203室的房屋出租给乙方居住使用。", width, 11, "cjk")
    assert all(text_width(line, 11, "cjk") <= width + 11 for line in chinese)
    assert not any(line.startswith(("。", "，")) for line in chinese)
    assert any("1203" in line for line in chinese)  # the number is not split across lines
