"""An answers file written by the main of c04f1d6 (before answers had a type:
tests/core/library/data/answers_c04f1d6.sqlite, made with that commit's own
``answering._save`` and ``AnswerArchive``) opens, exports and continues as a conversation."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from desktop_app.core.library.answer_records import answers_path
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerStatus, Verdict
from desktop_app.services.knowledge_base import KnowledgeBase

SAVED = Path(__file__).resolve().parents[1] / "core" / "library" / "data" / "answers_c04f1d6.sqlite"


def test_answers_saved_by_c04f1d6_open_export_and_continue(tmp_path: Path) -> None:
    db = tmp_path / "lib.duckdb"
    shutil.copy(SAVED, answers_path(db))
    kb = KnowledgeBase(db, Settings(judge=False))

    async def run() -> None:
        try:
            history = await kb.answers.history()
            assert [h.answer_id for h in history] == ["c04answer2", "c04answer1"]
            assert {h.conversation_id for h in history} == {"c04answer1"}
            turns = await kb.answers.conversation("c04answer2")
            first, second = turns
            assert first.status == AnswerStatus.FINISHED and second.status == AnswerStatus.NO_BASIS
            assert first.text == "The server replies with status code 101 [1]."
            source = first.source("1")
            assert source is not None and source.page == 8 and source.read == ((0, 88),)
            assert first.claims[0].verdict is Verdict.SUPPORTED and first.cited_ids() == ["1"]
            assert second.asked == "Which status code does the client send in the WebSocket handshake?"

            markdown = await kb.answers.export_conversation("c04answer1")
            assert markdown is not None and "status code 101" in markdown and "And the client?" in markdown
            records = json.loads(await kb.answers.export_conversation("c04answer1", "json") or "[]")
            assert [r["question"] for r in records] == ["Which status code does the server reply with?",
                                                        "And the client?"]
            single = json.loads(await kb.answers.export_answer("c04answer1", "json") or "{}")
            assert single["answer"] == first.text and single["model_id"].startswith("qwen2.5")

            # A follow-up continues the old conversation with both earlier turns.
            conversation, scope = kb.answers.conversation_of("c04answer2", "Why?")
            assert conversation.conversation_id == "c04answer1" and scope == ()
            assert [q for q, _ in conversation.turns] == ["Which status code does the server reply with?",
                                                         "And the client?"]
        finally:
            await kb.close()

    asyncio.run(run())
