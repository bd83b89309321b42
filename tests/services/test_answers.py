"""The answers area (services/answers.py) with fake models over generated PDFs: ask,
citations, no basis, the saved answer's sources as they change."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from desktop_app.core.types import (
    AnswerFinished,
    AnswerStarted,
    CitationFound,
    ClaimVerdict,
    NoBasis,
    SourceState,
    TokenDelta,
    Verdict,
)
from tests.fakes import FakeGenerator
from tests.pdfgen import write_pdf
from tests.services.facade import LEASE, close, collect, make_kb


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
