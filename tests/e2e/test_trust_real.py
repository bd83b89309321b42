"""Trust with the real small GGUF and the real ONNX embedder: an answer is saved, its PDF
changes and is re-indexed (the reopened answer says "changed"), then the PDF goes (it says
"removed"); `folio export` writes the audit record; the judge answers yes/no from the model
and from its DuckDB cache."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from desktop_app import cli
from desktop_app.core.library.store import Store
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFinished, AnswerStarted, ClaimVerdict, Verdict
from desktop_app.core.verdicts.judge import Judge, JudgedPassage
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.pdfgen import write_pdf

pytestmark = pytest.mark.e2e

LEASE = [
    ["Residential Lease Agreement", "Section 1 Parties", "This lease is made between the landlord and the tenant."],
    ["Section 4 Repairs", "The tenant must report damage to the landlord within 30 days of discovering it.",
     "The landlord pays for repairs caused by normal wear."],
    ["Section 5 Rent", "Rent is due on the first day of each month.", "A late fee of 50 dollars applies after 5 days."],
]
QUESTION = "How many days does the tenant have to report damage to the landlord?"


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


@pytest.fixture(scope="module")
def generator(small_model_path: Path) -> LlamaGenerator:
    return LlamaGenerator(small_model_path, context_tokens=2048, threads=1)


def test_saved_answer_goes_stale_then_removed_and_exports(
    tmp_path: Path, generator: LlamaGenerator, real_embedder: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    pdf = write_pdf(folder / "lease.pdf", LEASE, title="Residential Lease")
    db = tmp_path / "lib.duckdb"
    # The citation grammar and greedy sampling: the small model cites [1] (every marker it
    # can write names a source), so the judge and the audit's citations are always checked.
    settings = Settings(max_tokens=60, judge=True, use_grammar=True, temperature=0.0)
    kb = KnowledgeBase(db, settings, embedder=real_embedder, generator=generator)
    try:
        collect(kb.library.index(folder))
        events = collect(kb.answers.ask(QUESTION))
        started = next(e for e in events if isinstance(e, AnswerStarted))
        finished = next(e for e in events if isinstance(e, AnswerFinished))
        assert started.sources, "the question matches the lease: the model must be asked"
        assert started.sources[0].page == 2
        assert finished.citations and not finished.hallucinated, finished.text
        assert "30 days" in finished.text, finished.text
        # Judge verdicts come after the answer, about sentences the rule scorer was unsure of.
        judged = [e for e in events[events.index(finished) + 1 :] if isinstance(e, ClaimVerdict)]
        assert judged, "an answer with a partly supported cited sentence gets a judge verdict"
        assert all("judge" in event.reason for event in judged)
        record = asyncio.run(kb.answers.answer_record(finished.answer_id))
        assert record is not None and record.text == finished.text
        assert set(record.source_states.values()) == {"current"}
        assert record.model_id == generator.model_id

        changed = [list(page) for page in LEASE]
        changed[1][1] = "The tenant must report damage to the landlord within 60 days of discovering it."
        write_pdf(pdf, changed, title="Residential Lease")
        os.utime(pdf, (1, 1))
        collect(kb.library.index(folder))
        record = asyncio.run(kb.answers.answer_record(finished.answer_id))
        assert record is not None and set(record.source_states.values()) == {"changed"}
        docs = asyncio.run(kb.library.documents(folder))
        assert docs[0].version == 2

        pdf.unlink()
        collect(kb.library.index(folder))
        record = asyncio.run(kb.answers.answer_record(finished.answer_id))
        assert record is not None and set(record.source_states.values()) == {"removed"}
    finally:
        asyncio.run(kb.close())

    assert cli.main(["export", finished.answer_id, "--format", "json", "--db", str(db)]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert audit["question"] == QUESTION and audit["answer"] == finished.text
    assert audit["model_id"] == generator.model_id
    assert {s["state"] for s in audit["sources"]} == {"removed"}
    assert all(s["version"] == 1 and len(s["sha256"]) == 64 for s in audit["sources"])
    for citation in audit["citations"]:
        assert [finished.text[a:b] for a, b in citation["spans"]][0].startswith(("[", "【", "［"))
        assert citation["chunk_id"].startswith(citation["document"]["sha256"][:16])
    assert audit["citations"], "the answer cites: its audit record lists the citations"
    assert cli.main(["export", finished.answer_id[:12], "--format", "md", "--db", str(db)]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith(f"# {QUESTION}\n")
    assert "[^1]: Residential Lease" in markdown and "source removed" in markdown


def test_the_judge_answers_from_the_model_then_from_the_cache(tmp_path: Path, generator: LlamaGenerator) -> None:
    store = Store(tmp_path / "lib.duckdb")
    try:
        passage = JudgedPassage("0123456789abcdef:2:0", " ".join(LEASE[1]))
        # Cited, partly worded like the passage (the rule scorer's "partial"), but not in it.
        sentence = "The landlord must paint the house every year [1]."
        verdict = ClaimVerdict((0, len(sentence)), Verdict.NOT_CONFIRMED, ("1",), 0.4, support_id="1", reason="40%")
        first = Judge(generator, store)
        updates = first.review(sentence, [verdict], {"1": passage})
        assert first.model_calls == 1 and len(updates) == 1
        assert updates[0].verdict is Verdict.NOT_CONFIRMED
        assert "judge" in updates[0].reason
        again = Judge(generator, store)
        assert again.review(sentence, [verdict], {"1": passage}) == updates
        assert again.model_calls == 0 and again.cache_hits == 1
    finally:
        store.close()
