"""Fonts read well in English and Chinese; answer markup helpers."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QTextLayout

from desktop_app.ui.qt import theme
from desktop_app.ui.qt.rich_text import elide
from tests.conftest import require


def families_drawing(text: str, font) -> list[str]:  # noqa: ANN001
    layout = QTextLayout(text, font)
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    return [run.rawFont().familyName() for run in layout.glyphRuns()]


def test_latin_keeps_the_ui_font_and_chinese_gets_a_cjk_font(qapp) -> None:  # noqa: ANN001
    installed = set(QFontDatabase.families())
    cjk = next((f for f in theme.CJK_FAMILIES if f in installed), None)
    require(cjk is not None, "no CJK font installed (Debian: fonts-noto-cjk; `make test` installs it)")
    previous = qapp.font()
    try:
        font = theme.apply_fonts(qapp)
        assert font.pointSizeF() >= theme.MIN_POINT_SIZE
        latin = families_drawing("the client’s handshake", font)
        assert latin and cjk not in latin  # a CJK font would draw ’ full-width
        assert families_drawing("保修期为三十天", font) == [cjk]
    finally:
        qapp.setFont(previous)


def test_elide_keeps_both_ends() -> None:
    section = "4 Opening Handshake > Section 4 of [RFC4648]) value that > 4.2.2 Sending the Server's Opening Handshake"
    short = elide(section, 40)
    assert len(short) == 40 and short.startswith("4 Opening") and short.endswith("Handshake")
    assert elide("short", 40) == "short"


def test_while_the_model_reads_the_passages_the_answer_says_so_and_how_to_stop() -> None:
    from desktop_app.ui.conversation.answer_html import render_turn
    from desktop_app.ui.conversation.answer_turn import AnswerTurn, TurnState
    from desktop_app.ui.qt.palette import DARK

    waiting = render_turn(AnswerTurn("How long is the warranty?"), 1, DARK)
    assert "the model reads them" in waiting and "Esc stops" in waiting
    done = render_turn(AnswerTurn("q", state=TurnState.CANCELLED), 1, DARK)
    assert "the model reads them" not in done


def test_the_sources_say_what_the_glossary_added_to_the_search() -> None:
    from desktop_app.core.types import AnswerStarted, NoBasis, SourcePayload
    from desktop_app.ui.conversation.answer_html import render_turn
    from desktop_app.ui.conversation.answer_turn import AnswerTurn
    from desktop_app.ui.qt.palette import DARK

    source = SourcePayload("1", "c:60:2", "d", "/docs/3M_2018_10K.pdf", "3M 10-K", 60, "60",
                           "Consolidated Statement of Cash Flows", "Purchases of property, plant and equipment",
                           0, 40)
    turn = AnswerTurn("What was 3M's capex in 2018?")
    turn.apply(AnswerStarted(turn.question, (source,), "a1",
                             also_searched="purchases of property, plant and equipment"))
    html = render_turn(turn, 1, DARK)
    assert "Also searched for (glossary): purchases of property, plant and equipment" in html
    plain = AnswerTurn("q")
    plain.apply(AnswerStarted("q", (source,), "a2"))
    assert "Also searched for" not in render_turn(plain, 1, DARK)
    refused = AnswerTurn("What is the quick ratio?")
    refused.apply(AnswerStarted(refused.question, (), "a3", also_searched="total current assets"))
    refused.apply(NoBasis(reason="No passage holds enough of the question."))
    assert "Also searched for (glossary): total current assets" in render_turn(refused, 1, DARK)
