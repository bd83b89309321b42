"""A conversation in the window with the fake facade: a question follows up the answer
shown, "New conversation" (button, Ctrl+N) starts afresh, "Searched for" is shown and can
be edited and searched again, and the history reopens a whole conversation."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QUrl
from PySide6.QtGui import QKeySequence

from tests.ui.conftest import until
from tests.ui.fakes import ScriptedAnswer, saved_record
from tests.ui.window.test_window_flow import warranty_answer


def ask(window, run, question: str):  # noqa: ANN001, ANN201
    task = window.ask(question)
    assert task is not None
    return run(task)


def test_a_question_follows_up_the_answer_shown_until_a_new_conversation(window, fake_kb, library, run) -> None:  # noqa: ANN001
    fake_kb.scripted += [warranty_answer(library), warranty_answer(library), warranty_answer(library)]
    first = ask(window, run, "How long is the pump warranty?")
    assert fake_kb.follow_ups[-1] == (None, None)  # nothing to follow up yet
    assert first.searched == "How long is the pump warranty?" and first.conversation_id == first.answer_id
    assert "Searched for: How long is the pump warranty? · edit" in window.conversation.browser.toPlainText()
    second = ask(window, run, "And for the guide?")
    assert fake_kb.follow_ups[-1] == (first.answer_id, None)
    assert second.conversation_id == first.answer_id and len(window.conversation.turns) == 2
    window.show_status("Settings applied.")
    # Ctrl+N starts afresh: the pane empties, the next question follows up nothing, the
    # status bar keeps what it said.
    shortcut = window.commands.new_conversation_action
    assert shortcut is not None and QKeySequence("Ctrl+N") in shortcut.shortcuts()
    shortcut.trigger()
    assert window.conversation.turns == [] and window.conversation.scope == ()
    assert window.status_label.text() == "Settings applied."
    ask(window, run, "Who makes the pump?")
    assert fake_kb.follow_ups[-1] == (None, None)
    # The button does the same.
    window.conversation.new_button.click()
    assert window.conversation.turns == []


def test_searched_for_can_be_edited_and_searched_again(window, fake_kb, library, run) -> None:  # noqa: ANN001
    fake_kb.scripted += [warranty_answer(library), warranty_answer(library), warranty_answer(library)]
    first = ask(window, run, "How long is the pump warranty?")
    second_id = ask(window, run, "And what about the guide?").answer_id
    assert 'href="searched:?turn=1"' in window.conversation.html()
    window.conversation.handle_anchor(QUrl("searched:?turn=1"))
    editor = window.conversation.searched_editor
    assert editor.isVisible() and editor.edit.text() == "And what about the guide?"
    editor.edit.setText("installation guide warranty period")
    editor.search_button.click()
    run(until(lambda: len(fake_kb.follow_ups) == 3, what="searched again"))
    run(window.ask_task)
    # The last turn is replaced by the answer searched for the corrected text, still
    # following up the first answer.
    assert fake_kb.follow_ups[-1] == (first.answer_id, "installation guide warranty period")
    assert fake_kb.replaced[-1] == second_id  # the saved conversation shows the new answer instead
    turns = window.conversation.turns
    assert len(turns) == 2 and turns[1].question == "And what about the guide?"
    assert turns[1].searched == "installation guide warranty period"
    assert "installation guide warranty period" in window.conversation.html()
    assert not editor.isVisible()


def test_the_history_reopens_a_whole_conversation(window, fake_kb, library, run) -> None:  # noqa: ANN001
    one = saved_record("How long is the pump warranty?", warranty_answer(library), "c1", created_at="2024-05-01 10:00:00")
    two = saved_record("And for the guide?", warranty_answer(library), "c2", created_at="2024-05-01 10:01:00")
    two = dataclasses.replace(two, conversation_id="c1", searched="And for the guide? (pump warranty)")
    other = saved_record("Who makes the pump?", ScriptedAnswer("Acme [1].", []), "x1", created_at="2024-04-01 09:00:00")
    fake_kb.saved.update({"c1": one, "c2": two, "x1": other})
    window.history_dock.show()
    run(until(lambda: window.history.list.count() == 2, what="two conversations listed"))
    assert window.history.answer_ids() == ["c2", "x1"]
    assert "↳ And for the guide?" in window.history.list.item(0).text()
    assert "2 questions" in window.history.list.item(0).text()
    last = run(window.history.reopen("c1"))
    assert last is not None and last.answer_id == "c2"
    assert [t.answer_id for t in window.conversation.turns] == ["c1", "c2"]
    assert "Searched for: And for the guide? (pump warranty)" in window.conversation.browser.toPlainText()
    # The next question continues the reopened conversation.
    fake_kb.scripted.append(warranty_answer(library))
    ask(window, run, "And how long for the motor?")
    assert fake_kb.follow_ups[-1] == ("c2", None)


def test_a_conversation_reopened_after_another_is_set_apart(window, fake_kb, library, run) -> None:  # noqa: ANN001
    fake_kb.scripted.append(warranty_answer(library))
    ask(window, run, "How long is the pump warranty?")
    fake_kb.saved["x1"] = saved_record("Who makes the pump?", ScriptedAnswer("Acme [1].", []), "x1")
    run(window.history.reopen("x1"))
    assert "another conversation" in window.conversation.browser.toPlainText()


def test_export_writes_the_whole_conversation(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    fake_kb.scripted += [warranty_answer(library), warranty_answer(library)]
    ask(window, run, "How long is the pump warranty?")
    ask(window, run, "And for the guide?")
    text = window.export_markdown(tmp_path / "conversation.md").read_text(encoding="utf-8")
    assert text.startswith("# 1. How long is the pump warranty?")
    assert "# 2. And for the guide?" in text
    assert "[^1.1]:" in text and "[^2.1]:" in text and "[^1]:" not in text
    assert "Conversation exported" in window.status_label.text()


def test_reopening_a_conversation_restores_its_scope(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    manual = str(library["manual"].path)
    record = saved_record("How long is the pump warranty?", warranty_answer(library), "s1")
    fake_kb.saved["s1"] = dataclasses.replace(record, scope=(manual,))
    run(window.history.reopen("s1"))
    assert window.conversation.scope == (manual,) and window.conversation.scope_chip.isVisible()
    fake_kb.scripted.append(warranty_answer(library))
    ask(window, run, "And for how long after repair?")
    assert fake_kb.scopes[-1] == (manual,) and fake_kb.follow_ups[-1] == ("s1", None)
