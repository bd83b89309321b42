"""Checking a library and moving a damaged one aside. Qt-free.

A damaged index is never deleted: it is renamed ``<name>.damaged-<time>`` (with its
write-ahead log), the saved answers it may still hold are copied out first when it can
be read at all, and a new index is built beside the answers file. The rebuild itself is
an index run per folder (the facade's ``repair``).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from desktop_app.core.errors import KnownError, LibraryDamagedError, NotALibraryError, io_error
from desktop_app.core.library import opening
from desktop_app.core.library.answer_records import AnswerArchive

logger = logging.getLogger(__name__)

def check(db_path: Path) -> KnownError | None:
    """Read every table of the library at ``db_path`` to the end; the KnownError that
    says what is wrong with it, or None when it reads whole. The caller must not hold it."""
    if not db_path.exists():
        return None
    try:
        con = opening.connect(db_path, read_only=True)
    except KnownError as exc:
        return exc
    try:
        opening.read_whole(con)
    except Exception as exc:  # noqa: BLE001 - classified below
        known = opening.classify(exc, db_path, "reading the library")
        if known is None:
            known = LibraryDamagedError(f"The library {db_path} is damaged: {exc}.",
                                        opening.REPAIR_HINT.format(name=db_path.name), db_path)
        return known
    finally:
        con.close()
    return None


def salvage_answers(damaged: Path, archive: AnswerArchive) -> int:
    """Copy whatever saved answers a damaged library from before the answers file still
    yields into ``archive``; how many were found. Best effort: a file too damaged to
    open yields none (the answers file has held every answer since)."""
    import duckdb

    try:
        con = duckdb.connect(str(damaged), read_only=True)
    except Exception as exc:  # noqa: BLE001 - nothing to salvage from it
        logger.info("no answers to salvage from %s: %s", damaged, exc)
        return 0
    try:
        tables = {str(r[0]) for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "answers" not in tables:
            return 0
        columns = {str(r[0]) for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'answers'").fetchall()}
        scope = "scope" if "scope" in columns else "''"
        rows = con.execute(
            "SELECT answer_id, question, text, style, model_id, status,"
            f" strftime(created_at, '%Y-%m-%d %H:%M:%S.%f'), payload, {scope} FROM answers"  # noqa: S608
        ).fetchall()
    except Exception as exc:  # noqa: BLE001 - as much as could be read
        logger.warning("salvaging answers from %s failed: %s", damaged, exc)
        return 0
    finally:
        con.close()
    archive.import_rows(rows, [], [])
    logger.info("salvaged %d saved answers from %s", len(rows), damaged)
    return len(rows)


def move_aside(db_path: Path) -> Path:
    """Rename the library file (and its write-ahead log) to ``<name>.damaged-<time>``;
    returns the new path. Raises the KnownError of a rename the disk refuses."""
    if db_path.is_dir():
        raise NotALibraryError(f"{db_path} is a folder, not a library file: Folio does not move folders.",
                               "Point --db at a library file (e.g. library.duckdb).", db_path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = db_path.with_name(f"{db_path.name}.damaged-{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = db_path.with_name(f"{db_path.name}.damaged-{stamp}-{number}")
    try:
        os.replace(db_path, target)
        wal = db_path.with_name(db_path.name + ".wal")
        if wal.exists():
            os.replace(wal, target.with_name(target.name + ".wal"))
    except OSError as exc:
        known = io_error(exc, db_path, "moving the damaged library aside")
        raise (known or KnownError(f"Could not move {db_path} aside: {exc}.")) from exc
    opening.owner_path(db_path).unlink(missing_ok=True)
    logger.info("library %s moved aside to %s", db_path, target)
    return target


def needs_repair(problem: KnownError | None) -> bool:
    """Whether ``problem`` is one that moving the file aside and rebuilding cures."""
    return isinstance(problem, LibraryDamagedError | NotALibraryError)
