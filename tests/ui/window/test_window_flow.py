"""The window end to end with the fake facade: index a folder, stream an answer with
clickable citation chips, open the cited page with the passage highlighted."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QUrl

from desktop_app.core.types import ClaimVerdict, SourceState, Verdict
from desktop_app.ui.conversation.answer_turn import TurnState
from tests.ui.conftest import until
from tests.ui.fakes import ScriptedAnswer, payload, pypdf_passage

ANSWER = (
    "The pump's warranty lasts thirty days from delivery [1]. "
    "Later claims go to the regional office [1][2]. "
    "It also comes with a free helmet [7]."
)


def warranty_answer(library) -> ScriptedAnswer:  # noqa: ANN001
    manual = library["manual"].path
    guide = library["guide"].path
    passage = pypdf_passage(manual, 2, "The warranty period", "regional")
    return ScriptedAnswer(
        ANSWER,
        [
            payload("1", manual, 2, passage, section="4.2 Warranty", title="Pump Manual"),
            payload(
                "2",
                guide,
                2,
                pypdf_passage(guide, 2, "The pump needs", "connection."),
                title="Installation Guide",
            ),
        ],
    )


def glyph_boxes(window, needle: str) -> list[QRectF]:  # noqa: ANN001
    """Viewport rectangles of ``needle`` on the shown page, from PDFium's own boxes."""
    viewer = window.viewer
    page = viewer.view.current_page()
    text = viewer.document.getAllText(page).text()
    start = text.index(needle)
    selection = viewer.document.getSelectionAtIndex(page, start, len(needle))
    page_rect = viewer.view.page_rect()
    return [viewer.view.to_viewport(p.boundingRect(), page_rect) for p in selection.bounds()]


def test_index_then_ask_then_open_citation(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = library["manual"].path.parent
    summary = run(window.open_folder(str(folder)))
    assert summary is not None and summary.documents == 3
    words = {Path(r.path).name: r.words for r in window.library.rows()}
    assert words == {"manual.pdf": "indexed", "guide.pdf": "indexed", "zhibao.pdf": "indexed"}
    assert "Indexed 3 documents" in window.status_label.text()

    fake_kb.scripted.append(warranty_answer(library))
    fake_kb.pause_at = 40  # hold the stream after the first marker has been reported

    async def scenario() -> None:
        task = window.ask("How long is the pump warranty?")
        await fake_kb.paused.wait()
        # The throttled render shows the marker (a render frame later, however busy the machine).
        await until(lambda: 'href="cite:1?turn=0"' in window.conversation.html(), timeout=30,
                    what="the first marker rendered")
        turn = window.conversation.current_turn()
        assert turn is not None and turn.state is TurnState.STREAMING
        html = window.conversation.html()
        assert 'href="cite:1?turn=0"' in html  # clickable while still streaming
        assert "Answering" in html
        window.conversation.handle_anchor(QUrl("cite:1?turn=0"))
        await until(lambda: window.viewer.view.has_highlight(), what="highlight while streaming")
        fake_kb.resume.set()
        await task

    run(scenario())
    assert window.viewer.page() == 2
    assert window.viewer.document.getAllText(1).text().startswith("4.2 Warranty")
    highlight = window.viewer.view.highlight_rects()
    assert highlight
    for needle in ("thirty days", "regional office"):
        boxes = glyph_boxes(window, needle)
        assert boxes and all(any(h.intersects(b) for h in highlight) for b in boxes), needle
    # The lines around the passage stay unhighlighted.
    for needle in ("Unrelated opening remark", "closing note about spare"):
        assert not any(h.intersects(b) for h in highlight for b in glyph_boxes(window, needle)), (
            needle
        )
    assert "Pump Manual" in window.viewer.header.text()
    assert "4.2 Warranty" in window.viewer.header.text()


def test_hallucinated_marker_is_struck_through_and_not_a_link(
    window, fake_kb, library, run
) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    run(window.ask("How long is the pump warranty?"))
    html = window.conversation.html()
    assert 'href="cite:7' not in html
    assert "line-through" in html and "not among the sources given to the model" in html
    assert html.count('href="cite:1?turn=0"') == 2 and 'href="cite:2?turn=0"' in html
    turn = window.conversation.current_turn()
    assert turn.state is TurnState.FINISHED and turn.cited_ids() == ["1", "2"]
    # The source list below the answer links both sources.
    assert 'href="source:1?turn=0"' in html and 'href="source:2?turn=0"' in html


def test_changed_source_is_reported_not_highlighted(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    answer = warranty_answer(library)
    fake_kb.scripted.append(answer)
    run(window.ask("How long is the pump warranty?"))
    fake_kb.state_overrides[answer.sources[0].chunk_id] = SourceState.CHANGED
    window.conversation.handle_anchor(QUrl("cite:1?turn=0"))
    run(until(lambda: "Source changed" in window.viewer.header.text(), what="changed note"))
    assert not window.viewer.view.has_highlight()


def test_verdicts_and_suggestions_render(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    answer = warranty_answer(library)
    first_end = ANSWER.index("[1]") + 3
    second = ANSWER.index("It also")
    answer.verdicts = [
        ClaimVerdict((0, first_end), Verdict.SUPPORTED, ("1",), 0.9, support=((0, 20),)),
        ClaimVerdict(
            (second, len(ANSWER)),
            Verdict.UNCITED,
            (),
            0.0,
            suggested=answer.sources[1].chunk_id,
            suggested_label="2",
        ),
    ]
    fake_kb.scripted.append(answer)
    run(window.ask("How long is the pump warranty?"))
    html = window.conversation.html()
    assert "#2e7d32" in html  # the supported sentence's underline colour
    assert "inferred by Folio" in html
    assert f'href="suggest:{answer.sources[1].chunk_id}?turn=0"' in html


def _fragments(browser):  # noqa: ANN001, ANN202
    block = browser.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            yield iterator.fragment()
            iterator += 1
        block = block.next()


def test_chips_carry_tooltips_shown_on_hover(window, fake_kb, library, run) -> None:  # noqa: ANN001
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent, QTextCursor
    from PySide6.QtWidgets import QApplication, QToolTip

    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    run(window.ask("How long is the pump warranty?"))
    browser = window.conversation.browser
    chip = next(f for f in _fragments(browser) if f.charFormat().anchorHref() == "cite:1?turn=0")
    tip = chip.charFormat().toolTip()
    assert "Pump Manual — p. 2 · 4.2 Warranty" in tip and "The warranty period" in tip
    struck = next(f for f in _fragments(browser) if f.text() == "[7]")
    assert struck.charFormat().fontStrikeOut()
    assert struck.charFormat().toolTip() == "not among the sources given to the model"

    cursor = QTextCursor(browser.document())
    cursor.setPosition(chip.position() + 1)
    point = browser.cursorRect(cursor).center()
    event = QHelpEvent(QEvent.Type.ToolTip, point, browser.viewport().mapToGlobal(point))
    QApplication.sendEvent(browser.viewport(), event)
    assert "Pump Manual" in QToolTip.text()
    QToolTip.hideText()


def test_clicking_another_citation_moves_page_and_highlight(window, fake_kb, library, run) -> None:  # noqa: ANN001
    run(window.open_folder(str(library["manual"].path.parent)))
    fake_kb.scripted.append(warranty_answer(library))
    run(window.ask("How long is the pump warranty?"))
    window.conversation.handle_anchor(QUrl("cite:1?turn=0"))
    run(until(lambda: window.viewer.view.has_highlight(), what="first highlight"))
    window.conversation.handle_anchor(QUrl("cite:2?turn=0"))
    run(
        until(
            lambda: (
                window.viewer.path == str(library["guide"].path)
                and window.viewer.view.has_highlight()
            ),
            what="second highlight",
        )
    )
    assert window.viewer.page() == 2
    highlight = window.viewer.view.highlight_rects()
    assert all(any(h.intersects(b) for h in highlight) for b in glyph_boxes(window, "230 volt"))
    assert "Installation Guide" in window.viewer.header.text()


def test_no_basis_shows_the_banner(window, fake_kb, library, run) -> None:  # noqa: ANN001
    from desktop_app.core.types import NoBasis

    answer = ScriptedAnswer("", [])
    fake_kb.scripted.append(answer)
    original = answer.events

    def events(question: str):  # noqa: ANN202
        started, *_rest = original(question)
        return [started, NoBasis("No passage scored above the evidence threshold.")]

    answer.events = events  # type: ignore[method-assign]
    run(window.ask("What colour is the moon?"))
    html = window.conversation.html()
    assert "The documents hold no basis for this question — verify manually" in html
    assert "evidence threshold" in html
    assert window.conversation.current_turn().state is TurnState.NO_BASIS
    assert window.commands.export_action.isEnabled()


def test_a_failing_facade_is_reported_in_the_answer(window, fake_kb, run) -> None:  # noqa: ANN001
    from desktop_app.core.errors import KnownError

    async def broken_ask(question: str, **_: object):  # noqa: ANN202
        raise KnownError("The answer model is not installed.", "Run: folio models install")
        yield  # pragma: no cover

    fake_kb.answers.ask = broken_ask
    run(window.ask("Anything?"))
    html = window.conversation.html()
    assert "The answer model is not installed." in html and "folio models install" in html
    assert window.conversation.current_turn().state is TurnState.FAILED
    assert window.conversation.ask_button.isEnabled()
