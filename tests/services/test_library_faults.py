"""Every write site meets a full disk (an injected ENOSPC, and a real small tmpfs): the
facade raises the DiskFullError that names the free space and the fix, the library keeps
its previous good state, and once space is back the next run equals a clean one. Also:
history while another process holds the index, and the repair path over fake models."""

from __future__ import annotations

import asyncio
import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from desktop_app.core.errors import (
    DiskFullError,
    LibraryBusyError,
    LibraryDamagedError,
    NotWritableError,
)
from desktop_app.core.library.store import Store
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFailed, AnswerFinished, IndexSummary, LibraryMovedAside
from desktop_app.services.knowledge_base import KnowledgeBase
from tests.fakes import FakeEmbedder, FakeGenerator
from tests.pdfgen import write_pdf
from tests.small_disk import small_disk

REPO = Path(__file__).resolve().parents[2]
NO_SPACE = 'IO Error: Could not write file "library.duckdb.wal": No space left on device'


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


def call(coro: Any) -> Any:
    return asyncio.run(coro)


def make_folder(root: Path, version: int = 1) -> Path:
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    for n in range(4):
        write_pdf(docs / f"doc{n}.pdf", [[f"Document {n} page 1", f"The pump seal lasts {1000 * n + version} hours."],
                                         [f"Document {n} page 2", "Lubricate the bearings every 500 hours."]],
                  title=f"Document {n}")
    return docs


def make_kb(db: Path, answers: list[str] | None = None) -> KnowledgeBase:
    return KnowledgeBase(db, Settings(judge=False), embedder=FakeEmbedder(),
                         generator=FakeGenerator(answers or []))


def content(db: Path) -> dict[str, Any]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            "docs": con.execute("SELECT doc_id, path, chunks FROM documents WHERE NOT superseded ORDER BY doc_id").fetchall(),
            "chunks": con.execute("SELECT chunk_id, text FROM chunks ORDER BY chunk_id").fetchall(),
            "postings": con.execute("SELECT count(*), sum(tf) FROM postings").fetchall(),
            "files": con.execute("SELECT path, doc_id, status FROM files ORDER BY path").fetchall(),
        }
    finally:
        con.close()


class FullDiskCursor:
    """A DuckDB cursor whose statement matching ``site`` fails as DuckDB fails on ENOSPC."""

    def __init__(self, cursor: Any, site: str) -> None:
        self.cursor, self.site = cursor, site

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.lstrip().startswith(self.site):
            raise duckdb.IOException(NO_SPACE)
        return self.cursor.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cursor, name)


@pytest.mark.parametrize("site", ["INSERT INTO chunks", "INSERT INTO postings", "INSERT INTO pages",
                                  "INSERT INTO files", "DELETE FROM files", "COMMIT"])
def test_a_full_disk_at_each_write_of_a_replaced_document(site: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path)
    kb = make_kb(tmp_path / "library.duckdb")
    collect(kb.library.index(folder))
    call(kb.close())
    before = content(tmp_path / "library.duckdb")
    make_folder(tmp_path, version=2)  # every document changes: each is replaced
    kb = make_kb(tmp_path / "library.duckdb")
    real = Store._cursor
    monkeypatch.setattr(Store, "_cursor", lambda self: FullDiskCursor(real(self), site))
    with pytest.raises(DiskFullError) as failure:
        collect(kb.library.index(folder))
    assert "MB free on" in str(failure.value) and "resumes" in str(failure.value)
    call(kb.close())
    assert content(tmp_path / "library.duckdb") == before  # the previous good state, whole
    monkeypatch.setattr(Store, "_cursor", real)
    kb = make_kb(tmp_path / "library.duckdb")
    collect(kb.library.index(folder))
    call(kb.close())
    clean = make_kb(tmp_path / "clean.duckdb")
    collect(clean.library.index(folder))
    call(clean.close())
    resumed, fresh = content(tmp_path / "library.duckdb"), content(tmp_path / "clean.duckdb")
    assert resumed["chunks"] == fresh["chunks"] and resumed["postings"] == fresh["postings"]
    assert [d[:1] + d[2:] for d in resumed["docs"]] == [d[:1] + d[2:] for d in fresh["docs"]]


def test_a_full_disk_while_saving_an_answer_is_told_and_loses_no_saved_answer(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    with small_disk(tmp_path / "disk", "4m") as disk:
        kb = make_kb(disk / "library.duckdb", ["The seal lasts 1001 hours [1].", "Every 500 hours [1]."])
        collect(kb.library.index(folder))
        first = collect(kb.answers.ask("How long does the seal last?"))
        assert not [e for e in first if isinstance(e, AnswerFailed)]
        filler = disk / "filler"
        with filler.open("wb") as handle:  # fill the disk to the last byte
            try:
                while True:
                    handle.write(b"\0" * 65536)
                    handle.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        events = collect(kb.answers.ask("How often are the bearings lubricated?"))
        finished = [e for e in events if isinstance(e, AnswerFinished)]
        failed = [e for e in events if isinstance(e, AnswerFailed)]
        assert finished and finished[0].text == "Every 500 hours [1]."  # shown all the same
        assert len(failed) == 1 and failed[0].known and events[-1] is failed[0]
        assert "not saved" in failed[0].error and f"MB free on {disk}" in failed[0].error
        history = call(kb.answers.history())
        assert [h.question for h in history] == ["How long does the seal last?"]
        filler.unlink()
        kb.models._generator = FakeGenerator(["Every 500 hours [1]."])
        collect(kb.answers.ask("How often are the bearings lubricated?"))
        assert len(call(kb.answers.history())) == 2
        call(kb.close())


HOLDER = """
import sys, time
from desktop_app.core.library.store import Store
store = Store(sys.argv[1])
print("held", flush=True)
time.sleep(60)
"""


def test_history_answers_while_another_process_holds_the_index(tmp_path: Path) -> None:
    kb = make_kb(tmp_path / "library.duckdb", ["The seal lasts 1001 hours [1]."])
    collect(kb.library.index(make_folder(tmp_path)))
    collect(kb.answers.ask("How long does the seal last?"))
    call(kb.close())
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "library.duckdb")], text=True,
                          stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=REPO) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            kb = make_kb(tmp_path / "library.duckdb")
            history = call(kb.answers.history())
            assert [h.question for h in history] == ["How long does the seal last?"]
            record = call(kb.answers.answer_record(history[0].answer_id))
            assert record is not None and record.text == "The seal lasts 1001 hours [1]."
            with pytest.raises(LibraryBusyError, match=f"process {holder.pid}"):
                call(kb.library.search("seal"))
            call(kb.close())
        finally:
            holder.kill()


def test_repair_moves_a_damaged_library_aside_and_brings_search_and_answers_back(tmp_path: Path) -> None:
    db = tmp_path / "library.duckdb"
    folder = make_folder(tmp_path)
    kb = make_kb(db, ["The seal lasts 1001 hours [1]."])
    collect(kb.library.index(folder))
    collect(kb.answers.ask("How long does the seal last?"))
    call(kb.close())
    db.write_bytes(os.urandom(64) + db.read_bytes()[64:])  # the header overwritten
    kb = make_kb(db)
    problem = call(kb.library.problem())
    assert problem is not None and "not a Folio library" in str(problem)
    events = collect(kb.library.repair())
    moved = events[0]
    assert isinstance(moved, LibraryMovedAside) and moved.folders == (str(folder),) and moved.answers == 1
    assert Path(moved.moved_to).exists() and Path(moved.moved_to).name.startswith("library.duckdb.damaged-")
    assert isinstance(events[-1], IndexSummary) and events[-1].documents == 4
    assert call(kb.library.problem()) is None
    assert "1001 hours" in call(kb.library.search("seal lasts 1001 hours", 1))[0].text
    assert [h.question for h in call(kb.answers.history())] == ["How long does the seal last?"]
    with pytest.raises(Exception, match="nothing to repair"):
        collect(kb.library.repair())
    call(kb.close())


def test_a_damaged_answers_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "library.answers.sqlite").write_bytes(b"SQLite format 3\0" + os.urandom(4000))
    kb = make_kb(tmp_path / "library.duckdb")
    with pytest.raises(LibraryDamagedError, match="saved answers"):
        call(kb.answers.history())
    call(kb.close())
    assert sqlite3.sqlite_version  # the stdlib's SQLite, nothing installed


def test_a_library_on_a_read_only_disk_still_searches_and_refuses_to_index(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    with small_disk(tmp_path / "disk", "8m") as disk:
        kb = make_kb(disk / "library.duckdb", ["The seal lasts 1001 hours [1]."])
        collect(kb.library.index(folder))
        collect(kb.answers.ask("How long does the seal last?"))
        call(kb.close())
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        kb = make_kb(disk / "library.duckdb", ["Every 500 hours [1]."])
        assert "1001 hours" in call(kb.library.search("seal lasts 1001 hours", 1))[0].text  # read-only, it reads
        assert [h.question for h in call(kb.answers.history())] == ["How long does the seal last?"]
        make_folder(tmp_path, version=2)
        with pytest.raises(NotWritableError, match="read-only disk or folder"):
            collect(kb.library.index(folder))
        events = collect(kb.answers.ask("How often are the bearings lubricated?"))
        failed = [e for e in events if isinstance(e, AnswerFailed)]
        assert failed and "not saved" in failed[0].error and "read-only" in failed[0].error
        call(kb.close())
        with pytest.raises(NotWritableError, match="read-only disk or folder"):
            Store(disk / "elsewhere" / "library.duckdb")  # a new library cannot be made there
