"""The history panel with the fake facade: list saved answers, reopen one into the
conversation (rendered from its record), stale-source banners that never lead to a
highlight on the new file, and deleting with a confirmation."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QMessageBox

from desktop_app.core.types import ClaimVerdict, Verdict
from desktop_app.ui.conversation.answer_turn import TurnState
from tests.ui.conftest import until
from tests.ui.fakes import ScriptedAnswer, saved_record
from tests.ui.pdfs import write_pdf
from tests.ui.window.test_window_flow import ANSWER, warranty_answer

QUESTION = "How long is the pump warranty?"


def save_two(fake_kb, library) -> dict:  # noqa: ANN001
    answer = warranty_answer(library)
    answer.verdicts = [
        ClaimVerdict((0, ANSWER.index("[1]") + 3), Verdict.SUPPORTED, ("1",), 0.9, support=((0, 20),),
                     support_id="1"),
    ]
    fake_kb.saved["old"] = saved_record("Who makes the pump?", warranty_answer(library), "old",
                                        created_at="2024-04-01 09:00:00")
    record = saved_record(QUESTION, answer, "new", created_at="2024-05-02 10:30:00")
    fake_kb.saved["new"] = record
    return record


def open_history(window, run) -> None:  # noqa: ANN001
    window.commands.history_action.trigger()
    assert window.history_dock.isVisible()
    run(until(lambda: window.history.list.count() == 2, what="history listed"))


def test_reopened_answer_renders_from_its_record(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    save_two(fake_kb, library)
    open_history(window, run)
    assert window.history.answer_ids() == ["new", "old"]  # newest first
    assert window.history.list.item(0).text().startswith(QUESTION)
    assert window.history.select("new")
    turn = run(window.history.open_selected())
    assert turn is window.conversation.current_turn()
    assert turn.state is TurnState.FINISHED and turn.text == ANSWER
    html = window.conversation.html()
    assert QUESTION in html and "thirty days from delivery" in html
    assert html.count('href="cite:1?turn=0"') == 2 and 'href="cite:2?turn=0"' in html
    assert "line-through" in html  # the hallucinated [7] stays struck through
    assert "#2e7d32" in html  # the saved verdict's underline
    assert "Saved answer" in html and "source changed" not in html
    # Its chips open the page with the passage highlighted, as when it streamed.
    window.conversation.handle_anchor(QUrl("cite:1?turn=0"))
    run(until(lambda: window.viewer.view.has_highlight(), what="highlight"))
    assert window.viewer.page() == 2


def test_changed_source_gets_a_banner_and_no_highlight_then_reask(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    save_two(fake_kb, library)
    # The guide [2] stays; the manual [1] now holds other bytes.
    write_pdf(library["manual"].path, [["Pump Manual, second edition"], ["4.2 Warranty", "Two years."]])
    open_history(window, run)
    window.history.select("new")
    turn = run(window.history.open_selected())
    assert [(cid, str(state)) for cid, state in turn.stale_citations()] == [("1", "changed")]
    html = window.conversation.html()
    assert html.count("source changed since this answer") == 1 and 'href="reask:?turn=0"' in html
    assert "changed or removed" in window.history.message.text()
    window.conversation.handle_anchor(QUrl("cite:1?turn=0"))
    run(until(lambda: "Source changed" in window.viewer.header.text(), what="changed note"))
    assert not window.viewer.view.has_highlight()
    # The unchanged source still highlights.
    window.conversation.handle_anchor(QUrl("cite:2?turn=0"))
    run(until(lambda: window.viewer.view.has_highlight(), what="guide highlight"))
    # "re-ask?" asks the saved question again.
    fake_kb.scripted.append(ScriptedAnswer("The second edition says two years.", []))
    window.conversation.handle_anchor(QUrl("reask:?turn=0"))
    run(until(lambda: fake_kb.questions == [QUESTION], what="re-asked"))
    run(window.ask_task)
    assert len(window.conversation.turns) == 2


def test_removed_source_says_so(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    save_two(fake_kb, library)
    library["guide"].path.unlink()
    open_history(window, run)
    window.history.select("new")
    turn = run(window.history.open_selected())
    assert [(cid, str(state)) for cid, state in turn.stale_citations()] == [("2", "removed")]
    html = window.conversation.html()
    assert "source removed" in html and "source changed" not in html
    window.conversation.handle_anchor(QUrl("cite:2?turn=0"))
    run(until(lambda: "Source removed" in window.viewer.header.text(), what="removed note"))
    assert not window.viewer.view.has_highlight()


def test_delete_asks_first_and_cancel_keeps_the_answer(window, fake_kb, library, run, qtbot) -> None:  # noqa: ANN001
    save_two(fake_kb, library)
    open_history(window, run)
    window.history.select("old")
    box = window.history.confirm_delete()
    assert box is not None and box.isVisible() and "Who makes the pump?" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    run(until(lambda: not box.isVisible(), what="dialog closed"))
    assert fake_kb.deleted == [] and window.history.answer_ids() == ["new", "old"]

    box = window.history.confirm_delete()
    assert box is not None
    with qtbot.waitSignal(window.history.deleted, timeout=5000) as deleted:
        box.button(QMessageBox.StandardButton.Yes).click()
        run(until(lambda: fake_kb.deleted == ["old"], what="deleted"))
    assert deleted.args == ["old"]
    run(until(lambda: window.history.answer_ids() == ["new"], what="list refreshed"))


def test_a_record_deleted_elsewhere_is_reported_not_shown(window, fake_kb, library, run) -> None:  # noqa: ANN001
    save_two(fake_kb, library)
    open_history(window, run)
    del fake_kb.saved["old"]
    assert run(window.history.reopen("old")) is None
    assert "no longer saved" in window.history.message.text()
    assert window.conversation.turns == [] and window.history.answer_ids() == ["new"]


def test_an_answer_with_no_backed_statement_gets_a_banner(window, fake_kb, library, run) -> None:  # noqa: ANN001
    answer = warranty_answer(library)
    second = ANSWER.index("Later")
    answer.verdicts = [
        ClaimVerdict((0, second - 1), Verdict.NOT_CONFIRMED, ("1",), 0.1, reason="60 vs 30"),
        ClaimVerdict((second, len(ANSWER)), Verdict.UNCITED, (), 0.0),
    ]
    fake_kb.saved["bad"] = saved_record(QUESTION, answer, "bad")
    turn = run(window.history.reopen("bad"))
    assert turn is not None
    assert "No statement of this answer is backed by the documents" in window.conversation.html()
    # One backed sentence is enough to drop the banner.
    fake_kb.saved["ok"] = saved_record(QUESTION, warranty_answer(library), "ok")
    fake_kb.saved["ok"] = dataclasses.replace(fake_kb.saved["ok"],
                                              claims=(ClaimVerdict((0, second - 1), Verdict.SUPPORTED, ("1",), 0.9),))
    run(window.history.reopen("ok"))
    assert len(window.conversation.turns) == 2
    assert window.conversation.html().count("No statement of this answer") == 1
