"""The library area (services/library.py) with fake models over generated PDFs: index,
search, scope, moved files, OCR lines."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.types import AnswerStarted, FileIndexed, IndexSummary
from tests.fakes import FakeGenerator
from tests.services.facade import close, collect, make_kb


def test_index_reports_files_and_summary_then_second_run_is_unchanged(folder: Path, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    events = collect(kb.library.index(folder))
    files = [e for e in events if isinstance(e, FileIndexed)]
    summary = events[-1]
    assert isinstance(summary, IndexSummary)
    assert sorted(Path(f.path).name for f in files) == ["lease.pdf", "pump.pdf"]
    assert all(f.status == "indexed" and not f.unchanged for f in files)
    assert summary.documents == 2 and summary.pages == 4 and summary.chunks >= 4
    ids_first = kb.parts.store.chunk_ids()
    embedded = kb.parts._embedder.embedded  # type: ignore[union-attr]

    again = collect(kb.library.index(folder))
    assert [e.unchanged for e in again if isinstance(e, FileIndexed)] == [True, True]
    assert kb.parts._embedder.embedded == embedded  # type: ignore[union-attr]  # nothing re-embedded
    assert kb.parts.store.chunk_ids() == ids_first
    close(kb)


def test_search_finds_the_page_that_says_it(folder: Path, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    collect(kb.library.index(folder))

    async def run() -> list[Any]:
        return await kb.library.search("how long to report damage", 3)

    results = asyncio.run(run())
    assert Path(results[0].doc_path).name == "lease.pdf" and results[0].page == 2
    assert "30 days" in results[0].text
    close(kb)


def test_search_uses_the_users_own_glossary(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A glossary.toml in the config folder teaches search that "MTBF" means the
    maintenance interval the manual gives in operating hours."""
    from desktop_app.core import paths

    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setattr(paths, "config_dir", lambda: config)
    question = "What is the MTBF?"
    plain = make_kb(tmp_path / "a")
    assert plain.parts.retriever.glossary.expand(question) == ""
    close(plain)

    (config / "glossary.toml").write_text('[[entry]]\nask = "mtbf"\nfind = "impeller seal operating hours"\n')
    kb = make_kb(tmp_path / "b")
    collect(kb.library.index(folder))
    assert kb.parts.retriever.glossary.expand(question) == "impeller seal operating hours"
    found = asyncio.run(kb.library.search(question, 1))
    assert Path(found[0].doc_path).name == "pump.pdf" and "impeller seal" in found[0].text
    close(kb)


def test_moved_file_keeps_its_chunks(folder: Path, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    collect(kb.library.index(folder))
    before = kb.parts.store.chunk_ids()
    embedded = kb.parts._embedder.embedded  # type: ignore[union-attr]
    sub = folder / "moved"
    sub.mkdir()
    shutil.move(folder / "pump.pdf", sub / "pump-renamed.pdf")
    events = collect(kb.library.index(folder))
    moved = next(e for e in events if isinstance(e, FileIndexed) and e.path.endswith("pump-renamed.pdf"))
    assert moved.unchanged and moved.status == "indexed"
    assert kb.parts.store.chunk_ids() == before
    assert kb.parts._embedder.embedded == embedded  # type: ignore[union-attr]
    close(kb)


def test_search_and_ask_within_a_file_or_folder(folder: Path, tmp_path: Path) -> None:
    """Relative or ~ paths are resolved; a path that holds no indexed document is a
    KnownError for search and a failed answer for ask, named in words."""
    from desktop_app.core.errors import KnownError
    from desktop_app.core.types import AnswerFailed

    kb = make_kb(tmp_path, FakeGenerator(["Replace it every 2000 hours [1]."]))
    collect(kb.library.index(folder))
    pump = folder / "pump.pdf"
    found = asyncio.run(kb.library.search("how long to report damage", 3, scope=[pump]))
    assert found and {Path(p.doc_path).name for p in found} == {"pump.pdf"}
    assert {Path(p.doc_path).name for p in asyncio.run(kb.library.search("report damage", 3, scope=[folder]))} >= {"lease.pdf"}
    events = collect(kb.answers.ask("How long to report damage to the landlord?", scope=[str(pump)]))
    started = next(e for e in events if isinstance(e, AnswerStarted))
    assert started.scope == (str(pump),) and all(Path(s.doc_path).name == "pump.pdf" for s in started.sources)
    assert asyncio.run(kb.answers.history())[0].scope == (str(pump),)
    with pytest.raises(KnownError, match="holds no document of the library"):
        asyncio.run(kb.library.search("damage", 3, scope=[tmp_path / "elsewhere"]))
    failed = collect(kb.answers.ask("damage?", scope=[tmp_path / "elsewhere"]))
    assert isinstance(failed[0], AnswerFailed) and failed[0].known
    close(kb)


def test_ocr_lines_of_a_cited_span_come_boxed_as_the_viewer_draws_them(tmp_path: Path) -> None:
    from desktop_app.core.ingest import chunking
    from desktop_app.core.ingest.ocr import RENDER_DPI, RecognisedLine, page_from_lines
    from desktop_app.core.text import words as termlib
    from desktop_app.core.types import DocStatus, ExtractedDocument, PageQuality, PageText

    scale = RENDER_DPI / 72.0
    lines = [RecognisedLine("Inspection of the impeller housing", 0.96, (100, 200, 700, 240)),
             RecognisedLine("the seal is replaced every year", 0.94, (100, 260, 640, 300))]
    scanned = PageText(1, "1", 595.0, 842.0, 90, "", PageQuality.EMPTY)  # shown landscape
    page = page_from_lines(scanned, lines, scale)
    doc = ExtractedDocument(path=str(tmp_path / "scan.pdf"), doc_id="e" * 64, size=1, mtime=1.0,
                            title="Scan", status=DocStatus.INDEXED, page_count=1, pages=(page,))
    kb = make_kb(tmp_path)
    try:
        chunks = chunking.chunk_document(doc, max_tokens=200)
        kb.parts.store.write_document(doc, chunks, [dict(termlib.term_counts(c.text)) for c in chunks],
                                None, "", 1)
        start = page.text.index("seal")
        found = asyncio.run(kb.library.ocr_lines(doc.doc_id, 1, start, start + 4))
        assert len(found) == 1 and found[0].char_start == page.text.index("the seal")
        box = (found[0].left, found[0].top, found[0].right, found[0].bottom)
        assert box == pytest.approx((100 / scale, 260 / scale, 640 / scale, 300 / scale))
        assert asyncio.run(kb.library.ocr_lines(doc.doc_id, 2, 0, 10)) == []  # no such page
    finally:
        close(kb)
