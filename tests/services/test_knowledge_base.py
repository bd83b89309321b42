"""The facade with fake models over generated PDFs: index, search, ask, cancel, history."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.settings import Settings
from desktop_app.core.types import (
    AnswerCancelled,
    AnswerFinished,
    AnswerStarted,
    CitationFound,
    ClaimVerdict,
    FileIndexed,
    IndexSummary,
    NoBasis,
    SourceState,
    TokenDelta,
    Verdict,
)
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.fakes import FakeEmbedder, FakeGenerator
from tests.pdfgen import write_pdf

LEASE = [
    ["Residential Lease Agreement", "Section 1 Parties", "This lease is made between the landlord and the tenant."],
    ["Section 4 Repairs", "The tenant must report damage to the landlord within 30 days of discovering it.",
     "The landlord pays for repairs caused by normal wear."],
    ["Section 5 Rent", "Rent is due on the first day of each month.", "A late fee of 50 dollars applies after 5 days."],
]
MANUAL = [
    ["Pump Manual", "Chapter 2 Maintenance", "Replace the impeller seal every 2000 operating hours.",
     "Lubricate the bearings with lithium grease every 500 hours."],
]


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "lease.pdf", LEASE, title="Residential Lease")
    write_pdf(docs / "pump.pdf", MANUAL, title="Pump Manual")
    return docs


def make_kb(tmp_path: Path, generator: FakeGenerator | None = None, **settings: Any) -> KnowledgeBase:
    return KnowledgeBase(
        tmp_path / "lib.duckdb", Settings(**settings), embedder=FakeEmbedder(),
        generator=generator or FakeGenerator(),
    )


def close(kb: KnowledgeBase) -> None:
    asyncio.run(kb.close())


def test_index_reports_files_and_summary_then_second_run_is_unchanged(folder: Path, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    events = collect(kb.library.index(folder))
    files = [e for e in events if isinstance(e, FileIndexed)]
    summary = events[-1]
    assert isinstance(summary, IndexSummary)
    assert sorted(Path(f.path).name for f in files) == ["lease.pdf", "pump.pdf"]
    assert all(f.status == "indexed" and not f.unchanged for f in files)
    assert summary.documents == 2 and summary.pages == 4 and summary.chunks >= 4
    ids_first = kb.store.chunk_ids()
    embedded = kb._embedder.embedded  # type: ignore[union-attr]

    again = collect(kb.library.index(folder))
    assert [e.unchanged for e in again if isinstance(e, FileIndexed)] == [True, True]
    assert kb._embedder.embedded == embedded  # type: ignore[union-attr]  # nothing re-embedded
    assert kb.store.chunk_ids() == ids_first
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
    assert plain.retriever.glossary.expand(question) == ""
    close(plain)

    (config / "glossary.toml").write_text('[[entry]]\nask = "mtbf"\nfind = "impeller seal operating hours"\n')
    kb = make_kb(tmp_path / "b")
    collect(kb.library.index(folder))
    assert kb.retriever.glossary.expand(question) == "impeller seal operating hours"
    found = asyncio.run(kb.library.search(question, 1))
    assert Path(found[0].doc_path).name == "pump.pdf" and "impeller seal" in found[0].text
    close(kb)


def test_ask_streams_citations_that_resolve_and_catches_hallucinated(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Damage must be reported within 30 days [1]. Rent is monthly [9]."])
    kb = make_kb(tmp_path, gen, sources_per_answer=3)
    collect(kb.library.index(folder))
    events = collect(kb.answers.ask("How long does the tenant have to report damage?"))
    started = events[0]
    assert isinstance(started, AnswerStarted) and started.sources
    assert started.sources[0].page == 2
    text = "".join(e.text for e in events if isinstance(e, TokenDelta))
    citations = [e for e in events if isinstance(e, CitationFound)]
    valid = [c for c in citations if c.valid]
    assert valid and valid[0].id == "1" and valid[0].source is not None
    assert text[valid[0].span[0] : valid[0].span[1]] == "[1]"
    bad = [c for c in citations if not c.valid]
    assert [c.id for c in bad] == ["9"] and bad[0].source is None
    # The first citation arrives before the answer ends (it is clickable while streaming).
    first_cite = events.index(valid[0])
    finished = next(e for e in events if isinstance(e, AnswerFinished))
    assert first_cite < events.index(finished)
    assert finished.hallucinated == ("9",)
    claims = [e for e in events if isinstance(e, ClaimVerdict)]
    assert claims and claims[0].verdict == Verdict.SUPPORTED
    # The prompt listed the sources with their labels and pages.
    prompt = gen.prompts[0][-1]["content"]
    assert "[1] (Residential Lease" in prompt and "p. 2" in prompt
    history = asyncio.run(kb.answers.history())
    assert history[0].answer_id == finished.answer_id
    close(kb)


def test_question_without_basis_gets_no_model_call(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["should not be used [1]."])
    kb = make_kb(tmp_path, gen)
    collect(kb.library.index(folder))
    events = collect(kb.answers.ask("What is the boiling point of mercury on Jupiter?"))
    assert any(isinstance(e, NoBasis) for e in events)
    assert not any(isinstance(e, CitationFound) for e in events)
    assert gen.prompts == []
    close(kb)


def test_cancel_mid_stream_stops_the_answer(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Rent is due on the first day of each month [1]. " * 40], delta=2, pause=0.01)
    kb = make_kb(tmp_path, gen)
    collect(kb.library.index(folder))

    async def run() -> list[Any]:
        seen: list[Any] = []
        async for event in kb.answers.ask("When is rent due?"):
            seen.append(event)
            if sum(isinstance(e, TokenDelta) for e in seen) == 5:
                kb.cancel()
        return seen

    events = asyncio.run(run())
    assert isinstance(events[-1], AnswerCancelled)
    assert sum(isinstance(e, TokenDelta) for e in events) < 30
    close(kb)


def test_changed_and_removed_sources_are_flagged(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Damage must be reported within 30 days [1]."])
    kb = make_kb(tmp_path, gen)
    collect(kb.library.index(folder))
    events = collect(kb.answers.ask("How long does the tenant have to report damage?"))
    cited = next(e for e in events if isinstance(e, CitationFound) and e.source)
    source = cited.source
    assert source is not None
    assert asyncio.run(kb.library.source_state(source.chunk_id, source.doc_id)) == SourceState.CURRENT

    changed = [list(p) for p in LEASE]
    changed[1][1] = "The tenant must report damage to the landlord within 60 days of discovering it."
    write_pdf(folder / "lease.pdf", changed, title="Residential Lease")
    os.utime(folder / "lease.pdf", (1, 1))
    collect(kb.library.index(folder))
    assert asyncio.run(kb.library.source_state(source.chunk_id, source.doc_id)) == SourceState.CHANGED
    docs = asyncio.run(kb.library.documents(folder))
    assert next(d for d in docs if d.path.endswith("lease.pdf")).version == 2

    (folder / "lease.pdf").unlink()
    collect(kb.library.index(folder))
    assert asyncio.run(kb.library.source_state(source.chunk_id, source.doc_id)) == SourceState.REMOVED
    record = asyncio.run(kb.answers.answer_record(next(e for e in events if isinstance(e, AnswerFinished)).answer_id))
    assert record is not None and record.source_states["1"] == "removed"
    states = {s.doc_path.rsplit("/", 1)[-1]: record.state(s.id) for s in record.sources}
    assert states.get("pump.pdf", "current") == "current" and states["lease.pdf"] == "removed"
    close(kb)


def test_moved_file_keeps_its_chunks(folder: Path, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    collect(kb.library.index(folder))
    before = kb.store.chunk_ids()
    embedded = kb._embedder.embedded  # type: ignore[union-attr]
    sub = folder / "moved"
    sub.mkdir()
    shutil.move(folder / "pump.pdf", sub / "pump-renamed.pdf")
    events = collect(kb.library.index(folder))
    moved = next(e for e in events if isinstance(e, FileIndexed) and e.path.endswith("pump-renamed.pdf"))
    assert moved.unchanged and moved.status == "indexed"
    assert kb.store.chunk_ids() == before
    assert kb._embedder.embedded == embedded  # type: ignore[union-attr]
    close(kb)


def test_warm_up_primes_the_answer_model_with_the_head_every_question_shares(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Damage must be reported within 30 days [1]."])
    kb = make_kb(tmp_path, gen)
    kb.models.warm_up()
    assert kb.models.prime_answer_model().result(timeout=30) > 0
    collect(kb.library.index(folder))
    collect(kb.answers.ask("How long does the tenant have to report damage?"))
    asked = gen.prompts[-1]
    # One head per prompt language, English first; the system prompt and the worked example
    # are the same messages in the English head and the English question's prompt.
    english = gen.primes[0]
    assert english[0]["content"].startswith("You are Folio")
    deadline = time.monotonic() + 30
    while {p[0]["content"][:6] for p in gen.primes} != {"You ar", "你是 Fol", "Du bis"}:
        assert time.monotonic() < deadline, "the Chinese and German heads were not primed"
        time.sleep(0.05)
    assert english[:-1] == asked[:-1] and len(asked) >= 3
    assert "30 days" in asked[-1]["content"] and "30 days" not in english[-1]["content"]
    close(kb)


def test_no_priming_for_short_ids_whose_head_changes_with_every_question(tmp_path: Path) -> None:
    gen = FakeGenerator()
    kb = make_kb(tmp_path, gen, citation_style="shortid")
    assert kb.models.prime_answer_model().result(timeout=30) == 0
    assert not hasattr(gen, "primed")
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
        kb.store.write_document(doc, chunks, [dict(termlib.term_counts(c.text)) for c in chunks],
                                None, "", 1)
        start = page.text.index("seal")
        found = asyncio.run(kb.library.ocr_lines(doc.doc_id, 1, start, start + 4))
        assert len(found) == 1 and found[0].char_start == page.text.index("the seal")
        box = (found[0].left, found[0].top, found[0].right, found[0].bottom)
        assert box == pytest.approx((100 / scale, 260 / scale, 640 / scale, 300 / scale))
        assert asyncio.run(kb.library.ocr_lines(doc.doc_id, 2, 0, 10)) == []  # no such page
    finally:
        close(kb)


def test_a_kept_model_is_primed_with_the_questions_own_head_before_it_answers(folder: Path, tmp_path: Path) -> None:
    gen = FakeGenerator(["Damage must be reported within 30 days [1]."])
    kb = KnowledgeBase(tmp_path / "lib.duckdb", Settings(), embedder=FakeEmbedder(), generator=gen,
                       keep_model_s=60.0)
    collect(kb.library.index(folder))
    collect(kb.answers.ask("How long does the tenant have to report damage?"))
    # Only the question's language, once, before the prompt that shares its head is read.
    assert len(gen.primes) == 1 and gen.primes[0][0]["content"].startswith("You are Folio")
    assert gen.primes[0][:-1] == gen.prompts[-1][:-1]
    close(kb)
    plain = make_kb(tmp_path / "plain", FakeGenerator(["Damage must be reported within 30 days [1]."]))
    collect(plain.library.index(folder))
    collect(plain.answers.ask("How long does the tenant have to report damage?"))
    assert not hasattr(plain.models._generator, "primes")  # the window primes at start, not per question
    close(plain)
