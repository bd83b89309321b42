"""A contradicted sentence in the answer view: red underline, and its tooltip quotes what
the passage says instead; a judge's later verdict for the same sentence replaces the
first one in place."""

from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser

from desktop_app.core.types import ClaimVerdict, TokenDelta, Verdict
from desktop_app.ui.answer_html import Colours, render_turn
from desktop_app.ui.answer_model import AnswerTurn, TurnState

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
