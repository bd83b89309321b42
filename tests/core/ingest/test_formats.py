"""The readers of core/ingest/formats: every file of ../shared/formats with its real title
and section names; generated documents; and hostile containers (truncated zip, zip bomb,
entity bomb, external entity to a local file, DRM, password, huge paragraph, binary junk)
each ending in a status, through the real parse pool, within its time limit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from desktop_app.core.ingest.chunking import chunk_document
from desktop_app.core.ingest.formats import SUFFIXES, read_document
from desktop_app.core.ingest.formats.text import decode_text
from desktop_app.core.ingest.parse_pool import parse_many
from desktop_app.core.types import DOCUMENT_SUFFIXES, BlockKind, DocStatus
from tests import docgen

# file -> (title, a section path its chunks carry)
SHARED_FILES = {
    "en_debref_ch01_tutorials.html": ("Chapter 1. GNU/Linux tutorials", "1.1. Console basics"),
    "de_debref_ch01_tutorials.html": ("Kapitel 1. GNU/Linux-Lehrstunde", "1.1."),
    "zh_debref_ch01_tutorials.html": ("第 1 章 GNU/Linux 教程", "1.1."),
    "en_debref_ch02_packages.html": ("Chapter 2. Debian package management", "2.1.3. Life with eternal upgrades"),
    "en_debref_ch06_netapps.epub": ("Debian Reference, Chapter 6. Network applications", "6.1. Web browsers"),
    "zh_debref_ch06_netapps.epub": ("Debian 参考手册第 6 章网络应用", "6.1."),
    "en_debref_ch10_data.md": ("Chapter 10. Data management", "10.1.1. Archive and compression tools"),
    "de_debref_ch07_gui.md": ("Kapitel 7. GUI-System", "7.1."),
    "en_debref_part2.txt": ("2.1. Debian package management prerequisites", "2.1.3. Life with eternal upgrades"),
    "en_handbook_apparmor.docx": ("14.4. Introduction to AppArmor", "14.4.1. Principles"),
    "de_handbook_apparmor.docx": ("14.4. Einführung in AppArmor", "14.4.1."),
    "zh_handbook_apparmor.docx": ("14.4. AppArmor 简介", "14.4.1. 原理"),
    "zh_handbook_auto_upgrades.docx": ("6.9. 自动升级", "6.9.1."),
    "en_handbook_installation.odt": ("Chapter 4. Installation", "4.1. Installation Methods"),
    "en_handbook_apparmor_slides.pptx": ("14.4. Introduction to AppArmor", "14.4.1. Principles"),
}


@pytest.mark.parametrize("name", sorted(SHARED_FILES))
def test_each_shared_file_reads_with_its_title_and_sections(name: str, shared_dir: Path) -> None:
    doc = read_document(str(shared_dir / "formats" / name))
    title, section = SHARED_FILES[name]
    assert doc.status is DocStatus.INDEXED, doc.error
    assert doc.title == title
    assert doc.format == Path(name).suffix.lstrip(".")
    chunks = chunk_document(doc)
    assert any(section in c.section for c in chunks), {c.section for c in chunks}
    pages = {p.page: p for p in doc.pages}
    for chunk in chunks:  # exact offsets into the part's text, as for a PDF page
        assert pages[chunk.page].text[chunk.char_start:chunk.char_end] == chunk.text
    for page in doc.pages:  # blocks tile the part's text in order
        ends = [0] + [b.char_end for b in page.blocks]
        assert all(b.char_start >= e for b, e in zip(page.blocks, ends, strict=False))
        assert page.blocks[-1].char_end == len(page.text)


def test_the_folder_scan_and_the_readers_agree_on_suffixes() -> None:
    assert SUFFIXES == DOCUMENT_SUFFIXES


def test_a_docx_reads_headings_paragraphs_and_title(tmp_path: Path) -> None:
    path = docgen.docx(tmp_path / "a.docx", [("Heading1", "1. Scope"), ("", "The pump runs at 40 bar."),
                                              ("Heading2", "1.1 Limits"), ("", "Never above 60 bar.")],
                       title="Pump manual")
    doc = read_document(str(path))
    assert doc.title == "Pump manual" and doc.page_count == 2
    assert [p.label for p in doc.pages] == ["1", "1.1"]
    assert [b.kind for b in doc.pages[0].blocks] == [BlockKind.HEADING, BlockKind.PARAGRAPH]
    assert doc.pages[1].text == "1.1 Limits\nNever above 60 bar."


def test_text_encodings_are_detected() -> None:
    text = "第一章 自动升级\n\n每天运行 unattended-upgrade 一次。\n" * 20
    for encoding in ("utf-8", "utf-16", "gb18030"):
        decoded, _ = decode_text(text.encode(encoding))
        assert decoded == text, encoding


# --------------------------------------------------------------------------- hostile files


def test_hostile_files_each_end_in_a_status_within_the_time_limit(tmp_path: Path) -> None:
    good = docgen.docx(tmp_path / "good.docx", [("Heading1", "Intro"), ("", "Plain words here.")], title="Good")
    files = {
        "truncated.docx": (docgen.truncated(good, tmp_path / "truncated.docx"), DocStatus.UNREADABLE, "not a valid DOCX"),
        "bomb.docx": (docgen.zip_bomb(tmp_path / "bomb.docx", 1.0), DocStatus.UNREADABLE, "zip bomb"),
        "laughs.docx": (docgen.entity_bomb(tmp_path / "laughs.docx"), DocStatus.UNREADABLE, "not valid XML"),
        "locked.docx": (docgen.encrypted_docx(tmp_path / "locked.docx"), DocStatus.NEEDS_PASSWORD, "password"),
        "drm.epub": (docgen.epub(tmp_path / "drm.epub", [("One", "Text.")], "Locked", encrypt=True),
                     DocStatus.DRM_PROTECTED, "DRM"),
        "junk.md": (docgen.binary_junk(tmp_path / "junk.md"), DocStatus.UNREADABLE, "binary"),
        "long.md": (docgen.huge_paragraph(tmp_path / "long.md", 8), DocStatus.INDEXED, ""),
        "good.docx": (good, DocStatus.INDEXED, ""),
    }
    assert (tmp_path / "bomb.docx").stat().st_size < 8 * 2**20
    started = time.monotonic()
    results = {Path(d.path).name: d for d in parse_many([str(p) for p, _, _ in files.values()],
                                                         timeout_s=60, workers=2)}
    assert time.monotonic() - started < 120
    for name, (_, status, words) in files.items():
        doc = results[name]
        assert doc.status is status, (name, doc.status, doc.error)
        assert words in doc.error, (name, doc.error)
        assert "Traceback" not in doc.error
    laughs = results["laughs.docx"]
    assert not laughs.pages and "amplification" in laughs.error  # refused, never expanded
    long = results["long.md"]
    assert long.page_count > 8 * 2**20 // 12_000 // 2  # cut into parts the view can show
    assert max(len(p.text) for p in long.pages) <= 12_000


def test_an_external_entity_never_reaches_the_index(tmp_path: Path) -> None:
    from desktop_app.core.ingest.indexing import Indexer
    from desktop_app.core.library.store import Store

    secret = tmp_path / "secret.txt"
    secret.write_text("PASSWORD=hunter2-ZX81", encoding="utf-8")
    folder = tmp_path / "docs"
    folder.mkdir()
    docgen.external_entity(folder / "notes.docx", secret)
    store = Store(tmp_path / "lib.duckdb")
    try:
        summary = Indexer(store, None).run(folder, lambda _e: None)
        assert summary.documents == 1 and not summary.failed
        texts = [t for _, t in store.all_chunk_texts()]
        pages = [p.text for p in store.document_pages(store.documents()[0].doc_id)]
        assert any("after the entity" in t for t in texts)
        assert not any("hunter2" in t for t in texts + pages)
        assert store.documents()[0].title == "Quarterly notes"
    finally:
        store.close()
