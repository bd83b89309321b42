"""The GUI thread stays responsive while an answer streams and while a folder indexes."""

from __future__ import annotations

import pytest

from tests.ui.fakes import ScriptedAnswer, payload, pypdf_passage
from tests.ui.lag_probe import LagProbe


def long_answer(library) -> ScriptedAnswer:  # noqa: ANN001
    manual = library["manual"].path
    source = payload("1", manual, 2, pypdf_passage(manual, 2, "The warranty period", "regional"))
    sentence = "The warranty lasts thirty days from delivery and claims go to the office [1]. "
    return ScriptedAnswer(sentence * 25 + "Also [9].", [source], chunk=6)


def test_streaming_and_indexing_do_not_stall_the_event_loop(window, fake_kb, library, run) -> None:  # noqa: ANN001
    fake_kb.token_delay = 0.002
    fake_kb.scripted.append(long_answer(library))
    import asyncio

    probe = LagProbe()
    probe.start()
    run(asyncio.sleep(1.0))
    idle = probe.stop()  # what the machine's load alone costs a tick
    probe.start()
    run(window.open_folder(str(library["manual"].path.parent)))
    run(window.ask("How long is the warranty?"), timeout=30)
    report = probe.stop()
    print(f"idle: {idle}\nindexing, then streaming: {report}")
    assert report.ticks > 50
    assert window.conversation.renders < 200  # throttled, not one render per token
    assert report.p95_ms < P95_BOUND_MS + 3 * idle.p95_ms, (str(report), f"idle: {idle}")
    turn = window.conversation.current_turn()
    assert (
        len(turn.markers) == 26 and window.conversation.html().count('href="cite:1?turn=0"') == 25
    )


def test_garbage_is_collected_on_the_gui_thread(qtbot, qloop, run) -> None:  # noqa: ANN001
    import asyncio
    import gc
    import threading

    from desktop_app.ui.qt.gc_guard import GuiThreadCollector

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


# The real thing: the real facade (real ONNX embedder, the small GGUF in its worker
# process), real PDFs of ../shared/corpus, one window; an answer streams while a second
# folder indexes. Bound: the 95th percentile of the 10 ms probe's lateness, against the
# same probe's p95 over 3 s of the idle window just before (what the machine's load alone
# costs a tick). Measured on the 2-core machine while other jobs loaded it to a load
# average of 15-22: idle p95 10-18 ms; while streaming and indexing p95 26-34 ms, p99
# ~50 ms, max ~500 ms (whole seconds where the kernel ran other processes). A GUI thread
# that waited on an embedding batch (~0.1-1 s) or a token would push p95 far over.
ASKED = ("en_wiki_pdfjs_article.pdf",)
INDEXED_MEANWHILE = ("en_paper_dpr_multicolumn.pdf", "en_gov_ca_warn_report.pdf",
                     "en_gov_federal_register_2020-17221.pdf", "zh_report_dbdq_2018q1.pdf")
P95_BOUND_MS = 25.0  # plus 3 x the idle p95


def _folder(dest, shared_dir, names):  # noqa: ANN001, ANN202
    dest.mkdir()
    for name in names:
        (dest / name).symlink_to(shared_dir / "corpus" / name)
    return dest


@pytest.mark.e2e
def test_real_answer_streaming_while_indexing_does_not_stall_the_window(  # noqa: ANN001
    qtbot, qloop, run, tmp_path, shared_dir, small_model_path, embedder_dir,
) -> None:
    import asyncio

    from desktop_app.ui.window.app import make_knowledge_base
    from desktop_app.ui.window.main_window import MainWindow
    from tests.ui.conftest import until

    asked = _folder(tmp_path / "asked", shared_dir, ASKED)
    meanwhile = _folder(tmp_path / "meanwhile", shared_dir, INDEXED_MEANWHILE)
    kb = make_knowledge_base(tmp_path / "lib.duckdb", "small")
    window = MainWindow(kb, remember_layout=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    try:
        summary = run(window.open_folder(str(asked)), timeout=600)
        assert summary is not None and summary.documents == 1 and not summary.failed
        probe = LagProbe()
        probe.start()
        run(asyncio.sleep(3.0))
        idle = probe.stop()
        probe.start()
        indexing = window.open_folder(str(meanwhile))
        # The second folder is being embedded (its first file done) when the question goes.
        run(until(lambda: window.progress.bar.value() >= 1 or indexing.done(), timeout=600,
                  what="the first file of the second folder indexed"), timeout=610)
        assert not indexing.done(), "indexing finished before the answer started: nothing overlapped"
        answer = window.ask("Who launched the PDF.js project, and in which year?")
        assert answer is not None
        turn = window.conversation.current_turn()
        run(until(lambda: bool(turn.text) or answer.done(), timeout=600, what="the first token"), timeout=610)
        streaming_while_indexing = bool(turn.text) and not indexing.done()
        run(answer, timeout=600)
        done = run(indexing, timeout=900)
        report = probe.stop()
        print(f"idle: {idle}\nstreaming while indexing: {report}")
        assert streaming_while_indexing, "the answer's first token came after indexing ended"
        assert turn.text and turn.sources, turn.error or turn.no_basis
        assert done is not None and not done.failed and not done.cancelled
        assert done.documents == len(ASKED) + len(INDEXED_MEANWHILE)
        assert report.ticks >= 100, report  # the probe ran through both
        assert report.p95_ms < P95_BOUND_MS + 3 * idle.p95_ms, (str(report), f"idle: {idle}")
    finally:
        window.close()
        run(kb.close(), timeout=60)
