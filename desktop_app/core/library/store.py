"""The library database (DuckDB). Qt-free.

One process owns the file (DuckDB allows one writer process). Threads each get their
own cursor. Every document is written in one transaction, so a crash leaves either
the whole file or none of it. Bulk rows go in through Arrow, never executemany.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from desktop_app.core.errors import KnownError
from desktop_app.core.library import postings
from desktop_app.core.library.migrations import migrate
from desktop_app.core.library.queries import LibraryQueries, scope_params
from desktop_app.core.types import (
    Chunk,
    DocStatus,
    DocumentInfo,
    ExtractedDocument,
    PageQuality,
    PageText,
    Passage,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileRecord:
    path: str
    doc_id: str | None
    size: int
    mtime: float
    status: str
    error: str
    removed: bool


class Store(LibraryQueries):
    def __init__(self, db_path: Path | str) -> None:
        import duckdb

        self.path = Path(db_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = duckdb.connect(str(self.path))
        except duckdb.IOException as exc:
            raise KnownError(
                f"The library {self.path} is open in another Folio process.",
                "Close the other Folio window or command, or use --db to pick another library.",
            ) from exc
        migrate(self._con)
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
        self._local = threading.local()
        self._write_lock = threading.Lock()
        # fetchall, not fetchone: a result left half-read keeps its transaction open, and
        # DuckDB then never checkpoints after an UPDATE or DELETE (the WAL grows for ever).
        rows = self._con.execute("SELECT coalesce(max(ckey), 0) FROM chunks").fetchall()
        self._next_ckey = int(rows[0][0]) + 1 if rows else 1
        self.generation = 0  # bumped on every write that changes searchable content

    # ------------------------------------------------------------------ plumbing

    def _cursor(self) -> Any:
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self._con.cursor()
            self._local.cursor = cur
        return cur

    def close(self) -> None:
        try:
            self._con.close()
        except Exception:  # pragma: no cover - closing twice
            logger.debug("close failed", exc_info=True)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = self._cursor().execute(sql, list(params)).fetchall()
        return rows

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
                cur.execute("ROLLBACK")
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
                cur.execute("ROLLBACK")
                raise

    def _retire_if_orphan(self, cur: Any, doc_id: str) -> None:
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
                cur.execute("DELETE FROM documents WHERE doc_id = ?", [doc.doc_id])
                cur.execute(
                    "INSERT INTO documents (doc_id, path, title, version, status, error, pages, chunks, bad_pages, size, mtime, rules, ocr_pages, chunked_with)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        doc.doc_id, doc.path, doc.title, version, str(doc.status), doc.error,
                        doc.page_count, len(chunks), ",".join(map(str, doc.bad_pages)),
                        doc.size, doc.mtime, rules, doc.ocr_pages, chunked_with,
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
                cur.execute("ROLLBACK")
                raise
            self._next_ckey = first + len(chunks)
            self.generation += 1
            postings.maybe_compact(cur)

    def _insert_chunks(self, cur: Any, chunks: Sequence[Chunk], ckeys: Sequence[int],
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

    def _insert_vectors(self, cur: Any, ckeys: Sequence[int], vectors: np.ndarray, model_id: str) -> None:
        import pyarrow as pa

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        n, dim = vectors.shape
        offsets = pa.array(np.arange(0, (n + 1) * dim, dim, dtype=np.int32))
        lists = pa.ListArray.from_arrays(offsets, pa.array(vectors.reshape(-1)))
        table = pa.table({
            "ckey": pa.array(list(ckeys), pa.int64()),
            "model_id": [model_id] * n,
            "vec": lists,
        })
        cur.register("vec_in", table)
        cur.execute("INSERT INTO embeddings SELECT * FROM vec_in")
        cur.unregister("vec_in")

    # ------------------------------------------------------------------ derived data

    def chunks_without_vectors(self, model_id: str) -> list[tuple[int, str]]:
        return [
            (int(k), str(t))
            for k, t in self._query(
                "SELECT c.ckey, c.text FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM embeddings e WHERE e.ckey = c.ckey AND e.model_id = ?) ORDER BY c.ckey",
                [model_id],
            )
        ]

    def add_vectors(self, ckeys: Sequence[int], vectors: np.ndarray, model_id: str) -> None:
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                self._insert_vectors(cur, ckeys, vectors, model_id)
                cur.execute("COMMIT")
            except Exception:
                cur.execute("ROLLBACK")
                raise
            self.generation += 1

    def rebuild_postings(self, chunk_terms: Iterable[tuple[int, dict[str, int]]]) -> None:
        """Replace every BM25 posting with those of ``(ckey, {term: tf})`` pairs."""
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                postings.replace_all(cur, chunk_terms)
                cur.execute("COMMIT")
            except Exception:
                cur.execute("ROLLBACK")
                raise
            self.generation += 1

    def drop_vectors(self, model_id: str | None = None) -> None:
        with self._write_lock:
            if model_id is None:
                self._cursor().execute("DELETE FROM embeddings")
            else:
                self._cursor().execute("DELETE FROM embeddings WHERE model_id = ?", [model_id])
            self.generation += 1

    def load_vectors(self, model_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(ckeys int64[n], matrix float32[n, dim]) of every live chunk's vector."""
        sql = (
            "SELECT e.ckey, e.vec FROM embeddings e JOIN chunks c ON c.ckey = e.ckey "
            "WHERE e.model_id = $model ORDER BY e.ckey"
        )
        relation = self._cursor().sql(sql, params={"model": model_id})
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        table = fetch()
        if table.num_rows == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        keys = table.column("ckey").to_numpy()
        vec = table.column("vec").combine_chunks()
        flat = vec.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        return keys.astype(np.int64), flat.reshape(table.num_rows, -1)

    # ------------------------------------------------------------------ reading

    def passages(self, ckeys: Sequence[int], scope: Sequence[str] = ()) -> dict[int, Passage]:
        """The passages of ``ckeys``, each with its document's live path (one inside
        ``scope``, the paths a question was asked within, when the bytes live at several)."""
        if not ckeys:
            return {}
        rows = self._query(
            "SELECT c.ckey, c.chunk_id, c.doc_id, d.path, d.title, c.page, p.label, c.section,"
            " c.char_start, c.char_end, c.text, d.version"
            " FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"
            " LEFT JOIN pages p ON p.doc_id = c.doc_id AND p.page = c.page"
            " WHERE c.ckey IN (SELECT unnest(?::BIGINT[]))",
            [list(map(int, ckeys))],
        )
        live_paths = self._live_paths([r[2] for r in rows])
        if scope:
            live_paths.update(self._live_paths([r[2] for r in rows], scope))
        out: dict[int, Passage] = {}
        for r in rows:
            path = live_paths.get(r[2], r[3])
            out[int(r[0])] = Passage(
                chunk_id=r[1], doc_id=r[2], doc_path=path, doc_title=r[4], page=int(r[5]),
                page_label=r[6] or str(r[5]), section=r[7], char_start=int(r[8]),
                char_end=int(r[9]), score=0.0, text=r[10], version=int(r[11]),
            )
        return out

    def _live_paths(self, doc_ids: Sequence[str], scope: Sequence[str] = ()) -> dict[str, str]:
        if not doc_ids:
            return {}
        if scope:
            exact, prefixes = scope_params(scope)
            rows = self._query(
                "SELECT f.doc_id, min(f.path) FROM files f"
                " JOIN (SELECT unnest(?::VARCHAR[]) AS exact, unnest(?::VARCHAR[]) AS prefix) s"
                " ON f.path = s.exact OR starts_with(f.path, s.prefix)"
                " WHERE NOT f.removed AND f.doc_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY f.doc_id",
                [exact, prefixes, list(set(doc_ids))],
            )
            return {r[0]: r[1] for r in rows}
        rows = self._query(
            "SELECT doc_id, min(path) FROM files WHERE NOT removed AND doc_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY doc_id",
            [list(set(doc_ids))],
        )
        return {r[0]: r[1] for r in rows}

    def passage_by_chunk_id(self, chunk_id: str) -> Passage | None:
        rows = self._query("SELECT ckey FROM chunks WHERE chunk_id = ?", [chunk_id])
        if not rows:
            return None
        return self.passages([int(rows[0][0])]).get(int(rows[0][0]))

    def documents(self, folder: str | None = None) -> list[DocumentInfo]:
        sql = (
            "SELECT f.path, f.doc_id, coalesce(d.title, ''), f.status, coalesce(d.pages, 0),"
            " coalesce(d.chunks, 0), coalesce(d.version, 1), f.error, coalesce(d.bad_pages, ''),"
            " f.size, f.mtime, coalesce(d.ocr_pages, 0)"
            " FROM files f LEFT JOIN documents d ON d.doc_id = f.doc_id"
        )
        params: list[Any] = []
        if folder:
            sql += " WHERE f.path LIKE ?"
            params.append(folder.rstrip("/") + "/%")
        sql += " ORDER BY f.path"
        out = []
        for r in self._query(sql, params):
            out.append(
                DocumentInfo(
                    doc_id=r[1] or "", path=r[0], title=r[2] or Path(r[0]).stem,
                    status=DocStatus(r[3]), pages=int(r[4]), chunks=int(r[5]),
                    version=int(r[6]), error=r[7],
                    bad_pages=tuple(int(x) for x in r[8].split(",") if x),
                    size=int(r[9]), mtime=float(r[10]), ocr_pages=int(r[11]),
                )
            )
        return out

    def counts(self) -> dict[str, int]:
        row = self._query(
            "SELECT (SELECT count(*) FROM documents WHERE NOT superseded),"
            " (SELECT coalesce(sum(pages), 0) FROM documents WHERE NOT superseded),"
            " (SELECT count(*) FROM chunks), (SELECT count(*) FROM embeddings)"
        )[0]
        return {"documents": int(row[0]), "pages": int(row[1]), "chunks": int(row[2]), "vectors": int(row[3])}

    def chunk_ids(self) -> list[str]:
        return [r[0] for r in self._query("SELECT chunk_id FROM chunks ORDER BY chunk_id")]

    def all_chunk_texts(self) -> list[tuple[int, str]]:
        return [(int(k), t) for k, t in self._query("SELECT ckey, text FROM chunks ORDER BY ckey")]

    # ------------------------------------------------------------------ answers

    def save_answer(self, answer_id: str, question: str, text: str, style: str, model_id: str,
                    status: str, payload: dict[str, Any], scope: Sequence[str] = ()) -> None:
        """Keep an answer; ``scope``: the files and folders it was asked within (none: all)."""
        with self._write_lock:
            cur = self._cursor()
            cur.execute("DELETE FROM answers WHERE answer_id = ?", [answer_id])
            cur.execute(
                "INSERT INTO answers (answer_id, question, text, style, model_id, status, payload, scope)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [answer_id, question, text, style, model_id, status,
                 json.dumps(payload, ensure_ascii=False), _scope_json(scope)],
            )

    def answers(self) -> list[dict[str, Any]]:
        rows = self._query(
            "SELECT answer_id, question, status, created_at, model_id, scope FROM answers ORDER BY created_at DESC"
        )
        return [
            {"answer_id": r[0], "question": r[1], "status": r[2], "created_at": str(r[3]), "model_id": r[4],
             "scope": _scope_list(r[5])}
            for r in rows
        ]

    def answer(self, answer_id: str) -> dict[str, Any] | None:
        rows = self._query(
            "SELECT answer_id, question, text, style, model_id, status, created_at, payload, scope FROM answers"
            " WHERE answer_id = ? OR answer_id LIKE ? ORDER BY created_at DESC",
            [answer_id, answer_id + "%"],
        )
        if not rows:
            return None
        r = rows[0]
        return {
            "answer_id": r[0], "question": r[1], "text": r[2], "style": r[3], "model_id": r[4],
            "status": r[5], "created_at": str(r[6]), **json.loads(r[7]), "scope": _scope_list(r[8]),
        }

    def delete_answer(self, answer_id: str) -> bool:
        with self._write_lock:
            before = self._query("SELECT count(*) FROM answers WHERE answer_id = ?", [answer_id])[0][0]
            self._cursor().execute("DELETE FROM answers WHERE answer_id = ?", [answer_id])
            return bool(before)

    def judge_get(self, sentence_sha: str, chunk_id: str) -> str | None:
        """The judge's cached answer ("yes", "partial", "no") for a sentence and chunk."""
        rows = self._query(
            "SELECT supported, answer FROM judge_cache WHERE sentence_sha = ? AND chunk_id = ?",
            [sentence_sha, chunk_id],
        )
        if not rows:
            return None
        supported, answer = rows[0]
        return str(answer) if answer else ("yes" if supported else "no")

    def judge_put(self, sentence_sha: str, chunk_id: str, answer: str) -> None:
        with self._write_lock:
            self._cursor().execute(
                "INSERT OR REPLACE INTO judge_cache (sentence_sha, chunk_id, supported, answer)"
                " VALUES (?, ?, ?, ?)",
                [sentence_sha, chunk_id, answer == "yes", answer],
            )

    # ------------------------------------------------------------------ ingest rules (titles, sections)

    def documents_before_rules(self, rules: int) -> list[tuple[str, str]]:
        """(doc_id, a live path) of the current documents whose title and sections were made
        by ingest rules older than ``rules``."""
        rows = self._query(
            "SELECT d.doc_id, min(f.path) FROM documents d"
            " JOIN files f ON f.doc_id = d.doc_id AND NOT f.removed"
            " WHERE NOT d.superseded AND d.rules < ? GROUP BY d.doc_id ORDER BY min(f.path)",
            [rules],
        )
        return [(str(d), str(p)) for d, p in rows]

    def document_pages(self, doc_id: str) -> list[PageText]:
        """The stored pages of a document (text, label, size, quality; no text runs)."""
        rows = self._query(
            "SELECT page, label, width, height, rotation, text, quality FROM pages"
            " WHERE doc_id = ? ORDER BY page",
            [doc_id],
        )
        return [
            PageText(int(page), str(label), float(width), float(height), int(rotation), str(text),
                     PageQuality(quality))
            for page, label, width, height, rotation, text, quality in rows
        ]

    def documents_chunked_otherwise(self, chunked_with: str) -> list[tuple[str, str]]:
        """(doc_id, path) of the current documents with chunks cut for something other than
        ``chunked_with`` (another chunker version or embedder), in path order."""
        rows = self._query(
            "SELECT d.doc_id, min(f.path) FROM documents d JOIN files f ON f.doc_id = d.doc_id"
            " WHERE NOT d.superseded AND d.chunked_with <> ? GROUP BY d.doc_id ORDER BY min(f.path)",
            [chunked_with],
        )
        return [(str(d), str(p)) for d, p in rows]

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
                cur.execute("ROLLBACK")
                raise
            self._next_ckey = first + len(chunks)
            self.generation += 1
            postings.maybe_compact(cur)

    def chunk_spans(self, doc_id: str) -> list[tuple[int, int, int, int]]:
        """(ckey, page, char_start, char_end) of a document's chunks, in page order."""
        rows = self._query(
            "SELECT ckey, page, char_start, char_end FROM chunks WHERE doc_id = ? ORDER BY page, idx",
            [doc_id],
        )
        return [(int(k), int(p), int(a), int(b)) for k, p, a, b in rows]

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
                cur.execute("ROLLBACK")
                raise
            self.generation += 1

def _scope_json(scope: Sequence[str]) -> str:
    return json.dumps(list(scope), ensure_ascii=False) if scope else ""


def _scope_list(stored: Any) -> list[str]:
    if not stored:
        return []
    try:
        value = json.loads(str(stored))
    except ValueError:
        return []
    return [str(p) for p in value] if isinstance(value, list) else []
