"""A citation into a DOCX, an EPUB and an HTML page opens the document view in the real
window: the real facade, the real ONNX embedder, real files of ../shared/formats, offscreen.
The highlighted characters are the cited passage's, and they are in view. With
FOLIO_SHOTS_DIR set, the window is saved there as a PNG per format."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from desktop_app.core.settings import Settings
from desktop_app.core.types import SourcePayload
from desktop_app.services.knowledge_base import KnowledgeBase
from desktop_app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.e2e

# file -> a question its passage answers
CITED = {
    "en_handbook_apparmor.docx": "Where are AppArmor profiles stored?",
    "en_debref_ch06_netapps.epub": "Which packages provide a mail transfer agent?",
    "en_debref_ch02_packages.html": "What does apt-pinning do with Pin-Priority?",
}


def _bare(text: str) -> str:
    """Without the block and table-cell separators the view does not draw as characters."""
    return re.sub(r"\s+|\|", "", text)


def test_a_citation_opens_the_document_view_highlighted_and_in_view(
    qtbot, qloop, tmp_path, shared_dir, real_embedder  # noqa: ANN001
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in CITED:
        shutil.copy(shared_dir / "formats" / name, folder / name)
    kb = KnowledgeBase(tmp_path / "lib.duckdb", Settings(answer_model="small"), embedder=real_embedder)
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.resize(1500, 900)
    window.show()
    qtbot.waitExposed(window)
    shots = os.environ.get("FOLIO_SHOTS_DIR")
    try:
        summary = qloop.run_until_complete(asyncio.wait_for(window.open_folder(str(folder)), 300))
        assert summary is not None and summary.documents == 3 and not summary.failed
        for name, question in CITED.items():
            path = str(folder / name)
            passages = qloop.run_until_complete(kb.library.search(question, 3, scope=[path]))
            passage = passages[0]
            assert passage.format == Path(name).suffix.lstrip(".") and "¶" in passage.locator
            source = SourcePayload(
                id="1", chunk_id=passage.chunk_id, doc_id=passage.doc_id, doc_path=passage.doc_path,
                doc_title=passage.doc_title, page=passage.page, page_label=passage.page_label,
                section=passage.section, text=passage.text, char_start=passage.char_start,
                char_end=passage.char_end, format=passage.format, locator=passage.locator,
            )
            highlighted = qloop.run_until_complete(asyncio.wait_for(window.show_citation(source, []), 30))
            viewer = window.viewer
            assert highlighted and viewer.reflowing, viewer.note
            view = viewer.document_view
            assert _bare(view.highlighted_text()) == _bare(passage.text)
            qtbot.wait(50)
            assert view.highlight_visible()
            assert viewer.page() == passage.page and viewer.page_count() > 0
            assert passage.doc_title in viewer.header.text()
            if shots:
                Path(shots).mkdir(parents=True, exist_ok=True)
                window.grab().save(str(Path(shots) / f"{Path(name).suffix.lstrip('.')}.png"))
        # A PDF citation afterwards goes back to the page viewer (and a part's neighbour loads).
        viewer.go_to(viewer.page() + 1 if viewer.page() < viewer.page_count() else viewer.page() - 1)
        qloop.run_until_complete(asyncio.sleep(0.3))
        assert viewer.document_view.part is not None and viewer.document_view.part.page != passage.page
    finally:
        window.close()
        qloop.run_until_complete(kb.close())
