"""A contradicted sentence in the answer view: red underline, and its tooltip quotes what
the passage says instead; a judge's later verdict for the same sentence replaces the
first one in place."""

from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser

from desktop_app.core.types import ClaimVerdict, TokenDelta, Verdict
from desktop_app.ui.conversation.answer_html import render_turn
from desktop_app.ui.conversation.answer_turn import AnswerTurn, TurnState
from desktop_app.ui.qt.palette import Colours

TEXT = "A single-user client should keep up to 2*N connections to one server. It is fine."
QUOTE = "A single-user client SHOULD NOT maintain more than 2 connections with any server or proxy."


def _fragments(browser: QTextBrowser):  # noqa: ANN202
    block = browser.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            yield iterator.fragment()
            iterator += 1
        block = block.next()


def test_a_contradicted_sentence_shows_the_passages_words_in_its_tooltip(qtbot) -> None:  # noqa: ANN001
    end = TEXT.index(".") + 1
    turn = AnswerTurn("How many connections?", state=TurnState.FINISHED, text=TEXT)
    turn.verdicts = [ClaimVerdict((0, end), Verdict.CONTRADICTED, ("1",), 0.1,
                                  reason="[1]: the passage says it of another subject", quote=QUOTE)]
    html = render_turn(turn, 0, Colours())
    assert Colours().contradicted in html  # red
    browser = QTextBrowser()
    qtbot.addWidget(browser)
    browser.setHtml(html)
    sentence = next(f for f in _fragments(browser) if f.text().startswith("A single-user client"))
    tip = sentence.charFormat().toolTip()
    assert tip.startswith("contradicted: the cited passage says otherwise [1]")
    assert f"The passage says: “{QUOTE}”" in tip


def test_a_true_sentence_its_passage_does_not_state_gets_the_neutral_mark_not_red(qtbot) -> None:  # noqa: ANN001
    end = TEXT.index(".") + 1
    turn = AnswerTurn("How many connections?", state=TurnState.FINISHED, text=TEXT)
    turn.verdicts = [ClaimVerdict((0, end), Verdict.NOT_CONFIRMED, ("1",), 0.4, suggested="c9",
                                  suggested_label="3", reason="[1]: 40% of the claim's content found")]
    html = render_turn(turn, 0, Colours())
    assert Colours().not_confirmed in html and Colours().contradicted not in html
    browser = QTextBrowser()
    qtbot.addWidget(browser)
    browser.setHtml(html)
    sentence = next(f for f in _fragments(browser) if f.text().startswith("A single-user client"))
    tip = sentence.charFormat().toolTip()
    assert tip.startswith("not confirmed: the cited passage does not state this [1]")
    assert "A better passage: [3]" in tip and "red = contradicted" in tip
    assert Verdict("partial") is Verdict("unsupported") is Verdict.NOT_CONFIRMED  # older saved answers


def test_a_later_verdict_for_the_same_sentence_replaces_the_first() -> None:
    turn = AnswerTurn("q", state=TurnState.STREAMING)
    turn.apply(TokenDelta(TEXT))
    end = TEXT.index(".") + 1
    turn.apply(ClaimVerdict((0, end), Verdict.NOT_CONFIRMED, ("1",), 0.5))
    turn.apply(ClaimVerdict((0, end), Verdict.NOT_CONFIRMED, ("1",), 0.5, reason="the judge (local model) says no"))
    assert [v.verdict for v in turn.verdicts] == [Verdict.NOT_CONFIRMED]


RFC_2616 = (
    "Clients that use persistent connections SHOULD limit the number of simultaneous connections "
    "that they maintain to a given server. A single-user client SHOULD NOT maintain more than 2 "
    "connections with any server or proxy."
)
ANSWER = (
    "A single-user client should not maintain more than 2 connections with any server or proxy [1]. "
    "HTTP/1.1 was published as RFC 2616 in June 1999 [1]. "
    "A single-user client may keep up to 4 connections to one server [1]."
)


def test_in_the_window_a_true_sentence_its_passage_does_not_state_is_neutral_not_red(qtbot) -> None:  # noqa: ANN001
    """The real rule scorer on a real RFC 2616 passage: the true sentence about the RFC's
    date (which the passage does not state) gets the neutral mark, the one with another
    number red, the stated one green."""
    from desktop_app.core.text.markers import find_markers
    from desktop_app.core.verdicts.verify import verify_answer
    from desktop_app.ui.conversation.pane import ConversationPane
    from desktop_app.ui.qt.theme import colours_for

    verdicts = verify_answer(ANSWER, list(find_markers(ANSWER)), {"1": RFC_2616})
    assert [v.verdict for v in verdicts] == [Verdict.SUPPORTED, Verdict.NOT_CONFIRMED, Verdict.CONTRADICTED]
    assert verdicts[2].conflict == "number" and "2 connections" in verdicts[2].quote
    pane = ConversationPane()
    qtbot.addWidget(pane)
    turn = AnswerTurn("How many connections may a client keep?", state=TurnState.FINISHED, text=ANSWER)
    turn.verdicts = verdicts
    pane.add_turn(turn)
    colours = colours_for(pane.palette())
    underline = {}
    for fragment in _fragments(pane.browser):
        for start in ("A single-user client should", "HTTP/1.1 was", "A single-user client may"):
            if fragment.text().startswith(start):
                underline[start] = fragment.charFormat().underlineColor().name()
    assert underline == {"A single-user client should": colours.supported,
                         "HTTP/1.1 was": colours.not_confirmed,
                         "A single-user client may": colours.contradicted}
