"""Qt fixtures: offscreen platform, a qasync loop the tests run coroutines on, generated
PDFs, the fake facade and a shown main window."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import qasync  # noqa: E402

import desktop_app.ui  # noqa: E402,F401  (first: its PySide6 workaround must apply early)
from tests.ui.fakes import FakeKnowledgeBase  # noqa: E402
from tests.ui.pdfs import GeneratedPdf, make_library  # noqa: E402

T = TypeVar("T")
# Qt's offscreen platform says this whenever a top-level window is shown.
OFFSCREEN_NOISE = ("propagateSizeHints", "does not support raise")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def collect_qt_garbage() -> Iterator[None]:
    """Collect the Qt objects a test left in reference cycles now, on the GUI thread: if a
    worker thread of a later test triggered the collection, Qt would warn that timers
    cannot be stopped from another thread."""
    yield
    gc.collect()


@pytest.fixture(autouse=True, scope="session")
def freeze_startup_objects() -> None:
    """Move what the imports created out of the collector's sight: keeps the collection
    after each test cheap (0.1 s -> a few ms)."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def qloop(qapp) -> Iterator[qasync.QEventLoop]:  # noqa: ANN001
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop
    try:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=2))
    finally:
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def run(qloop: qasync.QEventLoop) -> Callable[..., Any]:
    """``run(coro, timeout=10)``: drive a coroutine on the Qt loop and return its result."""

    def runner(coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        return qloop.run_until_complete(asyncio.wait_for(coro, timeout))

    return runner


async def until(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    """Wait on the event loop until ``predicate()`` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.005)


@pytest.fixture
def library(tmp_path: Path, qapp) -> dict[str, GeneratedPdf]:  # noqa: ANN001
    return make_library(tmp_path / "docs")


@pytest.fixture
def fake_kb() -> FakeKnowledgeBase:
    return FakeKnowledgeBase()


@pytest.fixture
def window(qtbot, qloop, fake_kb):  # noqa: ANN001, ANN201
    from desktop_app.ui.window.main_window import MainWindow

    win = MainWindow(fake_kb)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
    qloop.run_until_complete(asyncio.sleep(0.01))
