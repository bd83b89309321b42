"""The parse pool keeps an index run going whatever a file does to its reader: slow files
time out, crashed readers are replaced, and cancelling stops the run at once."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
import zlib
from pathlib import Path

import pytest

from desktop_app.core.ingest.parse_pool import ParsePool, parse_many
from desktop_app.core.types import DocStatus
from tests.pdfgen import write_pdf
from tests.timing import within


def write_heavy_pdf(path: Path, operations: int = 4_000_000, pages: int = 1) -> Path:
    """``pages`` pages sharing one (small, compressed) content stream of ``operations`` text
    operators: pypdf parses each page for long (4M operators: many seconds and gigabytes)."""
    content = b"BT /F1 12 Tf 72 720 Td " + b"(ab) Tj " * operations + b"ET"
    stream = zlib.compress(content, 9)
    font, contents = 3 + pages, 4 + pages
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        *[b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
          b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>" % (font, contents)] * pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def parse_workers() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name == "folio-parse"]


@pytest.fixture
def small_pdfs(tmp_path: Path) -> list[Path]:
    return [
        write_pdf(tmp_path / f"note{i}.pdf", [[f"Note number {i} says hello."]]) for i in range(4)
    ]


def test_every_file_gets_one_result(tmp_path: Path, small_pdfs: list[Path]) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 garbage")
    paths = [str(p) for p in [*small_pdfs, broken, tmp_path / "missing.pdf"]]
    results = {d.path: d for d in parse_many(paths, timeout_s=60, workers=2)}
    assert set(results) == set(paths)
    for pdf in small_pdfs:
        assert results[str(pdf)].status == DocStatus.INDEXED
        assert "says hello" in results[str(pdf)].pages[0].text
    assert results[str(broken)].status == DocStatus.UNREADABLE
    assert results[str(tmp_path / "missing.pdf")].status == DocStatus.UNREADABLE
    assert parse_workers() == []


def cancel_heavy_run(tmp_path: Path, small_pdfs: list[Path]) -> float:
    """Seconds from the cancel to the end of a run started on a heavy file and small ones."""
    heavy = write_heavy_pdf(tmp_path / "heavy.pdf")
    cancel_at = time.monotonic() + 1.5
    results = list(
        parse_many(
            [str(heavy), *map(str, small_pdfs)],
            timeout_s=120,
            workers=1,
            should_cancel=lambda: time.monotonic() >= cancel_at,
        )
    )
    stopped_after = time.monotonic() - cancel_at
    assert all(d.path != str(heavy) for d in results)
    assert parse_workers() == []
    return stopped_after


def test_cancel_stops_the_run_within_a_second(tmp_path: Path, small_pdfs: list[Path]) -> None:
    # Within 1 s on a quiet machine; a loaded one gets up to 3 tries.
    within(lambda: cancel_heavy_run(tmp_path, small_pdfs), 1.0)


@pytest.mark.slow
def test_a_slow_file_times_out_and_the_run_goes_on(tmp_path: Path, small_pdfs: list[Path]) -> None:
    heavy = write_heavy_pdf(tmp_path / "heavy.pdf")
    # Calibration in the same test: the small files alone, through a reader process started
    # for them, on this machine under its present load.
    started = time.monotonic()
    assert len(list(parse_many(list(map(str, small_pdfs)), timeout_s=60, workers=1))) == len(small_pdfs)
    calibration = time.monotonic() - started
    started = time.monotonic()
    results = {
        d.path: d for d in parse_many([str(heavy), *map(str, small_pdfs)], timeout_s=2.0, workers=1)
    }
    seconds = time.monotonic() - started
    # The 2 s limit, then a new reader for the rest: about 2 s + 2 calibrations, far under
    # the heavy file's own many seconds had the run waited for it.
    assert seconds < 2.0 + 4 * calibration, (seconds, calibration)
    assert results[str(heavy)].status == DocStatus.TIMED_OUT
    assert "longer than 2 s" in results[str(heavy)].error
    assert results[str(heavy)].doc_id  # still identified, so the library can list it
    assert all(results[str(p)].status == DocStatus.INDEXED for p in small_pdfs)


def test_a_long_document_gets_more_time_by_its_page_count(
    tmp_path: Path, small_pdfs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit grows by the pages the reader is about to read (beyond PAGES_IN_LIMIT):
    the same long file times out without that allowance and is read with it."""
    import desktop_app.core.ingest.parse_pool as parse_pool

    long = write_heavy_pdf(tmp_path / "long.pdf", operations=8_000, pages=24)
    monkeypatch.setattr(parse_pool, "PAGES_IN_LIMIT", 0)
    with ParsePool(workers=1, timeout_s=1.5) as pool:
        assert [d.status for d in pool.parse_many([str(small_pdfs[0])])] == [DocStatus.INDEXED]
        monkeypatch.setattr(parse_pool, "TEXT_SECONDS_PER_PAGE", 0.0)
        [short] = pool.parse_many([str(long)])
        assert short.status == DocStatus.TIMED_OUT and "longer than 1.5 s" in short.error
        monkeypatch.setattr(parse_pool, "TEXT_SECONDS_PER_PAGE", 10.0)
        [read] = pool.parse_many([str(long)])
    assert read.status == DocStatus.INDEXED and read.page_count == 24


@pytest.mark.slow
def test_a_crashed_reader_is_reported_and_replaced(tmp_path: Path, small_pdfs: list[Path]) -> None:
    heavy = write_heavy_pdf(tmp_path / "heavy.pdf")

    def kill_the_reader() -> None:
        time.sleep(1.5)
        for worker in parse_workers():
            os.kill(worker.pid or 0, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_reader)
    killer.start()
    results = {
        d.path: d for d in parse_many([str(heavy), *map(str, small_pdfs)], timeout_s=120, workers=1)
    }
    killer.join()
    assert results[str(heavy)].status == DocStatus.UNREADABLE
    assert "crashed" in results[str(heavy)].error and "SIGKILL" in results[str(heavy)].error
    assert all(results[str(p)].status == DocStatus.INDEXED for p in small_pdfs)


@pytest.mark.slow
def test_a_file_that_needs_too_much_memory_is_unreadable(
    tmp_path: Path, small_pdfs: list[Path]
) -> None:
    heavy = write_heavy_pdf(tmp_path / "heavy.pdf")
    with ParsePool(workers=1, timeout_s=120, memory_limit_mb=250) as pool:
        results = {d.path: d for d in pool.parse_many([str(heavy), *map(str, small_pdfs)])}
    assert results[str(heavy)].status == DocStatus.UNREADABLE
    assert "memory" in results[str(heavy)].error
    assert all(results[str(p)].status == DocStatus.INDEXED for p in small_pdfs)
    assert parse_workers() == []


def test_a_pool_reuses_its_workers_across_runs(small_pdfs: list[Path]) -> None:
    with ParsePool(workers=1, timeout_s=60) as pool:
        first = [d.status for d in pool.parse_many(map(str, small_pdfs[:2]))]
        workers = parse_workers()
        second = [d.status for d in pool.parse_many(map(str, small_pdfs[2:]))]
        assert parse_workers() == workers  # the same process read both batches
    assert first == second == [DocStatus.INDEXED] * 2
    assert parse_workers() == []
