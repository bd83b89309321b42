"""Opening the library file, and telling apart why it would not open. Qt-free.

DuckDB lets one process hold a file for writing, and no other process may open it then,
not even read-only. Its errors are told apart here so that a person reads what is true:

- another process holds it: named by the owner file the holder wrote beside the library
  (``<library>.owner``: pid, command line, since when) and by the lock error itself (which
  names the holder's pid); an owner file whose process is gone is stale and ignored;
- the file is no DuckDB database at all: its header lacks DuckDB's magic bytes;
- it is a DuckDB file that cannot be read (truncated, overwritten): damaged, and
  ``folio repair`` moves it aside and rebuilds;
- it was written by a newer DuckDB or Folio;
- the disk, the folder or the file refuses (full, read-only, permission): errors.io_error;
  a library that exists there is then opened read-only (:func:`connect_for_use`), so
  search and history still work and only writes say why they cannot.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from desktop_app.core.errors import (
    KnownError,
    LibraryBusyError,
    LibraryDamagedError,
    LibraryTooNewError,
    NotALibraryError,
    NotWritableError,
    io_error,
)

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

logger = logging.getLogger(__name__)

# DuckDB's main header: an 8-byte checksum, then these magic bytes (storage format 1.x).
DUCKDB_MAGIC = b"DUCK"
MAGIC_OFFSET = 8
REPAIR_HINT = ("Run `folio repair` (or choose Move aside and rebuild in the window): the file is kept "
               "as {name}.damaged-<time>, the index is rebuilt from your documents, and the saved "
               "answers, kept in their own file, stay.")
# What DuckDB says of a file it cannot read back (truncated, overwritten, torn).
_DAMAGE_WORDS = ("could not read enough bytes", "checksum", "corrupt", "serialization error",
                 "not a valid duckdb", "invalid block", "failed to load metadata", "internal error",
                 "unexpected end")


def owner_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".owner")


def describe_process() -> str:
    """This process as a person would recognise it: "folio index ~/Papers", "the Folio window"."""
    argv = list(sys.argv)
    first = Path(argv[0]).name if argv else ""
    if first in ("-c", ""):
        return _command_of(os.getpid()) or "a Python program"
    if first in ("__main__.py", "folio", "folio.exe", "-m") or first.startswith("desktop_app"):
        rest = argv[1:]
        return "folio " + " ".join(rest) if rest else "the Folio window"
    return " ".join(argv) or "a Python process"


def has_duckdb_header(path: Path) -> bool | None:
    """True if ``path`` starts like a DuckDB database, False if not, None if it is empty
    or cannot be read (DuckDB makes a new database in an empty file)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError:
        return None
    if not head:
        return None
    return head[MAGIC_OFFSET:] == DUCKDB_MAGIC


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except OSError:
        return False
    return True


def _command_of(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part)


class OwnerRecord(TypedDict, total=False):
    """The owner file: which process holds the library, since when, running what."""

    pid: int
    since: float
    command: str


def read_owner(db_path: Path) -> OwnerRecord | None:
    """The owner file's record if its process is still alive; a stale one is removed."""
    path = owner_path(db_path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        logger.info("unreadable owner file %s ignored", path)
        return None
    if pid != os.getpid() and not _pid_alive(pid):
        logger.info("stale owner file %s (process %d is gone) removed", path, pid)
        try:
            path.unlink()
        except OSError:
            pass
        return None
    owner: OwnerRecord = record
    return owner


def write_owner(db_path: Path) -> None:
    """Say who holds the library (best effort: a read-only folder has none)."""
    from desktop_app.core.paths import write_atomic

    record = {"pid": os.getpid(), "command": describe_process(), "since": time.time()}
    try:
        write_atomic(owner_path(db_path), json.dumps(record).encode("utf-8"), sync=False)
    except OSError as exc:
        logger.info("no owner file for %s: %s", db_path, exc)


def remove_owner(db_path: Path) -> None:
    path = owner_path(db_path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if int(record.get("pid", -1)) == os.getpid():
            path.unlink()
    except (OSError, ValueError, TypeError, AttributeError):
        pass


def holder_text(db_path: Path, lock_message: str) -> str:
    """Who holds the library: "folio index /home/ann/Papers (process 4242, since 17:31)"."""
    owner = read_owner(db_path)
    match = re.search(r"PID (\d+)", lock_message)
    locked_by = int(match.group(1)) if match else None
    if owner is not None and (locked_by is None or int(owner["pid"]) == locked_by):
        since = datetime.fromtimestamp(float(owner.get("since", 0))).strftime("%H:%M")
        return f"{owner.get('command') or 'another Folio'} (process {owner['pid']}, since {since})"
    if locked_by is not None:
        command = _command_of(locked_by)
        return f"{command} (process {locked_by})" if command else f"process {locked_by}"
    return ""


def not_a_library(db_path: Path) -> NotALibraryError:
    return NotALibraryError(
        f"{db_path} is not a Folio library: it is not a DuckDB database file.",
        "Point --db (or Settings ▸ Data folder) at a library, or move this file away and "
        "Folio starts a new library there.",
        db_path,
    )


def classify(exc: BaseException, db_path: Path, doing: str) -> KnownError | None:
    """The KnownError for a DuckDB failure on the library ``db_path`` while ``doing``;
    None when it is none of the known kinds (a bug)."""
    if isinstance(exc, KnownError):
        return exc
    text = str(exc)
    lower = text.lower()
    name = db_path.name
    if "could not set lock" in lower or "conflicting lock" in lower:
        holder = holder_text(db_path, text)
        who = f"by {holder}" if holder else "by another program"
        return LibraryBusyError(
            f"The library {db_path} is in use {who}.",
            "Saved answers and history can be read meanwhile; search and indexing need it: "
            "wait until that finishes or close it, or pick another library with --db.",
            db_path, holder,
        )
    header = has_duckdb_header(db_path) if db_path.is_file() else None
    if header is False:
        return not_a_library(db_path)
    known = io_error(exc, db_path, doing)
    if known is not None:
        return known
    if "trying to read a database file with version" in lower or "newer version" in lower:
        return LibraryTooNewError(
            f"The library {db_path} was written by a newer Folio ({text.splitlines()[0]}).",
            "Update Folio, or open another library with --db.", db_path,
        )
    if any(word in lower for word in _DAMAGE_WORDS) or (header and "ioexception" in type(exc).__name__.lower()):
        return LibraryDamagedError(
            f"The library {db_path} is damaged: {text.splitlines()[0] if text else type(exc).__name__}.",
            REPAIR_HINT.format(name=name), db_path,
        )
    if "invalidated" in lower:  # an earlier fatal error (often a full disk) in this process
        return KnownError(
            f"The library {db_path} stopped after an earlier write failed.",
            "Free some space if the disk is full and start Folio again: what was committed is kept.",
        )
    return None


# Every table of the index, read whole by :func:`read_whole`: DuckDB checks each block's
# checksum as it reads it, so a torn or truncated block shows up there.
TABLES = ("documents", "files", "pages", "chunks", "postings", "embeddings", "ocr_lines")


def read_whole(con: DuckDBPyConnection) -> None:
    """Read every row of every table of the index (raises DuckDB's error on damage)."""
    tables = {str(r[0]) for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    for table in TABLES:
        if table in tables:
            con.execute(f"SELECT count(*), sum(hash(t)) FROM {table} t").fetchall()  # noqa: S608 - fixed names


def connect(db_path: Path, read_only: bool = False) -> DuckDBPyConnection:
    """Open the library's DuckDB file; every failure Folio knows becomes its KnownError."""
    import duckdb

    if db_path.is_dir():
        raise NotALibraryError(f"{db_path} is a folder, not a library file.",
                               "Point --db at a file (e.g. library.duckdb).", db_path)
    if db_path.is_file() and has_duckdb_header(db_path) is False:
        raise not_a_library(db_path)
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        return duckdb.connect(str(db_path), read_only=read_only)
    except (duckdb.Error, OSError) as exc:
        known = classify(exc, db_path, "opening the library")
        if known is None:
            raise
        logger.info("opening %s failed: %s", db_path, exc)
        raise known from exc


def connect_for_use(db_path: Path) -> tuple[DuckDBPyConnection, bool]:
    """Open the library to write it, or, when its disk or folder refuses writes (a
    read-only share, a permission), to read it: search and history still work then.
    Returns the connection and whether it is read-only."""
    try:
        return connect(db_path), False
    except NotWritableError:
        if not db_path.is_file():
            raise
        con = connect(db_path, read_only=True)
        logger.warning("the library %s cannot be written; opened it read-only", db_path)
        return con, True
