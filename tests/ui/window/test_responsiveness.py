"""The GUI thread stays responsive while an answer streams and while a folder indexes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

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
# folder indexes. The overlap is made, not hoped for: the second folder's indexing is held
# at its embedder once its first batch is embedded (HeldIndexing), the question goes while
# it is held, and it goes on when the answer's first token is in the window, with nearly the
# whole folder still to embed while the rest of the answer streams. Which of the two ends
# first is then never a matter of the machine's speed (a fresh machine once embedded the
# whole folder before the model's first token).
# Bound: the 95th percentile of the 10 ms probe's lateness, from the second folder's
# opening until both are done and over the stretch from the first token to the answer's
# end, against the same probe's p95 over 3 s of the idle window just before (what the
# machine's load alone costs a tick). Measured on the 2-core machine while other jobs loaded
# it to a load average of 15-22: idle p95 10-18 ms; while streaming and indexing p95
# 26-34 ms, p99 ~50 ms, max ~500 ms (whole seconds where the kernel ran other processes);
# at a load of 10-13: idle 4-10 ms, the whole run 11-25 ms, the stretch 4-22 ms (1-4 s).
# Stalls injected on the GUI thread: kept busy 60 ms in every 80 ms, both fail (p95
# 64-74 ms); 100 ms on each token (the GUI held 1.5-2.6 s) or 300 ms on each index progress
# event, the stretch fails (p95 1.5-2.6 s; 79-293 ms) while the whole run's hardly moves
# (2-4 ms; 10-16 ms): a p95 over ticks counts a stall as one late tick however long it lasts.
ASKED = ("en_wiki_pdfjs_article.pdf",)
INDEXED_MEANWHILE = ("en_paper_dpr_multicolumn.pdf", "en_gov_ca_warn_report.pdf",
                     "en_gov_federal_register_2020-17221.pdf", "zh_report_dbdq_2018q1.pdf")
P95_BOUND_MS = 25.0  # plus 3 x the idle p95
HOLD_LIMIT_S = 600.0  # a hold never outlives a test that failed before letting it go


class HeldIndexing:
    """Wraps the real embedder's ``embed_passages``: the indexer's calls after the first
    ``passing`` wait at the hold (``held`` set) until ``release`` is set. Only calls on the
    facade's index thread are held (the answer finder embeds sentences on the answer's
    thread, which must go on to the first token), so waiting there holds that run between
    two batches, as a slow embedder would, and nothing on the GUI thread."""

    def __init__(self, embed_passages: Callable[[Sequence[str]], Any], passing: int = 1) -> None:
        self._embed = embed_passages
        self._passing = passing
        self.calls = 0
        self.held = threading.Event()
        self.release = threading.Event()

    def __call__(self, texts: Sequence[str]) -> Any:
        if not threading.current_thread().name.startswith("folio-index"):
            return self._embed(texts)
        self.calls += 1
        if self.calls > self._passing and not self.release.is_set():
            self.held.set()
            self.release.wait(HOLD_LIMIT_S)
        return self._embed(texts)


def _folder(dest, shared_dir, names):  # noqa: ANN001, ANN202
    dest.mkdir()
    for name in names:
        (dest / name).symlink_to(shared_dir / "corpus" / name)
    return dest


@pytest.mark.e2e
def test_real_answer_streaming_while_indexing_does_not_stall_the_window(  # noqa: ANN001
    qtbot, qloop, run, tmp_path, shared_dir, small_model_path, embedder_dir, monkeypatch,
) -> None:
    import asyncio

    from desktop_app.ui.conversation.answer_turn import TurnState
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
    hold: HeldIndexing | None = None
    try:
        summary = run(window.open_folder(str(asked)), timeout=600)
        assert summary is not None and summary.documents == 1 and not summary.failed
        embedder = kb.parts.embedder  # the real one, opened by the first folder's run
        hold = HeldIndexing(embedder.embed_passages)
        monkeypatch.setattr(embedder, "embed_passages", hold)

        async def streaming_while_indexing(hold: HeldIndexing) -> dict[str, Any]:
            # One coroutine, so the loop runs throughout: qasync's run_until_complete ends
            # with a pass over the pending events outside any running loop, where a step of
            # a task still streaming would fail (asyncio.Queue.get: "bound to a different
            # event loop").
            probe = LagProbe()
            probe.start()
            await asyncio.sleep(3.0)
            idle = probe.stop()
            probe.start()
            indexing = window.open_folder(str(meanwhile))
            # The second folder is being embedded (its first batch done) when the question
            # goes: it waits at the hold, so it cannot end before the answer's first token.
            await until(lambda: hold.held.is_set() or indexing.done(), timeout=600,
                        what="the second folder's indexing at the hold")
            assert hold.held.is_set() and not indexing.done(), "the second folder never reached its second batch"
            answer = window.ask("Who launched the PDF.js project, and in which year?")
            assert answer is not None
            turn = window.conversation.current_turn()
            await until(lambda: bool(turn.text) or answer.done(), timeout=600, what="the first token")
            overlapped = bool(turn.text) and not indexing.done()
            calls_at_first_token = hold.calls
            both = LagProbe()  # the stretch where both run: from the first token to the answer's end
            both.start()
            hold.release.set()  # the rest of the folder is embedded while the answer streams on
            await answer
            stretch = both.stop()
            embedded_meanwhile = hold.calls - calls_at_first_token
            done = await indexing
            return {"idle": idle, "report": probe.stop(), "stretch": stretch, "turn": turn, "done": done,
                    "overlapped": overlapped, "embedded_meanwhile": embedded_meanwhile}

        measured = run(streaming_while_indexing(hold), timeout=1500)
        idle, report, stretch = measured["idle"], measured["report"], measured["stretch"]
        turn, done = measured["turn"], measured["done"]
        print(f"idle: {idle}\nstreaming while indexing: {report}\nfrom the first token to the"
              f" answer's end: {stretch}; {measured['embedded_meanwhile']} embedder calls began"
              f" meanwhile, {hold.calls} in the folder's run; the answer {len(turn.text)} characters")
        assert measured["overlapped"], turn.error or turn.no_basis or "no token"
        assert turn.state is TurnState.FINISHED and turn.text and turn.sources, turn.error or turn.no_basis
        assert done is not None and not done.failed and not done.cancelled
        assert done.documents == len(ASKED) + len(INDEXED_MEANWHILE)
        assert report.ticks >= 100, report  # the probe ran through both
        assert report.p95_ms < P95_BOUND_MS + 3 * idle.p95_ms, (str(report), f"idle: {idle}")
        # The same bound over the stretch where tokens come while the folder is embedded: a
        # few seconds of a span of minutes, which a GUI thread that waited on each token
        # would stall whole without moving the span's p95.
        assert stretch.p95_ms < P95_BOUND_MS + 3 * idle.p95_ms, (str(stretch), f"idle: {idle}")
    finally:
        if hold is not None:
            hold.release.set()  # never leave the index thread waiting: closing joins it
        window.close()
        run(kb.close(), timeout=60)
