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


def test_garbage_is_collected_on_the_gui_thread(qtbot, qloop, run) -> None:  # noqa: ANN001
    import asyncio
    import gc
    import threading

    from desktop_app.ui.gc_guard import GuiThreadCollector

    collector = GuiThreadCollector(interval_ms=20)
    collector.start()
    try:
        assert not gc.isenabled()

        def make_cycles() -> None:  # a worker allocating: must not collect by itself
            for _ in range(5000):
                node: list[object] = []
                node.append(node)

        worker = threading.Thread(target=make_cycles)
        worker.start()
        worker.join()
        assert gc.get_count()[0] > gc.get_threshold()[0]
        run(asyncio.sleep(0.1))
        assert gc.get_count()[0] < gc.get_threshold()[0]
    finally:
        collector.stop()
    assert gc.isenabled()
