"""The facade with the real small GGUF in its worker process: a worker killed mid-answer
ends that answer with a message, keeps what was written (with its citations) in the
history, and the next question is answered by a fresh worker."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

import pytest

from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFailed, AnswerFinished, TokenDelta
from desktop_app.services.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.e2e

QUESTION = "Who launched the PDF.js project, and in which year?"


def test_a_worker_killed_mid_answer_fails_that_answer_only(
    tmp_path: Path, shared_dir: Path, small_model_path: Path, embedder_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FOLIO_MODELS_DIR", str(small_model_path.parent))
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(shared_dir / "corpus" / "en_wiki_pdfjs_article.pdf", folder)
    settings = Settings(answer_model="small", max_tokens=80, temperature=0.0, judge=False)

    async def scenario() -> None:
        kb = KnowledgeBase(db_path=tmp_path / "folio.duckdb", settings=settings)
        try:
            async for _ in kb.library.index(folder):
                pass
            events = []
            tokens = 0
            async for event in kb.answers.ask(QUESTION):
                events.append(event)
                if isinstance(event, TokenDelta):
                    tokens += 1
                    if tokens == 3:
                        os.kill(kb.models._generator.pid, signal.SIGKILL)
            failed = events[-1]
            assert isinstance(failed, AnswerFailed), events[-3:]
            assert failed.known and "SIGKILL" in failed.error and "memory" in failed.error
            written = "".join(e.text for e in events if isinstance(e, TokenDelta))
            assert written.strip()
            saved = (await kb.answers.history())[0]
            assert saved.status == "failed"
            record = await kb.answers.answer_record(saved.answer_id)
            assert record is not None and record.text == written  # the partial answer stays

            again = [e async for e in kb.answers.ask(QUESTION)]
            assert isinstance(again[-1], AnswerFinished) or any(isinstance(e, AnswerFinished) for e in again)
            assert "".join(e.text for e in again if isinstance(e, TokenDelta)).strip()
        finally:
            await kb.close()

    asyncio.run(scenario())
