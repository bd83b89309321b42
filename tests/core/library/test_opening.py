"""Why a library would not open, told truly: not a library, damaged, newer, held by a
named process (a real second one), or a stale owner file that must not be believed."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from desktop_app.core.errors import (
    DiskFullError,
    LibraryBusyError,
    LibraryDamagedError,
    LibraryTooNewError,
    NotALibraryError,
    NotWritableError,
    io_error,
)
from desktop_app.core.library import opening, repair
from desktop_app.core.library.store import Store

REPO = Path(__file__).resolve().parents[3]


def a_library(path: Path, rows: int = 30000) -> None:
    """A real library with enough rows to span many blocks."""
    store = Store(path)
    store._cursor().execute(
        "INSERT INTO pages SELECT 'doc' || i, 1, '1', 1, 1, 0, 'ok', md5(random()::VARCHAR) || md5(random()::VARCHAR), 0"
        " FROM range(?) t(i)",
        [rows])
    store.close()


def test_random_bytes_are_not_a_library_and_not_in_use(tmp_path: Path) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(os.urandom(5000))
    with pytest.raises(NotALibraryError) as failure:
        Store(junk)
    text = str(failure.value)
    assert "not a DuckDB database" in text and "in use" not in text and "another" not in text
    assert not (tmp_path / "junk.answers.sqlite").exists()  # nothing made beside a foreign file
    assert junk.read_bytes() == junk.read_bytes()  # untouched


def test_a_folder_at_the_path_is_not_a_library(tmp_path: Path) -> None:
    with pytest.raises(NotALibraryError, match="is a folder"):
        Store(tmp_path)


def test_a_truncated_library_is_damaged_and_says_how_to_repair(tmp_path: Path) -> None:
    db = tmp_path / "library.duckdb"
    a_library(db)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    problem = repair.check(db)  # reads every table whole
    assert isinstance(problem, LibraryDamagedError)
    assert "Could not read enough bytes" in str(problem)
    # The same words whenever the damage is met: at opening, or at a later read.
    store = None
    try:
        store = Store(db)
        store._query("SELECT sum(length(text)) FROM pages")
    except Exception as exc:  # noqa: BLE001 - classified below
        met = opening.classify(exc, db, "reading the library")
    else:
        pytest.fail("the truncated library read whole")
    finally:
        if store is not None:
            store.close()
    assert isinstance(met, LibraryDamagedError)
    text = str(met)
    assert "damaged" in text and "folio repair" in text and "in use" not in text
    assert met.path == str(db)


def test_a_library_from_a_newer_folio_is_named_so(tmp_path: Path) -> None:
    db = tmp_path / "library.duckdb"
    Store(db).close()
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO schema_version VALUES (99)")
    con.close()
    with pytest.raises(LibraryTooNewError, match="newer Folio"):
        Store(db)


HOLDER = """
import sys, time
from desktop_app.core.library.store import Store
store = Store(sys.argv[1])
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_process_is_told_who_holds_the_library(tmp_path: Path) -> None:
    db = tmp_path / "library.duckdb"
    Store(db).close()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True,
                              env=env, cwd=REPO)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LibraryBusyError) as failure:
            Store(db)
        text = str(failure.value)
        assert f"process {holder.pid}" in text, text
        assert "python" in failure.value.holder.lower() or "-c" in failure.value.holder
        assert "history" in text  # what still works
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    # The holder died without closing: its owner file is stale and the library opens.
    assert json.loads(opening.owner_path(db).read_text())["pid"] == holder.pid
    store = Store(db)
    assert json.loads(opening.owner_path(db).read_text())["pid"] == os.getpid()
    store.close()
    assert not opening.owner_path(db).exists()


def test_a_stale_owner_file_is_never_reported(tmp_path: Path) -> None:
    db = tmp_path / "library.duckdb"
    Store(db).close()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    opening.owner_path(db).write_text(json.dumps({"pid": dead.pid, "command": "folio index /x", "since": 0}))
    assert opening.read_owner(db) is None and not opening.owner_path(db).exists()
    assert opening.holder_text(db, "Conflicting lock is held in /usr/bin/python3 (PID 1)") != "folio index /x"


def test_the_process_is_described_as_a_person_knows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/lib/folio/desktop_app/__main__.py", "index", "/home/ann/Papers"])
    assert opening.describe_process() == "folio index /home/ann/Papers"
    monkeypatch.setattr(sys, "argv", ["/usr/bin/folio"])
    assert opening.describe_process() == "the Folio window"


@pytest.mark.parametrize(("error", "kind", "words"), [
    (OSError(errno.ENOSPC, "No space left on device"), DiskFullError, "MB free on"),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), DiskFullError, "MB free on"),
    (OSError(errno.EACCES, "Permission denied"), NotWritableError, "permission denied"),
    (OSError(errno.EROFS, "Read-only file system"), NotWritableError, "read-only"),
    (RuntimeError('IO Error: Could not write file "x.wal": No space left on device'), DiskFullError, "resumes"),
    (RuntimeError('IO Error: Cannot open file "x": Permission denied'), NotWritableError, "write access"),
])
def test_the_environments_io_errors_are_known_with_their_fix(tmp_path: Path, error: Exception,
                                                              kind: type, words: str) -> None:
    known = io_error(error, tmp_path / "library.duckdb", "indexing")
    assert isinstance(known, kind) and words in str(known)
    assert io_error(ValueError("a bug"), tmp_path, "indexing") is None
