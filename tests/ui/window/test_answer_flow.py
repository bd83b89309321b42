"""The document's own answer in the window, with the fake facade: the quote shows under the
question before the model's first word and stays above the answer while it streams;
clicking it (or Tab and Enter) opens its page with that sentence alone highlighted; a
saved answer reopens with it, the export keeps it; and with "find the passage only" a
question runs no model and the turn is the quote and its sources (or the no-basis words)."""

from __future__ import annotations

import asyncio
import dataclasses

from PySide6.QtCore import Qt, QUrl
from PySide6.QtTest import QTest

from desktop_app.core import settings as settings_store
from desktop_app.ui.conversation.answer_turn import TurnState
from tests.ui.conftest import until
from tests.ui.fakes import ScriptedAnswer, quote, saved_record
from tests.ui.window.test_window_flow import glyph_boxes, warranty_answer

SENTENCE = "The warranty period for the pump is thirty days from delivery."


def quoted_answer(library) -> ScriptedAnswer:  # noqa: ANN001
    answer = warranty_answer(library)
    return dataclasses.replace(answer, quotes=[quote(answer.sources[0], SENTENCE, kind="duration")])


def seen(window) -> str:  # noqa: ANN001
    """What the answers pane shows, as text."""
    return window.conversation.browser.toPlainText()


def highlighted(window, needle: str) -> bool:  # noqa: ANN001
    rects = window.viewer.view.highlight_rects()
    return all(any(h.intersects(b) for h in rects) for b in glyph_boxes(window, needle))


def untouched(window, needle: str) -> bool:  # noqa: ANN001
    rects = window.viewer.view.highlight_rects()
    return not any(h.intersects(b) for h in rects for b in glyph_boxes(window, needle))


def test_the_quote_shows_before_the_first_token_and_stays_above_the_streaming_answer(
        window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(quoted_answer(library))
    fake_kb.pause_at = 2  # answer_started and the quote sent; the model's first token held back

    async def scenario() -> None:
        task = window.ask("How long is the pump warranty?")
        await fake_kb.paused.wait()
        await until(lambda: SENTENCE in seen(window), what="the quote rendered")
        turn = window.conversation.current_turn()
        assert turn is not None and turn.text == "" and turn.state is TurnState.STREAMING
        text = seen(window)
        assert f"“{SENTENCE}”" in text and "From the document · Pump Manual — p. 2 · 4.2 Warranty" in text
        assert text.index("How long is the pump warranty?") < text.index("From the document")
        assert "The pump's warranty lasts" not in text
        # Let the answer stream on and hold it half-way.
        fake_kb.paused.clear()
        fake_kb.pause_at = 12
        held, fake_kb.resume = fake_kb.resume, asyncio.Event()
        held.set()
        await fake_kb.paused.wait()
        await until(lambda: "The pump's warranty lasts" in seen(window), what="the answer's first words")
        text = seen(window)
        assert text.index(f"“{SENTENCE}”") < text.index("The pump's warranty lasts")
        assert window.conversation.current_turn().state is TurnState.STREAMING
        fake_kb.resume.set()
        await task

    run(scenario())
    text = seen(window)
    assert text.count(f"“{SENTENCE}”") == 1 and text.index(f"“{SENTENCE}”") < text.index("The pump's warranty lasts")
    assert window.conversation.current_turn().quotes[0].text.split() == SENTENCE.split()


def test_clicking_the_quote_highlights_its_sentence_alone(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    answer = quoted_answer(library)
    fake_kb.scripted.append(answer)
    run(window.ask("How long is the pump warranty?"))
    assert 'href="quote:0?turn=0"' in window.conversation.html()
    window.conversation.handle_anchor(QUrl("quote:0?turn=0"))
    run(until(lambda: window.viewer.view.has_highlight(), what="the quote highlighted"))
    assert window.viewer.page() == 2
    assert window.viewer.passage_span == answer.quotes[0].page_span
    assert highlighted(window, "thirty days from delivery")
    for other in ("regional office", "Unrelated opening remark"):  # the rest of its passage stays plain
        assert untouched(window, other), other
    # Its marker still opens the whole passage.
    window.conversation.handle_anchor(QUrl("cite:1?turn=0"))
    run(until(lambda: window.viewer.passage_span == (answer.sources[0].char_start, answer.sources[0].char_end)
              and window.viewer.view.has_highlight(), what="the cited passage highlighted"))
    assert highlighted(window, "regional office")


def test_the_quote_is_reached_with_tab_named_and_opened_with_enter(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    answer = quoted_answer(library)
    fake_kb.scripted.append(answer)
    run(window.ask("How long is the pump warranty?"))
    browser = window.conversation.browser
    browser.setFocus()
    for _ in range(4):
        QTest.keyClick(browser, Qt.Key.Key_Tab)
        if browser.textCursor().charFormat().anchorHref().startswith("quote:"):
            break
    assert browser.textCursor().charFormat().anchorHref() == "quote:0?turn=0"
    assert browser.accessibleName() == f"Quote from Pump Manual, p. 2: {SENTENCE}"
    QTest.keyClick(browser, Qt.Key.Key_Return)
    run(until(lambda: window.viewer.view.has_highlight(), what="the quote opened from the keyboard"))
    assert window.viewer.passage_span == answer.quotes[0].page_span and untouched(window, "regional office")
    QTest.keyClick(browser, Qt.Key.Key_Tab)  # on to the answer's first marker
    assert browser.accessibleName() == "Citation 1: Pump Manual — p. 2 · 4.2 Warranty"


def test_a_reopened_answer_shows_its_quote_and_the_export_keeps_it(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    answer = quoted_answer(library)
    fake_kb.saved["s1"] = saved_record("How long is the pump warranty?", answer, "s1")
    run(window.history.reopen("s1"))
    text = seen(window)
    assert text.index(f"“{SENTENCE}”") < text.index("The pump's warranty lasts")
    window.conversation.handle_anchor(QUrl("quote:0?turn=0"))
    run(until(lambda: window.viewer.view.has_highlight(), what="the reopened quote highlighted"))
    assert window.viewer.passage_span == answer.quotes[0].page_span and untouched(window, "regional office")
    markdown = window.export_markdown(tmp_path / "answer.md").read_text(encoding="utf-8")
    assert f"From the document, source [1]: Pump Manual, p. 2 (`manual.pdf`)\n\n> {SENTENCE}\n" in markdown
    assert markdown.index(SENTENCE) < markdown.index("The pump's warranty lasts")


def test_finding_the_passage_only_runs_no_model(window, fake_kb, library, run, tmp_path) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    dialog = window.show_settings()
    dialog.quote_only.setChecked(True)
    assert dialog.try_save() and window.quote_only and settings_store.load().quote_only
    fake_kb.scripted += [quoted_answer(library), warranty_answer(library)]  # the second has no quote
    fake_kb.pause_at = 1  # the sources are known; the finder's quote not yet

    async def scenario() -> None:
        task = window.ask("How long is the pump warranty?")
        await fake_kb.paused.wait()
        await until(lambda: "Sources" in seen(window), what="the sources rendered")
        text = seen(window)
        assert "Finding the passage that answers" in text
        assert "The model is reading" not in text and "Answering" not in text
        fake_kb.resume.set()
        await task

    run(scenario())
    assert fake_kb.quote_only_asks == [True]
    turn = window.conversation.current_turn()
    assert turn.quote_only and turn.state is TurnState.FINISHED and turn.text == ""
    text = seen(window)
    assert f"“{SENTENCE}”" in text and "no model was asked" in text and "(not cited)" not in text
    assert "[2] Installation Guide — p. 2" in text  # its sources, each a link to its page
    window.conversation.handle_anchor(QUrl("quote:0?turn=0"))
    run(until(lambda: window.viewer.view.has_highlight(), what="the quote highlighted"))
    assert untouched(window, "regional office")
    assert SENTENCE in window.export_markdown(tmp_path / "passage.md").read_text(encoding="utf-8")
    # Nothing answers the next question: the usual no-basis words, and no quote. A passage
    # found without a model is not saved, so the question follows up no answer.
    run(window.ask("Who painted the pump?"))
    assert fake_kb.quote_only_asks == [True, True] and fake_kb.follow_ups[-1] == (None, None)
    last = window.conversation.current_turn()
    assert last.state is TurnState.NO_BASIS and last.quotes == ()
    assert "The documents hold no basis for this question" in seen(window).split("Who painted the pump?", 1)[1]
