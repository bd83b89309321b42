"""The library pane and asking within a document with the real thing: real corpus PDFs,
the real ONNX embedder and the real facade, in a real window offscreen."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop_app.core.settings import Settings
from desktop_app.services.knowledge_base import KnowledgeBase
from desktop_app.ui.conversation.answer_turn import TurnState
from desktop_app.ui.library.tree_model import DETAIL_ROLE
from desktop_app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.e2e

# Metadata titles "10811.exe" and "Binder1.pdf"; "PDF.js - Wikipedia" is a good one.
DOCS = ("en_gov_scotus_transcript_p1.pdf", "en_hist_siege_of_vicksburg_ocr.pdf", "en_wiki_pdfjs_article.pdf")


def test_the_window_lists_readable_titles_and_asks_within_a_document(
    qtbot, qloop, tmp_path, shared_dir, real_embedder  # noqa: ANN001
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    kb = KnowledgeBase(tmp_path / "lib.duckdb", Settings(answer_model="small"), embedder=real_embedder)
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        summary = qloop.run_until_complete(asyncio.wait_for(window.open_folder(str(folder)), 300))
        assert summary is not None and summary.documents == 3 and not summary.failed
        titles = {Path(r.path).name: r.title for r in window.library.rows()}
        assert titles == {
            "en_gov_scotus_transcript_p1.pdf": "en_gov_scotus_transcript_p1",
            "en_hist_siege_of_vicksburg_ocr.pdf": "en_hist_siege_of_vicksburg_ocr",
            "en_wiki_pdfjs_article.pdf": "PDF.js - Wikipedia",
        }
        pdfjs = str(folder / "en_wiki_pdfjs_article.pdf")
        index = window.library_pane.index_of(pdfjs)
        assert index.data(Qt.ItemDataRole.DisplayRole) == "PDF.js - Wikipedia"
        assert index.data(DETAIL_ROLE) == "en_wiki_pdfjs_article.pdf · 1 page · indexed"
        assert pdfjs in index.data(Qt.ItemDataRole.ToolTipRole)

        # Asked within the Vicksburg diary, a question only the PDF.js article answers.
        vicksburg = str(folder / "en_hist_siege_of_vicksburg_ocr.pdf")
        menu = window.library_pane.menu_for(window.library_pane.index_of(vicksburg))
        menu.actions()[0].trigger()
        assert window.conversation.scope_chip.isVisible()
        turn = qloop.run_until_complete(asyncio.wait_for(
            window.ask("Who launched the PDF.js project, and in which year?"), 120))
        assert turn.state is not TurnState.FAILED and turn.no_basis and turn.sources == []
        assert turn.scope == (vicksburg,)
        assert "Asked within en_hist_siege_of_vicksburg_ocr.pdf" in turn.no_basis
        assert "Asked within: en_hist_siege_of_vicksburg_ocr" in window.conversation.html()
    finally:
        window.close()
        qloop.run_until_complete(kb.close())
