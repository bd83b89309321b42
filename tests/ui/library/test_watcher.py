"""The open folder is watched: added, changed and removed PDFs are re-indexed in the
background, once per burst of changes, never interrupting a run that is going."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from desktop_app.core.ingest.changes import scan_folder
from desktop_app.ui.library.watcher import FolderWatcher, snapshot
from tests.pdfgen import write_pdf
from tests.ui.conftest import until

FAST = {"debounce_ms": 150, "poll_ms": 100}


def quick(window, debounce_ms: int = FAST["debounce_ms"]) -> None:  # noqa: ANN001
    window.watcher._debounce.setInterval(debounce_ms)  # noqa: SLF001
    window.watcher._poll.setInterval(FAST["poll_ms"])  # noqa: SLF001


def fired(timer) -> list[int]:  # noqa: ANN001
    """A list that grows by one each time ``timer`` fires from now on."""
    seen: list[int] = []
    timer.timeout.connect(lambda: seen.append(1))
    return seen


async def quiet(watcher: FolderWatcher, polls: int = 5) -> None:
    """Wait until the watcher has looked at the folder ``polls`` more times and no debounce
    is pending: "nothing more happens" decided by its own timers, not by a sleep that a
    busy machine can outlast."""
    seen: list[int] = []

    def count() -> None:
        seen.append(1)

    watcher._poll.timeout.connect(count)  # noqa: SLF001
    try:
        await until(lambda: len(seen) >= polls and not watcher._debounce.isActive(),  # noqa: SLF001
                    timeout=60, what=f"{polls} quiet polls")
    finally:
        watcher._poll.timeout.disconnect(count)  # noqa: SLF001


def test_a_pdf_added_to_the_open_folder_appears_in_the_library(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = library["manual"].path.parent
    quick(window)
    run(window.open_folder(str(folder)))
    assert len(fake_kb.index_calls) == 1
    write_pdf(folder / "new.pdf", [["Freshly added page about valves."]], title="New")
    run(until(lambda: len(fake_kb.index_calls) == 2, what="a background re-index"))
    run(until(lambda: window.index_task.done(), what="the re-index to finish"))
    names = {Path(r.path).name for r in window.library.rows()}
    assert "new.pdf" in names
    assert fake_kb.cancel_calls == 0


def test_a_burst_of_changes_gives_one_run_after_things_are_quiet(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = library["manual"].path.parent
    quick(window, debounce_ms=500)  # well above the gaps below, even on a busy machine
    run(window.open_folder(str(folder)))

    async def burst() -> None:
        for number in range(5):
            write_pdf(folder / f"copy{number}.pdf", [[f"Copied page {number}."]])
            await asyncio.sleep(0.02)
        (folder / "guide.pdf").unlink()
        await asyncio.sleep(0.02)
        shutil.move(folder / "zhibao.pdf", folder / "renamed.pdf")

    run(burst())
    run(until(lambda: len(fake_kb.index_calls) == 2, what="a background re-index"))
    run(until(lambda: window.index_task.done(), what="the re-index to finish"))
    run(quiet(window.watcher), timeout=70)  # many polls, no debounce pending: nothing more happens
    assert len(fake_kb.index_calls) == 2


def test_a_change_during_a_run_waits_for_it_and_queues_one_more(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = library["manual"].path.parent
    quick(window)
    fake_kb.index_gate = asyncio.Event()  # hold the first run after its first file
    task = window.open_folder(str(folder))
    run(until(lambda: len(fake_kb.index_calls) == 1, what="the first run"))
    write_pdf(folder / "late.pdf", [["Arrived while indexing."]])
    write_pdf(folder / "later.pdf", [["Also arrived while indexing."]])
    run(until(lambda: window.watcher.pending, what="the change to be queued"))
    settled = fired(window.watcher._debounce)  # noqa: SLF001
    # Twice more the watcher found the change while the run held, and queued it again.
    run(until(lambda: len(settled) >= 2, timeout=60, what="two more settles"), timeout=70)
    assert window.watcher.pending
    assert len(fake_kb.index_calls) == 1 and not task.done()  # not interrupted, not doubled
    assert fake_kb.cancel_calls == 0
    fake_kb.index_gate.set()
    run(until(lambda: len(fake_kb.index_calls) == 2, what="the queued run"))
    run(until(lambda: window.index_task.done(), what="the queued run to finish"))
    run(quiet(window.watcher), timeout=70)
    assert len(fake_kb.index_calls) == 2
    assert {"late.pdf", "later.pdf"} <= {Path(r.path).name for r in window.library.rows()}


def test_files_that_are_not_documents_do_not_trigger_a_run(window, fake_kb, library, run) -> None:  # noqa: ANN001
    folder = library["manual"].path.parent
    quick(window)
    run(window.open_folder(str(folder)))
    (folder / "photo.jpg").write_bytes(b"not a document")
    (folder / "~$report.docx").write_bytes(b"an Office lock file")
    (folder / ".hidden.pdf").write_bytes(b"%PDF-1.4 hidden")
    (folder / "sub").mkdir()
    run(quiet(window.watcher), timeout=70)
    assert len(fake_kb.index_calls) == 1
    write_pdf(folder / "sub" / "deep.pdf", [["A PDF in a new subfolder."]])
    run(until(lambda: len(fake_kb.index_calls) == 2, what="a re-index for the subfolder's PDF"))


def test_polling_alone_sees_a_file_changed_in_place(qtbot, qloop, tmp_path, run) -> None:  # noqa: ANN001
    """Without file-system events (a network share), the poll still finds the change."""
    folder = tmp_path / "docs"
    folder.mkdir()
    pdf = write_pdf(folder / "a.pdf", [["First version."]])
    calls: list[str] = []
    watcher = FolderWatcher(lambda: calls.append("run"), lambda: False, use_events=False, **FAST)
    watcher.watch(str(folder))
    run(quiet(watcher), timeout=70)
    assert calls == []
    stat = pdf.stat()
    os.utime(pdf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    run(until(lambda: calls == ["run"], what="the poll to notice the new mtime"))
    pdf.unlink()
    run(until(lambda: calls == ["run", "run"], what="the poll to notice the removal"))
    watcher.stop()
    # Stopped: neither timer can fire again, so nothing the folder does can start a run.
    assert not watcher._poll.isActive() and not watcher._debounce.isActive()  # noqa: SLF001
    write_pdf(folder / "b.pdf", [["After stop."]])
    run(asyncio.sleep(0))
    assert not watcher._poll.isActive() and not watcher._debounce.isActive()  # noqa: SLF001
    assert calls == ["run", "run"]


def test_snapshot_lists_documents_as_the_indexer_does(tmp_path: Path) -> None:
    (tmp_path / "a.PDF").write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.pdf").write_bytes(b"yy")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.pdf").write_bytes(b"z")
    (tmp_path / "d.txt").write_bytes(b"z")
    (tmp_path / "e.jpg").write_bytes(b"z")
    (tmp_path / "sub" / "f.docx").write_bytes(b"zzz")
    pdfs, dirs = snapshot(str(tmp_path))
    assert {Path(p).name: size for p, (size, _) in pdfs.items()} == {"a.PDF": 1, "b.pdf": 2, "d.txt": 1,
                                                                      "f.docx": 3}
    assert {p.name for p in scan_folder(tmp_path)} == {"a.PDF", "b.pdf", "d.txt", "f.docx"}
    assert sorted(Path(d).name for d in dirs) == sorted([tmp_path.name, "sub"])
