"""The library database (DuckDB). Qt-free.

One process owns the file (DuckDB allows one writer process) and says so in an owner
file beside it (core/library/opening.py), so a second process can name the holder.
Threads each get their own cursor. Every document is written in one transaction, so a
crash leaves either the whole file or none of it. Bulk rows go in through Arrow, never
executemany. Saved answers and the judge's cache are not here: they live in their own
file (answer_records.py), which a damaged index never takes down.

This module holds the connection and the writes of files, documents, chunks and postings;
the store inherits the rest: search and provenance queries (queries.py), reading passages
and documents (reading.py), vectors (vectors.py), saved answers and the judge's cache
(answer_records.py).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from desktop_app.core.errors import LibraryTooNewError, NotWritableError
from desktop_app.core.library import opening, postings
from desktop_app.core.library.answer_records import AnswerArchive, AnswerRecords, answers_path
from desktop_app.core.library.migrations import (
    ANSWERS_MOVED_OUT,
    LATEST,
    current_version,
    migrate,
    rollback,
)
from desktop_app.core.library.queries import LibraryQueries
from desktop_app.core.library.reading import LibraryReading
from desktop_app.core.library.vectors import LibraryVectors
from desktop_app.core.types import Chunk, ExtractedDocument, FileRecord

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

logger = logging.getLogger(__name__)


def top_folders(paths: Iterable[str]) -> list[str]:
    """The fewest folders that hold every one of ``paths`` (their parents, none inside
    another): what a library was indexed from, as far as its files tell."""
    parents = sorted({str(Path(p).parent) for p in paths})
    tops: list[str] = []
    for folder in parents:
        if not any(folder == top or folder.startswith(top.rstrip(os.sep) + os.sep) for top in tops):
            tops.append(folder)
    return tops


class _ThreadCursor(threading.local):
    """Each thread's own cursor on the library's connection (None until it asks)."""

    cursor: DuckDBPyConnection | None = None


class Store(LibraryQueries, LibraryReading, LibraryVectors, AnswerRecords):
    def __init__(self, db_path: Path | str,
                 archive: AnswerArchive | Callable[[], AnswerArchive] | None = None) -> None:
        """Open (or make) the library at ``db_path``; ``archive``: its saved answers, or
        what opens them once the library file opened (default: opened here, from
        :func:`answers_path`). Raises the KnownError of the errors module that says why it
        cannot (busy, damaged, not a library, …)."""
        self.path = Path(db_path)
        self._own_archive = archive is None
        self._con, self.read_only = opening.connect_for_use(self.path)
        opened: AnswerArchive | None = None  # the archive opened here, closed here on failure
        try:
            if archive is None:
                self.archive = opened = AnswerArchive(answers_path(self.path))
            else:
                self.archive = archive if isinstance(archive, AnswerArchive) else archive()
            self._open()
        except BaseException as exc:
            self._con.close()
            if opened is not None:
                opened.close()
            known = opening.classify(exc, self.path, "opening the library") if isinstance(exc, Exception) else None
            if known is None or known is exc:
                raise
            raise known from exc
        opening.write_owner(self.path)

    def _open(self) -> None:
        version = self._version()
        if version > LATEST:
            raise LibraryTooNewError(
                f"The library {self.path} was written by a newer Folio (its schema {version};"
                f" this Folio knows up to {LATEST}).",
                "Update Folio, or open another library with --db.", self.path,
            )
        if self.read_only:
            if version < LATEST or postings.ensure_needed(self._con):
                raise NotWritableError(
                    f"The library {self.path} needs an update this Folio makes on opening, and its disk "
                    "or folder may not be written.",
                    "Open it once where it can be written, or copy it to a folder you can write to.")
            self._finish_open()
            return
        migrate(self._con, before={ANSWERS_MOVED_OUT: self._copy_answers_out})
        self._finish_open()

    def _version(self) -> int:
        if not self.read_only:
            return current_version(self._con)
        tables = {str(r[0]) for r in self._con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "schema_version" not in tables:
            return 0
        rows = self._con.execute("SELECT max(version) FROM schema_version").fetchall()
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    def _finish_open(self) -> None:
        # Postings made by another tokenizer version are rebuilt from the chunk text. (On a
        # cursor of its own, closed after: a connection left inside a transaction that
        # wrote would keep DuckDB from ever checkpointing, and the WAL would grow.)
        setup = self._con.cursor()
        try:
            postings.ensure_current(setup, lambda: [
                (int(k), str(t)) for k, t in setup.execute("SELECT ckey, text FROM chunks").fetchall()
            ])
        finally:
            setup.close()
        self._local = _ThreadCursor()
        self._write_lock = threading.Lock()
        self._adopted_ids = set()
        # fetchall, not fetchone: a result left half-read keeps its transaction open, and
        # DuckDB then never checkpoints after an UPDATE or DELETE (the WAL grows for ever).
        rows = self._con.execute("SELECT coalesce(max(ckey), 0) FROM chunks").fetchall()
        self._next_ckey = int(rows[0][0]) + 1 if rows else 1
        self.generation = 0  # bumped on every write that changes searchable content

    # ------------------------------------------------------------------ plumbing

    def _cursor(self) -> DuckDBPyConnection:
        cur = self._local.cursor
        if cur is None:
            cur = self._con.cursor()
            self._local.cursor = cur
        return cur

    def verify(self) -> None:
        """Read every table whole: raises the KnownError of damage (a truncated or torn
        file often opens, and fails only where its lost blocks are read)."""
        cur = self._con.cursor()
        try:
            opening.read_whole(cur)
        except Exception as exc:
            known = opening.classify(exc, self.path, "reading the library")
            if known is None:
                raise
            raise known from exc
        finally:
            cur.close()

    def close(self) -> None:
        try:
            self._con.close()
        except Exception:  # pragma: no cover - closing twice
            logger.debug("close failed", exc_info=True)
        opening.remove_owner(self.path)
        if self._own_archive:
            self.archive.close()

    def _copy_answers_out(self, con: DuckDBPyConnection) -> None:
        """Copy the saved answers, the judge's cache and the indexed folders of a library
        from before answers had their own file into :attr:`archive`, and check that every
        answer arrived, before the migration that drops them from the index runs. Safe to
        run again (rows already there are kept)."""
        tables = {str(r[0]) for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "answers" not in tables:
            return
        answers = con.execute(
            "SELECT answer_id, question, text, style, model_id, status,"
            " strftime(created_at, '%Y-%m-%d %H:%M:%S.%f'), payload, scope FROM answers"
        ).fetchall()
        judged = con.execute(
            "SELECT sentence_sha, chunk_id, CASE WHEN answer <> '' THEN answer WHEN supported THEN 'yes'"
            " ELSE 'no' END FROM judge_cache"
        ).fetchall() if "judge_cache" in tables else []
        paths = [str(r[0]) for r in con.execute("SELECT path FROM files WHERE NOT removed").fetchall()]
        self.archive.import_rows(answers, judged, top_folders(paths))
        kept = {a.answer_id for a in self.archive.answers()}
        lost = [str(r[0]) for r in answers if str(r[0]) not in kept]
        if lost:  # never drop what did not arrive
            raise RuntimeError(f"{len(lost)} saved answers did not reach {self.archive.path}")
        logger.info("%d saved answers and %d judge verdicts moved to %s", len(answers), len(judged),
                    self.archive.path)

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self._cursor().execute(sql, list(params)).fetchall()

    # ------------------------------------------------------------------ files and documents

    def file_record(self, path: str) -> FileRecord | None:
        rows = self._query(
            "SELECT path, doc_id, size, mtime, status, error, removed FROM files WHERE path = ?",
            [path],
        )
        return FileRecord(*rows[0]) if rows else None

    def file_records(self) -> list[FileRecord]:
        rows = self._query("SELECT path, doc_id, size, mtime, status, error, removed FROM files")
        return [FileRecord(*r) for r in rows]

    def has_document(self, doc_id: str) -> bool:
        rows = self._query(
            "SELECT 1 FROM documents WHERE doc_id = ? AND NOT superseded", [doc_id]
        )
        return bool(rows)

    def document_status(self, doc_id: str) -> str | None:
        rows = self._query("SELECT status FROM documents WHERE doc_id = ?", [doc_id])
        return str(rows[0][0]) if rows else None

    def next_version(self, path: str, doc_id: str) -> int:
        rows = self._query(
            "SELECT d.version, d.doc_id FROM files f JOIN documents d ON d.doc_id = f.doc_id WHERE f.path = ?",
            [path],
        )
        if not rows:
            return 1
        version, old = rows[0]
        return int(version) if old == doc_id else int(version) + 1

    def set_file(
        self, path: str, doc_id: str | None, size: int, mtime: float, status: str, error: str = ""
    ) -> None:
        """Record what lives at ``path`` now; if other bytes lived there, retire them."""
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                old = cur.execute("SELECT doc_id FROM files WHERE path = ?", [path]).fetchone()
                cur.execute("DELETE FROM files WHERE path = ?", [path])
                cur.execute(
                    "INSERT INTO files (path, doc_id, size, mtime, status, error) VALUES (?, ?, ?, ?, ?, ?)",
                    [path, doc_id, size, mtime, status, error],
                )
                if old and old[0] and old[0] != doc_id:
                    self._retire_if_orphan(cur, old[0])
                cur.execute("COMMIT")
            except Exception:
                rollback(cur)
                raise

    def mark_removed(self, paths: Iterable[str]) -> None:
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                for path in paths:
                    row = cur.execute("SELECT doc_id FROM files WHERE path = ?", [path]).fetchone()
                    cur.execute(
                        "UPDATE files SET removed = true, status = 'removed' WHERE path = ?", [path]
                    )
                    if row and row[0]:
                        self._retire_if_orphan(cur, row[0])
                cur.execute("COMMIT")
            except Exception:
                rollback(cur)
                raise

    def _retire_if_orphan(self, cur: DuckDBPyConnection, doc_id: str) -> None:
        """Drop the derived rows of bytes that no live path holds any more.

        The documents row stays (superseded) so that old answers can say what they cited.
        """
        still = cur.execute(
            "SELECT count(*) FROM files WHERE doc_id = ? AND NOT removed", [doc_id]
        ).fetchone()
        if still and still[0]:
            return
        cur.execute(
            "DELETE FROM postings WHERE ckey IN (SELECT ckey FROM chunks WHERE doc_id = ?)", [doc_id]
        )
        cur.execute(
            "DELETE FROM embeddings WHERE ckey IN (SELECT ckey FROM chunks WHERE doc_id = ?)",
            [doc_id],
        )
        cur.execute("DELETE FROM chunks WHERE doc_id = ?", [doc_id])
        cur.execute("UPDATE documents SET superseded = true WHERE doc_id = ?", [doc_id])
        self.generation += 1

    def write_document(
        self,
        doc: ExtractedDocument,
        chunks: Sequence[Chunk],
        chunk_terms: Sequence[dict[str, int]],
        vectors: np.ndarray | None,
        model_id: str,
        version: int,
        rules: int = 0,
        chunked_with: str = "",
    ) -> None:
        """Write a parsed document, its pages, chunks, postings and vectors, and point its
        path at it — all in one transaction. ``rules``: the version of the ingest rules its
        title and sections were made with; ``chunked_with``: the chunker version and
        embedder its chunks were cut for."""
        import pyarrow as pa

        assert len(chunks) == len(chunk_terms)
        with self._write_lock:
            cur = self._cursor()
            first = self._next_ckey
            ckeys = list(range(first, first + len(chunks)))
            cur.execute("BEGIN TRANSACTION")
            try:
                old = cur.execute("SELECT doc_id FROM files WHERE path = ?", [doc.path]).fetchone()
                # The same bytes may have been written before under another path (a copy)
                # or be a superseded version coming back: start from a clean slate for it.
                # (Checked first: deleting scans all postings, and most documents are new.)
                had = cur.execute("SELECT count(*) FROM chunks WHERE doc_id = ?", [doc.doc_id]).fetchall()
                if had and had[0][0]:
                    cur.execute("DELETE FROM postings WHERE ckey IN (SELECT ckey FROM chunks WHERE doc_id = ?)", [doc.doc_id])
                    cur.execute("DELETE FROM embeddings WHERE ckey IN (SELECT ckey FROM chunks WHERE doc_id = ?)", [doc.doc_id])
                    cur.execute("DELETE FROM chunks WHERE doc_id = ?", [doc.doc_id])
                cur.execute("DELETE FROM pages WHERE doc_id = ?", [doc.doc_id])
                cur.execute("DELETE FROM ocr_lines WHERE doc_id = ?", [doc.doc_id])
                cur.execute("DELETE FROM blocks WHERE doc_id = ?", [doc.doc_id])
                cur.execute("DELETE FROM documents WHERE doc_id = ?", [doc.doc_id])
                cur.execute(
                    "INSERT INTO documents (doc_id, path, title, version, status, error, pages, chunks, bad_pages, size, mtime, rules, ocr_pages, chunked_with, format)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        doc.doc_id, doc.path, doc.title, version, str(doc.status), doc.error,
                        doc.page_count, len(chunks), ",".join(map(str, doc.bad_pages)),
                        doc.size, doc.mtime, rules, doc.ocr_pages, chunked_with, doc.format,
                    ],
                )
                if doc.pages:
                    pages = pa.table({
                        "doc_id": [doc.doc_id] * len(doc.pages),
                        "page": [p.page for p in doc.pages],
                        "label": [p.label for p in doc.pages],
                        "width": [float(p.width) for p in doc.pages],
                        "height": [float(p.height) for p in doc.pages],
                        "rotation": [int(p.rotation) for p in doc.pages],
                        "quality": [str(p.quality) for p in doc.pages],
                        "text": [p.text for p in doc.pages],
                        "ocr_confidence": [float(p.ocr_confidence) for p in doc.pages],
                    })
                    cur.register("pages_in", pages)
                    cur.execute("INSERT INTO pages SELECT * FROM pages_in")
                    cur.unregister("pages_in")
                    lines = [(p.page, r) for p in doc.pages if p.ocr for r in p.runs]
                    if lines:
                        table = pa.table({
                            "doc_id": [doc.doc_id] * len(lines),
                            "page": [page for page, _ in lines],
                            "char_start": [r.char_start for _, r in lines],
                            "char_end": [r.char_end for _, r in lines],
                            "x0": [float(r.x0) for _, r in lines],
                            "y0": [float(r.y0) for _, r in lines],
                            "x1": [float(r.x1) for _, r in lines],
                            "y1": [float(r.y1) for _, r in lines],
                        })
                        cur.register("lines_in", table)
                        cur.execute("INSERT INTO ocr_lines SELECT * FROM lines_in")
                        cur.unregister("lines_in")
                    blocks = [(p.page, i, b) for p in doc.pages for i, b in enumerate(p.blocks)]
                    if blocks:
                        table = pa.table({
                            "doc_id": [doc.doc_id] * len(blocks),
                            "page": pa.array([page for page, _, _ in blocks], pa.int32()),
                            "idx": pa.array([i for _, i, _ in blocks], pa.int32()),
                            "kind": [str(b.kind) for _, _, b in blocks],
                            "level": pa.array([b.level for _, _, b in blocks], pa.int32()),
                            "char_start": pa.array([b.char_start for _, _, b in blocks], pa.int32()),
                            "char_end": pa.array([b.char_end for _, _, b in blocks], pa.int32()),
                        })
                        cur.register("blocks_in", table)
                        cur.execute("INSERT INTO blocks SELECT * FROM blocks_in")
                        cur.unregister("blocks_in")
                if chunks:
                    self._insert_chunks(cur, chunks, ckeys, chunk_terms, vectors, model_id)
                cur.execute("DELETE FROM files WHERE path = ?", [doc.path])
                cur.execute(
                    "INSERT INTO files (path, doc_id, size, mtime, status, error) VALUES (?, ?, ?, ?, ?, ?)",
                    [doc.path, doc.doc_id, doc.size, doc.mtime, str(doc.status), doc.error],
                )
                if old and old[0] and old[0] != doc.doc_id:
                    self._retire_if_orphan(cur, old[0])
                cur.execute("COMMIT")
            except Exception:
                rollback(cur)
                raise
            self._next_ckey = first + len(chunks)
            self.generation += 1
            postings.maybe_compact(cur)

    def _insert_chunks(self, cur: DuckDBPyConnection, chunks: Sequence[Chunk], ckeys: Sequence[int],
                       chunk_terms: Sequence[dict[str, int]], vectors: np.ndarray | None,
                       model_id: str) -> None:
        """Write ``chunks`` (with their keys), their postings and their vectors, inside the
        caller's transaction (a new document, or a document cut again)."""
        import pyarrow as pa

        table = pa.table({
            "chunk_id": [c.chunk_id for c in chunks],
            "ckey": pa.array(ckeys, pa.int64()),
            "doc_id": [c.doc_id for c in chunks],
            "page": [c.page for c in chunks],
            "idx": [c.index for c in chunks],
            "text": [c.text for c in chunks],
            "char_start": [c.char_start for c in chunks],
            "char_end": [c.char_end for c in chunks],
            "section": [c.section for c in chunks],
            "n_terms": [sum(t.values()) for t in chunk_terms],
        })
        cur.register("chunks_in", table)
        cur.execute("INSERT INTO chunks SELECT * FROM chunks_in")
        cur.unregister("chunks_in")
        postings.append(cur, ckeys, chunk_terms)
        if vectors is not None:
            self._insert_vectors(cur, ckeys, vectors, model_id)

    # ------------------------------------------------------------------ derived data

    def rebuild_postings(self, chunk_terms: Iterable[tuple[int, dict[str, int]]]) -> None:
        """Replace every BM25 posting with those of ``(ckey, {term: tf})`` pairs."""
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                postings.replace_all(cur, chunk_terms)
                cur.execute("COMMIT")
            except Exception:
                rollback(cur)
                raise
            self.generation += 1

    # ------------------------------------------------------------------ ingest rules (titles, sections)

    def replace_chunks(self, doc_id: str, chunks: Sequence[Chunk], chunk_terms: Sequence[dict[str, int]],
                       vectors: np.ndarray | None, model_id: str, chunked_with: str) -> None:
        """Put ``chunks`` (cut again from the stored pages) in place of a document's chunks,
        with their postings and vectors, in one transaction."""
        assert len(chunks) == len(chunk_terms)
        with self._write_lock:
            cur = self._cursor()
            first = self._next_ckey
            ckeys = list(range(first, first + len(chunks)))
            cur.execute("BEGIN TRANSACTION")
            try:
                cur.execute("DELETE FROM postings WHERE ckey IN (SELECT ckey FROM chunks WHERE doc_id = ?)", [doc_id])
                cur.execute("DELETE FROM embeddings WHERE ckey IN (SELECT ckey FROM chunks WHERE doc_id = ?)", [doc_id])
                cur.execute("DELETE FROM chunks WHERE doc_id = ?", [doc_id])
                cur.execute("UPDATE documents SET chunks = ?, chunked_with = ? WHERE doc_id = ?",
                            [len(chunks), chunked_with, doc_id])
                if chunks:
                    self._insert_chunks(cur, chunks, ckeys, chunk_terms, vectors, model_id)
                cur.execute("COMMIT")
            except Exception:
                rollback(cur)
                raise
            self._next_ckey = first + len(chunks)
            self.generation += 1
            postings.maybe_compact(cur)

    def apply_rules(self, doc_id: str, title: str | None, sections: Mapping[int, str],
                    rules: int) -> None:
        """Set a document's title (None: keep it) and its chunks' sections (ckey -> section)
        as made by the ingest rules ``rules``, in one transaction."""
        import pyarrow as pa

        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                if title is not None:
                    cur.execute("UPDATE documents SET title = ? WHERE doc_id = ?", [title, doc_id])
                cur.execute("UPDATE documents SET rules = ? WHERE doc_id = ?", [rules, doc_id])
                if sections:
                    table = pa.table({"ckey": pa.array(list(sections), pa.int64()),
                                      "section": list(sections.values())})
                    cur.register("sections_in", table)
                    cur.execute("UPDATE chunks SET section = s.section FROM sections_in s"
                                " WHERE chunks.ckey = s.ckey AND chunks.section <> s.section")
                    cur.unregister("sections_in")
                cur.execute("COMMIT")
            except Exception:
                rollback(cur)
                raise
            self.generation += 1
