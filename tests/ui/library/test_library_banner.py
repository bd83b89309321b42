"""A library that cannot be used, in the real window with the real facade and embedder:
a damaged file shows the banner with Move aside and rebuild, one click rebuilds it from the
real PDFs with the answers kept; a library another process holds names it, and offers no
rebuild."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop_app.core.settings import Settings
from desktop_app.services.knowledge_base import KnowledgeBase
from desktop_app.ui.window.main_window import MainWindow

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[3]
DOCS = ("en_gov_dmca_summary.pdf", "en_gov_senate_expenditures.pdf")
HOLDER = """
import sys, time
from desktop_app.core.library.store import Store
store = Store(sys.argv[1])
print("held", flush=True)
time.sleep(120)
"""


def test_a_damaged_library_is_rebuilt_in_one_click_with_its_answers(
    qtbot, qloop, tmp_path, shared_dir, real_embedder  # noqa: ANN001
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder / name)
    db = tmp_path / "library.duckdb"
    kb = KnowledgeBase(db, Settings(answer_model="small"), embedder=real_embedder)
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        summary = qloop.run_until_complete(asyncio.wait_for(window.open_folder(str(folder)), 300))
        assert summary is not None and summary.documents == 2
        kb.parts.archive.save_answer("kept-answer", "What is Section 512?", "A safe harbor [1].", "label", "m",
                               "finished", {"sources": []})
    finally:
        window.close()
        qloop.run_until_complete(kb.close())
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])  # a copy that stopped a third of the way

    kb = KnowledgeBase(db, Settings(answer_model="small"), embedder=real_embedder)
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        window.library.add_folder(str(folder))
        qloop.run_until_complete(asyncio.wait_for(window.check_library(), 60))  # reads it whole
        banner = window.library_banner
        assert banner.isVisible() and banner.repair_button.isVisible()
        assert "cannot be read" in banner.title.text() and "damaged" in banner.details.text()
        qtbot.mouseClick(banner.repair_button, Qt.MouseButton.LeftButton)
        assert window.index_task is not None
        qloop.run_until_complete(asyncio.wait_for(window.index_task, 300))
        assert not banner.isVisible()
        assert "rebuilt" in window.status_label.text()
        moved = [p.name for p in tmp_path.iterdir() if p.name.startswith("library.duckdb.damaged-")]
        assert len(moved) == 1  # kept, not deleted
        results = qloop.run_until_complete(kb.library.search("Online Copyright Infringement Liability Limitation", 3))
        assert any(Path(r.doc_path).name == "en_gov_dmca_summary.pdf" for r in results)
        history = qloop.run_until_complete(kb.answers.history())
        assert [h.answer_id for h in history] == ["kept-answer"]
        assert {Path(r.path).name for r in window.library.rows()} == set(DOCS)
    finally:
        window.close()
        qloop.run_until_complete(kb.close())


def test_a_library_held_by_another_process_names_it_and_offers_no_rebuild(
    qtbot, qloop, tmp_path  # noqa: ANN001
) -> None:
    db = tmp_path / "library.duckdb"
    KnowledgeBase(db, Settings())  # nothing opened yet
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=REPO) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            kb = KnowledgeBase(db, Settings())
            window = MainWindow(kb, remember_layout=False)
            qtbot.addWidget(window)
            window.show()
            qloop.run_until_complete(asyncio.wait_for(window.check_library(), 60))
            banner = window.library_banner
            assert banner.isVisible() and not banner.repair_button.isVisible()
            assert f"process {holder.pid}" in banner.details.text()
            assert "in use by another program" in banner.title.text()
            window.close()
            qloop.run_until_complete(kb.close())
        finally:
            holder.kill()
