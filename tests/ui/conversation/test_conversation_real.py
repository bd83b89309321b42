"""A conversation in the real window offscreen with the real thing: corpus PDFs, the real
ONNX embedder, the real small GGUF and the real facade. A follow-up is searched together
with the question before it, "Searched for" is edited and searched again, and "New
conversation" starts afresh."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from desktop_app.core.settings import Settings
from desktop_app.services.knowledge_base import KnowledgeBase
from desktop_app.ui.conversation.answer_turn import TurnState
from desktop_app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.e2e

DOCS = ("en_wiki_pdfjs_article.pdf", "zh_standard_anhui_landuse_p173.pdf")


def test_a_conversation_with_searched_for_edited(qtbot, qloop, tmp_path, shared_dir, real_embedder) -> None:  # noqa: ANN001
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    kb = KnowledgeBase(tmp_path / "lib.duckdb", Settings(answer_model="small", max_tokens=40), embedder=real_embedder)
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)

    def run(task):  # noqa: ANN001, ANN202
        assert task is not None
        return qloop.run_until_complete(asyncio.wait_for(task, 300))

    try:
        summary = run(window.open_folder(str(folder)))
        assert summary is not None and summary.documents == 2
        first = run(window.ask("What is PDF.js?"))
        assert first.state is not TurnState.FAILED and first.searched == "What is PDF.js?"
        second = run(window.ask("Who was its original author?"))
        assert second.conversation_id == first.answer_id
        assert "PDF.js" in second.searched and second.searched != second.question
        assert any(Path(s.doc_path).name == "en_wiki_pdfjs_article.pdf" for s in second.sources)
        text = window.conversation.browser.toPlainText()
        assert f"Searched for: {second.searched} · edit" in text

        # The person corrects what the follow-up was searched for.
        window.conversation.edit_searched(1)
        editor = window.conversation.searched_editor
        assert editor.isVisible() and editor.edit.text() == second.searched
        editor.edit.setText("original author of PDF.js Andreas Gal")
        editor.search_button.click()
        again = run(window.ask_task)
        assert again.searched == "original author of PDF.js Andreas Gal"
        assert again.question == "Who was its original author?" and again.conversation_id == first.answer_id
        assert len(window.conversation.turns) == 2  # the edited turn was replaced
        saved = qloop.run_until_complete(kb.answers.conversation(again.answer_id))
        assert [r.answer_id for r in saved] == [first.answer_id, again.answer_id]  # the edited one replaced
        assert saved[-1].searched == "original author of PDF.js Andreas Gal"

        # A new conversation: the next question follows up nothing.
        assert window.new_conversation()
        alone = run(window.ask("那六车道的呢？"))
        assert alone.searched == "那六车道的呢？" and alone.conversation_id == alone.answer_id
    finally:
        window.close()
        qloop.run_until_complete(kb.close())
