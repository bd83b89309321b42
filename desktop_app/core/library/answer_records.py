"""Saved answers, the judge's cache and the folders indexed: what cannot be rebuilt from
the documents, kept in a file of its own beside the index. Qt-free.

The index (library.duckdb) is derived from the documents and can be rebuilt; a saved
answer, its verdicts and the judge's opinions cannot. So they live in
``<library>.answers.sqlite`` (:func:`answers_path`), an SQLite file:

- a damaged or deleted index never takes them down, and ``folio repair`` rebuilds the
  index beside them (the folders to rebuild from are kept here too);
- SQLite's rollback journal with ``synchronous=FULL`` makes each answer one atomic,
  durable transaction: a crash, a SIGKILL or a full disk leaves the answers before it or
  after it, never a torn one (the file format SQLite's own test suite tortures);
- SQLite lets a second process read and write while the first holds the file (DuckDB
  does not, even read-only), so history, export and new answers keep working while
  another Folio indexes;
- it is in Python's standard library: nothing to install.

:class:`~desktop_app.core.library.store.Store` delegates its answer methods here
(:class:`AnswerRecords`); staleness and export of a saved answer are
core/library/history.py's.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from desktop_app.core.errors import KnownError, LibraryDamagedError, io_error
from desktop_app.core.types import (
    LEGACY_NOT_CONFIRMED,
    HistoryEntry,
    JsonObject,
    SavedAnswer,
    Verdict,
)

Row = tuple[object, ...]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # PRAGMA user_version of the answers file
# Version 1's tables; _UPGRADES brings them to SCHEMA_VERSION.
_SCHEMA = """
    CREATE TABLE IF NOT EXISTS answers (
        answer_id TEXT PRIMARY KEY,
        question TEXT NOT NULL,
        text TEXT NOT NULL,
        style TEXT NOT NULL,
        model_id TEXT NOT NULL,
        status TEXT NOT NULL,              -- finished | no_basis | cancelled | failed
        created_at TEXT NOT NULL,          -- 'YYYY-MM-DD HH:MM:SS.ffffff', UTC
        payload TEXT NOT NULL,             -- JSON: sources, citations, claims, hallucinated
        scope TEXT NOT NULL DEFAULT ''     -- JSON list of paths asked within ('' = all)
    );
    CREATE INDEX IF NOT EXISTS answers_by_time ON answers (created_at);
    CREATE TABLE IF NOT EXISTS judge_cache (
        sentence_sha TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        answer TEXT NOT NULL,              -- yes | partial | no (core/answer/judge.py)
        PRIMARY KEY (sentence_sha, chunk_id)
    );
    -- The folders indexed into the library: what `folio repair` rebuilds the index from.
    CREATE TABLE IF NOT EXISTS folders (
        path TEXT PRIMARY KEY,
        added_at TEXT NOT NULL
    );
"""


def _not_confirmed(con: sqlite3.Connection) -> None:
    """Version 2: the verdicts "partial" and "unsupported" of saved answers (in their JSON
    payload) are both "not_confirmed" (types.Verdict)."""
    rows = con.execute("SELECT answer_id, payload FROM answers WHERE payload LIKE '%\"verdict\"%'").fetchall()
    for answer_id, text in rows:
        payload = json.loads(text)
        changed = False
        for claim in payload.get("claims", []) if isinstance(payload, dict) else []:
            if isinstance(claim, dict) and claim.get("verdict") in LEGACY_NOT_CONFIRMED:
                claim["verdict"] = str(Verdict.NOT_CONFIRMED)
                changed = True
        if changed:
            con.execute("UPDATE answers SET payload = ? WHERE answer_id = ?",
                        [json.dumps(payload, ensure_ascii=False), answer_id])


def _add_conversations(con: sqlite3.Connection) -> None:
    """Version 3: each answer names its conversation (the first answer's id; '' before)."""
    con.execute("ALTER TABLE answers ADD COLUMN conversation_id TEXT NOT NULL DEFAULT ''")
    con.execute("CREATE INDEX IF NOT EXISTS answers_by_conversation ON answers (conversation_id, created_at)")


# The steps from one version to the next, in order: a file at version v runs every step
# above v up to SCHEMA_VERSION, in one transaction with the version it reaches.
_UPGRADES: dict[int, Callable[[sqlite3.Connection], None]] = {
    2: _not_confirmed,
    3: _add_conversations,
}


def answers_path(db_path: Path | str) -> Path:
    """The answers file beside the library ``db_path`` (library.duckdb ->
    library.answers.sqlite)."""
    path = Path(db_path)
    return path.with_name(path.stem + ".answers.sqlite")


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


class AnswerArchive:
    """The answers file. Thread-safe (one connection behind a lock); other processes may
    use the same file at the same time (SQLite's locking)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.write_failures = 0  # writes that failed (the caller may have swallowed them)
        self.last_failure: BaseException | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as exc:
            raise self._error(exc, "opening the saved answers") from exc
        self._con = con
        try:
            con.execute("PRAGMA synchronous = FULL")  # durable at COMMIT (power loss included)
            version = int(con.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise KnownError(
                    f"The saved answers {self.path} were written by a newer Folio.",
                    "Update Folio to read them (they are left as they are).",
                )
            if version < SCHEMA_VERSION:
                self._upgrade(con, version)
        except sqlite3.Error as exc:
            con.close()
            raise self._error(exc, "opening the saved answers") from exc
        except KnownError:
            con.close()
            raise

    @staticmethod
    def _upgrade(con: sqlite3.Connection, version: int) -> None:
        """Version 1's tables (a new file), then each step above ``version``, in one
        transaction: a crash leaves the file as it was."""
        con.executescript("BEGIN IMMEDIATE;" + _SCHEMA)  # leaves the transaction open
        try:
            for step in sorted(_UPGRADES):
                if version < step <= SCHEMA_VERSION:
                    _UPGRADES[step](con)
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise

    def _error(self, exc: BaseException, doing: str) -> KnownError:
        known = io_error(exc, self.path, doing)
        if known is not None:
            return known
        text = str(exc).lower()
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return LibraryDamagedError(
                f"The saved answers {self.path} are damaged ({exc}).",
                "Move the file aside (rename it) and Folio starts a new one; keep it for "
                "recovery with the sqlite3 tool (.recover).",
                self.path,
            )
        if "unable to open" in text:
            return KnownError(f"Folio cannot open the saved answers {self.path} ({exc}).",
                              "Check that the folder exists and that you may write to it.")
        if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
            return KnownError(f"The saved answers {self.path} stayed locked by another process.",
                              "Try again in a moment.")
        return KnownError(f"Folio could not go on {doing} in {self.path}: {exc}.")

    @contextmanager
    def _writing(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock; a failure rolls it back and becomes a
        KnownError (disk full, read-only, …) when the environment caused it."""
        with self._lock:
            con = self._con
            try:
                con.execute("BEGIN IMMEDIATE")
                yield con
                con.execute("COMMIT")
            except BaseException as exc:
                if con.in_transaction:
                    try:
                        con.execute("ROLLBACK")
                    except sqlite3.Error:
                        logger.debug("rollback failed", exc_info=True)
                self.write_failures += 1
                self.last_failure = exc
                if isinstance(exc, sqlite3.Error | OSError):
                    self.last_failure = self._error(exc, doing)
                    raise self.last_failure from exc
                raise

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        with self._lock:
            try:
                return list(self._con.execute(sql, list(params)).fetchall())
            except sqlite3.Error as exc:
                raise self._error(exc, "reading the saved answers") from exc

    def close(self) -> None:
        with self._lock:
            try:
                self._con.close()
            except sqlite3.Error:  # pragma: no cover - closing twice
                logger.debug("close failed", exc_info=True)

    # ------------------------------------------------------------------ answers

    def keep(self, record: SavedAnswer) -> None:
        """Keep a saved answer (one transaction): its columns and its payload."""
        self.save_answer(record.answer_id, record.question, record.text, str(record.style), record.model_id,
                         str(record.status), record.payload(), record.scope, record.created_at or None,
                         record.conversation)

    def save_answer(self, answer_id: str, question: str, text: str, style: str, model_id: str,
                    status: str, payload: JsonObject, scope: Sequence[str] = (),
                    created_at: str | None = None, conversation_id: str = "") -> None:
        """Keep an answer from its columns and JSON payload (one transaction); ``scope``: the
        files and folders it was asked within (none: all); ``conversation_id``: the first
        answer of its conversation (its own id when it starts one)."""
        with self._writing("saving the answer") as con:
            con.execute(
                "INSERT OR REPLACE INTO answers (answer_id, question, text, style, model_id, status,"
                " created_at, payload, scope, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [answer_id, question, text, style, model_id, status, created_at or now_text(),
                 json.dumps(payload, ensure_ascii=False), _scope_json(scope), conversation_id or answer_id],
            )

    def answers(self) -> list[HistoryEntry]:
        """Every saved answer, newest first, with the conversation it belongs to."""
        rows = self._rows(
            "SELECT answer_id, question, status, created_at, model_id, scope, conversation_id FROM answers"
            " ORDER BY created_at DESC"
        )
        return [
            HistoryEntry(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), _scope_list(r[5]),
                         str(r[6] or r[0]))
            for r in rows
        ]

    def conversation(self, conversation_id: str) -> list[SavedAnswer]:
        """The answers of a conversation, oldest first, without those asked again with their
        "Searched for" edited (the later answer says which it ``replaces``; an answer saved
        before conversations existed is a conversation of its own)."""
        rows = self._rows(
            "SELECT answer_id FROM answers WHERE conversation_id = ? OR (conversation_id = '' AND answer_id = ?)"
            " ORDER BY created_at",
            [conversation_id, conversation_id],
        )
        records = [record for record in (self.answer(str(r[0])) for r in rows) if record is not None]
        replaced = {r.replaces for r in records if r.replaces}
        return [r for r in records if r.answer_id not in replaced]

    def answer(self, answer_id: str) -> SavedAnswer | None:
        """The answer with this id, or the newest whose id starts with it."""
        rows = self._rows(
            "SELECT answer_id, question, text, style, model_id, status, created_at, payload, scope,"
            " conversation_id FROM answers WHERE answer_id = ? OR substr(answer_id, 1, length(?)) = ? ORDER BY answer_id = ? DESC,"
            " created_at DESC LIMIT 1",
            [answer_id, answer_id, answer_id, answer_id],
        )
        if not rows:
            return None
        r = rows[0]
        try:
            payload = json.loads(str(r[7]))
        except ValueError:
            payload = {}
        return SavedAnswer.from_row(
            str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), str(r[6]),
            payload if isinstance(payload, dict) else {}, _scope_list(r[8]), str(r[9] or r[0]),
        )

    def delete_answer(self, answer_id: str) -> bool:
        with self._writing("deleting the answer") as con:
            return con.execute("DELETE FROM answers WHERE answer_id = ?", [answer_id]).rowcount > 0

    def import_rows(self, answers: Iterable[Sequence[object]], judged: Iterable[Sequence[object]],
                    folders: Iterable[str]) -> int:
        """Copy answers (answer_id, question, text, style, model_id, status, created_at,
        payload, scope), judge rows (sentence_sha, chunk_id, answer) and folders in, in one
        transaction, keeping rows already here. Returns the answers now held."""
        with self._writing("copying the saved answers out of the library") as con:
            con.executemany(
                "INSERT OR IGNORE INTO answers (answer_id, question, text, style, model_id, status,"
                " created_at, payload, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [list(r) for r in answers],
            )
            con.executemany("INSERT OR IGNORE INTO judge_cache (sentence_sha, chunk_id, answer) VALUES (?, ?, ?)",
                            [list(r) for r in judged])
            con.executemany("INSERT OR IGNORE INTO folders (path, added_at) VALUES (?, ?)",
                            [[f, now_text()] for f in folders])
            return int(con.execute("SELECT count(*) FROM answers").fetchone()[0])

    # ------------------------------------------------------------------ the judge's cache

    def judge_get(self, sentence_sha: str, chunk_id: str) -> str | None:
        """The judge's cached answer ("yes", "partial", "no") for a sentence and chunk."""
        rows = self._rows("SELECT answer FROM judge_cache WHERE sentence_sha = ? AND chunk_id = ?",
                          [sentence_sha, chunk_id])
        return str(rows[0][0]) if rows else None

    def judge_put(self, sentence_sha: str, chunk_id: str, answer: str) -> None:
        with self._writing("saving the judge's verdict") as con:
            con.execute("INSERT OR REPLACE INTO judge_cache (sentence_sha, chunk_id, answer) VALUES (?, ?, ?)",
                        [sentence_sha, chunk_id, answer])

    # ------------------------------------------------------------------ folders

    def remember_folder(self, folder: str) -> None:
        """Note a folder indexed into the library (what a rebuild reads again)."""
        with self._writing("noting the folder") as con:
            con.execute("INSERT OR IGNORE INTO folders (path, added_at) VALUES (?, ?)", [folder, now_text()])

    def folders(self) -> list[str]:
        return [str(r[0]) for r in self._rows("SELECT path FROM folders ORDER BY path")]


class AnswerRecords:
    """The store's answer methods, kept in its :class:`AnswerArchive` (a mixin of ``Store``)."""

    archive: AnswerArchive

    def keep(self, record: SavedAnswer) -> None:
        self.archive.keep(record)

    def save_answer(self, answer_id: str, question: str, text: str, style: str, model_id: str,
                    status: str, payload: JsonObject, scope: Sequence[str] = (),
                    conversation_id: str = "") -> None:
        self.archive.save_answer(answer_id, question, text, style, model_id, status, payload, scope,
                                 conversation_id=conversation_id)

    def answers(self) -> list[HistoryEntry]:
        return self.archive.answers()

    def answer(self, answer_id: str) -> SavedAnswer | None:
        return self.archive.answer(answer_id)

    def delete_answer(self, answer_id: str) -> bool:
        return self.archive.delete_answer(answer_id)

    def judge_get(self, sentence_sha: str, chunk_id: str) -> str | None:
        return self.archive.judge_get(sentence_sha, chunk_id)

    def judge_put(self, sentence_sha: str, chunk_id: str, answer: str) -> None:
        self.archive.judge_put(sentence_sha, chunk_id, answer)


def _scope_json(scope: Sequence[str]) -> str:
    return json.dumps(list(scope), ensure_ascii=False) if scope else ""


def _scope_list(stored: object) -> tuple[str, ...]:
    if not stored:
        return ()
    try:
        value = json.loads(str(stored))
    except ValueError:
        return ()
    return tuple(str(p) for p in value) if isinstance(value, list) else ()
