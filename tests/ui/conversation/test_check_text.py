"""File ▸ Check a Text… offscreen with the real facade and the real ONNX embedder over
generated PDFs: the text shows with the answers' underlines, each supported sentence has a
chip, and clicking it opens the supporting page with the passage highlighted."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QUrl

from desktop_app.core.settings import Settings
from desktop_app.core.types import Verdict
from desktop_app.services.knowledge_base import KnowledgeBase
from desktop_app.ui.conversation.answer_turn import TurnState
from desktop_app.ui.conversation.check_dialog import CheckTextDialog
from desktop_app.ui.qt.palette import Colours
from desktop_app.ui.window.main_window import MainWindow
from tests.ui.conftest import until
from tests.ui.pdfs import make_library
from tests.ui.window.test_window_flow import glyph_boxes

DRAFT = """# Notes on the pump

The warranty period for the pump is **thirty days** from delivery.

- The pump needs a 230 volt supply with an earth connection.
- Penguins repair the pump every Tuesday in Antarctica.
"""


def test_check_a_text_underlines_sentences_and_opens_their_pages(qtbot, qloop, tmp_path, real_embedder) -> None:  # noqa: ANN001
    library = make_library(tmp_path / "docs")
    kb = KnowledgeBase(tmp_path / "lib.duckdb", Settings(answer_model="small", judge=False), embedder=real_embedder)
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)

    def run(coro, timeout: float = 120):  # noqa: ANN001, ANN202
        return qloop.run_until_complete(asyncio.wait_for(coro, timeout))

    try:
        summary = run(window.open_folder(str(library["manual"].path.parent)))
        assert summary is not None and summary.documents == 3

        # File ▸ Check a Text… opens the dialog; a file loads into it; Check runs the check.
        action = window.commands.check_text_action
        assert action is not None and action in window.menuBar().actions()[0].menu().actions()
        action.trigger()
        dialog = next(w for w in window.findChildren(CheckTextDialog) if w.isVisible())
        assert not dialog.check_button.isEnabled()
        draft = tmp_path / "notes.md"
        draft.write_text(DRAFT, encoding="utf-8")
        assert dialog.load_file(str(draft)) and dialog.check_button.isEnabled()
        dialog.check_button.click()
        assert window.ask_task is not None
        turn = run(window.ask_task)

        assert turn.question == "Check: Notes on the pump"
        assert turn.text.startswith("Notes on the pump\n\nThe warranty period for the pump is thirty days")
        by_sentence = {turn.text[v.sentence_span[0]:v.sentence_span[1]]: v for v in turn.verdicts}
        warranty = by_sentence["The warranty period for the pump is thirty days from delivery."]
        volts = by_sentence["The pump needs a 230 volt supply with an earth connection."]
        penguins = by_sentence["Penguins repair the pump every Tuesday in Antarctica."]
        assert by_sentence["Notes on the pump"].verdict is Verdict.NOT_FACTUAL
        assert warranty.verdict is Verdict.SUPPORTED and volts.verdict is Verdict.SUPPORTED
        assert penguins.verdict is not Verdict.SUPPORTED
        assert turn.source(warranty.ids[0]).doc_path == str(library["manual"].path)
        assert turn.source(volts.ids[0]).doc_path == str(library["guide"].path)
        assert "Checked 4 sentences" in window.status_label.text()

        # The same underlines and chips as an answer.
        html = window.conversation.html()
        assert html.count(Colours().supported) >= 2  # two green underlines
        assert f'href="cite:{warranty.ids[0]}?turn=0"' in html and f'href="cite:{volts.ids[0]}?turn=0"' in html

        window.conversation.handle_anchor(QUrl(f"cite:{volts.ids[0]}?turn=0"))
        run(until(lambda: window.viewer.path == str(library["guide"].path) and window.viewer.view.has_highlight(),
                  what="the guide's page highlighted"))
        assert window.viewer.page() == 2
        highlight = window.viewer.view.highlight_rects()
        assert all(any(h.intersects(b) for h in highlight) for b in glyph_boxes(window, "230 volt"))

        window.conversation.handle_anchor(QUrl(f"cite:{warranty.ids[0]}?turn=0"))
        run(until(lambda: window.viewer.path == str(library["manual"].path) and window.viewer.view.has_highlight(),
                  what="the manual's page highlighted"))
        assert window.viewer.page() == 2
        # The sentence that supports it is highlighted strongly, the rest of the passage not.
        support = window.viewer.view.support_rects()
        assert all(any(h.intersects(b) for h in support) for b in glyph_boxes(window, "thirty days"))
        assert not any(h.intersects(b) for h in support for b in glyph_boxes(window, "Unrelated opening"))

        # Stop (Esc) ends a long check; what was checked stays, underlined.
        long_text = "\n\n".join(f"The pump needs a 230 volt supply, check number {n}." for n in range(400))
        task = window.check_text_content(long_text, "long.txt")
        assert task is not None and window.commands.stop_action.isEnabled()
        checking = window.conversation.current_turn()
        run(until(lambda: len(checking.verdicts) >= 2, timeout=60, what="the first verdicts"))
        window.stop()
        stopped = run(task)
        assert stopped.state is TurnState.CANCELLED and 2 <= len(stopped.verdicts) < 400
        assert window.status_label.text().startswith("Stopped after")
        assert not window.commands.stop_action.isEnabled()
    finally:
        window.close()
        qloop.run_until_complete(kb.close())


def test_a_pasted_text_is_checked_and_an_unreadable_file_is_refused(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    dialog = CheckTextDialog()
    qtbot.addWidget(dialog)
    requested: list[tuple[str, str]] = []
    dialog.check_requested.connect(lambda text, name: requested.append((text, name)))
    latin1 = tmp_path / "old.txt"
    latin1.write_bytes("Caf\xe9".encode("latin-1"))
    assert not dialog.load_file(str(latin1)) and "not UTF-8" in dialog.note.text()
    dialog.edit.setPlainText("Rent is due monthly.")
    dialog.check_button.click()
    assert requested == [("Rent is due monthly.", "pasted text")]
