"""Stopping, passwords, export, settings and layout memory of the main window."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QKeyEvent
from PySide6.QtWidgets import QApplication, QInputDialog

from desktop_app.core import settings as settings_store
from desktop_app.core.types import DocStatus
from desktop_app.ui.conversation.answer_turn import TurnState
from desktop_app.ui.window.main_window import MainWindow
from tests.ui.conftest import until
from tests.ui.window.test_window_flow import warranty_answer


def press(widget, key: Qt.Key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:  # noqa: ANN001
    QApplication.sendEvent(widget, QKeyEvent(QEvent.Type.KeyPress, key, modifiers))


def test_escape_stops_the_answer_mid_stream(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    fake_kb.pause_at = 10

    async def scenario() -> None:
        window.conversation.question.setPlainText("How long is the pump warranty?")
        press(window.conversation.question, Qt.Key.Key_Return)
        await fake_kb.paused.wait()
        assert window.commands.stop_action.isEnabled() and window.conversation.stop_button.isEnabled()
        assert not window.conversation.ask_button.isEnabled()
        press(window.conversation.question, Qt.Key.Key_Escape)
        await until(lambda: window.ask_task.done(), what="the answer task to end")

    run(scenario())
    assert fake_kb.cancel_calls == 1
    turn = window.conversation.current_turn()
    assert turn.state is TurnState.CANCELLED
    assert "Stopped." in window.conversation.html()
    assert window.conversation.ask_button.isEnabled() and not window.commands.stop_action.isEnabled()


def test_shift_enter_is_a_new_line_not_a_question(window, fake_kb) -> None:  # noqa: ANN001
    box = window.conversation.question
    box.setPlainText("first line")
    box.moveCursor(box.textCursor().MoveOperation.End)
    press(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert box.toPlainText() == "first line\n"
    assert window.conversation.turns == []


def test_cancel_mid_index_keeps_done_files_and_marks_the_rest(
    window, fake_kb, library, run
) -> None:  # noqa: ANN001
    fake_kb.index_gate = asyncio.Event()

    async def scenario() -> None:
        task = window.open_folder(str(library["manual"].path.parent))
        manual = str(library["manual"].path)
        await until(
            lambda: getattr(window.library.row(manual), "words", "") == "indexing", what="indexing"
        )
        assert window.progress.isVisible() and window.progress.cancel_button.isEnabled()
        window.progress.cancel_button.click()
        summary = await task
        assert summary is not None and summary.cancelled

    run(scenario())
    words = {Path(r.path).name: r.words for r in window.library.rows()}
    assert words["guide.pdf"] == "indexed"
    assert words["manual.pdf"] == "stopped"
    assert not window.progress.isVisible()
    assert "stopped" in window.status_label.text().lower()
    assert window.commands.reindex_action.isEnabled()


def test_needs_password_asks_and_reindexes_with_it(window, fake_kb, library, run, qtbot) -> None:  # noqa: ANN001
    fake_kb.locked = {"manual.pdf": "s3cret"}
    run(window.open_folder(str(library["manual"].path.parent)))
    row = window.library.row(str(library["manual"].path))
    assert row.status is DocStatus.NEEDS_PASSWORD and row.words == "needs password"
    assert "need a password" in window.status_label.text()
    double_click(qtbot, window, row.path)
    dialogs = window.findChildren(QInputDialog)
    assert len(dialogs) == 1  # one double-click, one question
    dialog = dialogs[0]
    assert dialog is not None and dialog.isVisible()
    dialog.setTextValue("s3cret")
    dialog.accept()

    run(until(lambda: len(fake_kb.index_calls) == 2 and window.index_task.done(), what="re-index"))
    folder, passwords = fake_kb.index_calls[-1]
    assert passwords == {str(library["manual"].path): "s3cret"}
    assert window.library.row(str(library["manual"].path)).words == "indexed"


def double_click(qtbot, window, path: str) -> None:  # noqa: ANN001
    view = window.library_view
    rect = view.visualRect(window.library_pane.index_of(path))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_double_click_opens_the_document_in_the_viewer(window, library, run, qtbot) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    double_click(qtbot, window, str(library["guide"].path))
    assert window.viewer.path == str(library["guide"].path)
    assert window.viewer.page() == 1 and window.viewer.page_count() == 2
    window.viewer.next_button.click()
    assert window.viewer.page() == 2


def test_export_writes_markdown_with_footnotes(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    assert not window.commands.export_action.isEnabled()
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    run(window.ask("How long is the pump warranty?"))
    assert window.commands.export_action.isEnabled()
    text = window.export_markdown(tmp_path / "answer.md").read_text(encoding="utf-8")
    assert text.startswith("# How long is the pump warranty?")
    assert "thirty days from delivery [^1]." in text
    assert "[^1][^2]" in text and "~~[7]~~" in text
    assert "[^1]: Pump Manual, p. 2, 4.2 Warranty." in text
    assert "    > The\twarranty\tperiod" in text  # the passage, verbatim


def test_dropping_a_folder_opens_it(window, fake_kb, library, run) -> None:  # noqa: ANN001
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(library["manual"].path.parent))])
    event = QDropEvent(
        QPointF(50, 50),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    run(until(lambda: window.index_task is not None and window.index_task.done(), what="index"))
    assert fake_kb.index_calls[0][0] == str(library["manual"].path.parent.resolve())
    assert len(window.library.rows()) == 3


def test_geometry_and_splitter_are_remembered(qtbot, qloop, fake_kb, folio_home) -> None:  # noqa: ANN001
    first = MainWindow(fake_kb)
    qtbot.addWidget(first)
    assert (first.width(), first.height()) == (1400, 900)
    first.resize(760, 560)  # within the offscreen screen (800x600): restoring clamps to it
    first.splitter.setSizes([100, 500, 400])
    sizes = first.splitter.sizes()
    first.close()
    assert (folio_home / "config" / "window.ini").is_file()
    second = MainWindow(fake_kb)
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (760, 560)
    assert second.splitter.sizes() == sizes


def test_settings_dialog_saves_valid_and_refuses_invalid(window, folio_home) -> None:  # noqa: ANN001
    dialog = window.show_settings()
    dialog.model.setCurrentIndex(dialog.model.findData("file"))
    dialog.model_path.setText(str(folio_home / "missing.gguf"))
    assert not dialog.try_save()
    assert "not a .gguf file" in dialog.error.text() and dialog.isVisible()
    dialog.model.setCurrentIndex(dialog.model.findData("small"))
    dialog.sources.setValue(7)
    assert dialog.try_save()
    saved = settings_store.load()
    assert saved.answer_model == "small" and saved.sources_per_answer == 7


def test_new_settings_swap_the_knowledge_base_when_idle(window, fake_kb, run) -> None:  # noqa: ANN001
    from tests.ui.fakes import FakeKnowledgeBase

    replacement = FakeKnowledgeBase()
    run(window.replace_knowledge_base(lambda: replacement))
    assert window.kb is replacement and fake_kb.closed and not replacement.closed
    # The fake's model reads no prompt head: once it is up the status says only that the
    # settings apply (a real one adds "Answer model ready.").
    run(until(lambda: window.status_label.text() == "Settings applied.", what="the model's status"))


def test_a_question_asked_while_the_last_answer_is_checked_stops_the_checks_and_is_answered(
    window, fake_kb, library, run
) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    fake_kb.hold_after_finish = True

    async def scenario() -> None:
        first = window.ask("How long is the pump warranty?")
        await fake_kb.paused.wait()  # written; the judge's questions would run now
        assert window.conversation.ask_button.isEnabled() and window.commands.ask_action.isEnabled()
        assert window.conversation.stop_button.isEnabled()
        fake_kb.hold_after_finish = False
        second = window.ask("Who services the pump?")
        assert second is not None
        await asyncio.wait_for(second, 5)
        assert first is not None and first.cancelled()

    run(scenario())
    assert fake_kb.questions == ["How long is the pump warranty?", "Who services the pump?"]
    assert fake_kb.cancel_calls == 0  # only that question's checks stopped, nothing else
    assert [t.state for t in window.conversation.turns] == [TurnState.FINISHED, TurnState.FINISHED]
    assert "Stopped." not in window.conversation.html()
    assert window.conversation.ask_button.isEnabled() and not window.commands.stop_action.isEnabled()


def test_a_question_asked_while_an_answer_streams_is_refused(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    fake_kb.pause_at = 10

    async def scenario() -> None:
        window.ask("How long is the pump warranty?")
        await fake_kb.paused.wait()
        assert not window.conversation.ask_button.isEnabled()
        assert window.ask("Who services the pump?") is None
        window.stop()
        await until(lambda: window.ask_task.done(), what="the answer task to end")

    run(scenario())
    assert fake_kb.questions == ["How long is the pump warranty?"]


def test_the_status_bar_says_when_the_answer_model_is_ready(window, fake_kb, run) -> None:  # noqa: ANN001
    fake_kb.model_ready.clear()
    fake_kb.cached_head = 372
    window.watch_answer_model()
    assert window.status_label.text() == "Loading the answer model…"
    fake_kb.model_ready.set()
    run(until(lambda: window.status_label.text() == "Answer model ready.", what="the ready status"))
