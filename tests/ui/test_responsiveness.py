"""The GUI thread stays responsive while an answer streams and while a folder indexes."""

from __future__ import annotations

from desktop_app.ui.lag_probe import LagProbe
from tests.ui.fakes import ScriptedAnswer, payload, pypdf_passage


def long_answer(library) -> ScriptedAnswer:  # noqa: ANN001
    manual = library["manual"].path
    source = payload("1", manual, 2, pypdf_passage(manual, 2, "The warranty period", "regional"))
    sentence = "The warranty lasts thirty days from delivery and claims go to the office [1]. "
    return ScriptedAnswer(sentence * 25 + "Also [9].", [source], chunk=6)


def test_streaming_and_indexing_do_not_stall_the_event_loop(window, fake_kb, library, run) -> None:  # noqa: ANN001
    fake_kb.token_delay = 0.002
    fake_kb.answers.append(long_answer(library))
    probe = LagProbe()
    probe.start()
    run(window.open_folder(str(library["manual"].path.parent)))
    run(window.ask("How long is the warranty?"), timeout=30)
    report = probe.stop()
    print(report)
    assert report.ticks > 50
    assert window.conversation.renders < 200  # throttled, not one render per token
    assert report.p99_ms < 50, report
    turn = window.conversation.current_turn()
    assert (
        len(turn.markers) == 26 and window.conversation.html().count('href="cite:1?turn=0"') == 25
    )
