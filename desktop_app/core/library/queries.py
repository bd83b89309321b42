"""The library's read-only queries for search and provenance: BM25 over the postings, the
chunks within a scope, where a passage came from (files, totals, OCR line boxes). Qt-free.

:class:`~desktop_app.core.library.store.Store` inherits them; the SQL stays in this
package, and the other stages call these named methods.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from desktop_app.core.library import postings
from desktop_app.core.library.connection import StoreConnection


class LibraryQueries(StoreConnection):
    """Read-only queries over the store's connection (a mixin of ``Store``)."""

    # ------------------------------------------------------------------ search (BM25 over the postings)

    def chunk_stats(self) -> tuple[int, float]:
        """(number of chunks, their average length in terms)."""
        rows = self._query("SELECT count(*), coalesce(avg(n_terms), 1) FROM chunks")
        return int(rows[0][0]), float(rows[0][1]) or 1.0

    def document_titles(self) -> list[tuple[str, str, str]]:
        """(doc_id, title, path) of every current document."""
        rows = self._query("SELECT doc_id, title, path FROM documents WHERE NOT superseded")
        return [(str(d), str(t), str(p)) for d, t, p in rows]

    def term_chunk_counts(self, term_ids: Sequence[int]) -> dict[int, int]:
        """How many chunks hold each term (terms no chunk holds are left out)."""
        return {int(t): int(n) for t, n in self._query(postings.DF_SQL, [list(term_ids)])}

    def bm25_top(self, term_ids: Sequence[int], weights: Sequence[float], avgdl: float,
                 k: int, within: Sequence[int] | None = None) -> list[tuple[int, float, int]]:
        """The best ``k`` chunks by BM25 over the weighted terms: (ckey, score, bit mask of
        the terms it holds: bit i = ``term_ids[i]``), best first; only among the chunks
        ``within`` when given."""
        params: dict[str, object] = {
            "ids": list(term_ids), "w": list(weights), "bit": [1 << i for i in range(len(term_ids))],
            "avgdl": avgdl, "k": k,
        }
        if within is not None:
            params["within"] = [int(key) for key in within]
        sql = postings.SCORE_SQL if within is None else postings.SCORE_WITHIN_SQL
        rows = self._cursor().execute(sql, params).fetchall()
        return [(int(key), float(score), int(held)) for key, score, held in rows]

    def bm25_of(self, term_ids: Sequence[int], weights: Sequence[float], avgdl: float,
                ckeys: Sequence[int]) -> list[tuple[int, float, int]]:
        """The same BM25 (and bit mask) for the given chunks only."""
        rows = self._cursor().execute(postings.EXTRA_SQL, {
            "ids": list(term_ids), "w": list(weights), "bit": [1 << i for i in range(len(term_ids))],
            "avgdl": avgdl, "extra": list(ckeys),
        }).fetchall()
        return [(int(key), float(score), int(held)) for key, score, held in rows]

    def chunk_texts(self, ckeys: Sequence[int]) -> dict[int, str]:
        """The text of each chunk."""
        rows = self._query("SELECT ckey, text FROM chunks WHERE ckey IN (SELECT unnest(?::BIGINT[]))",
                           [list(map(int, ckeys))])
        return {int(key): str(text) for key, text in rows}

    def mentioned(self, needles: Sequence[str], within: Sequence[int] | None = None) -> set[str]:
        """Which of the lower-case ``needles`` occur in the text of a current document's
        chunk (only among the chunks ``within`` when given), inside a word or not."""
        if not needles:
            return set()
        found = ", ".join(f"bool_or(contains(t, ${i + 1}))" for i in range(len(needles)))
        where = "" if within is None else f" AND c.ckey IN (SELECT unnest(${len(needles) + 1}::BIGINT[]))"
        params: list[object] = list(needles) + ([] if within is None else [list(map(int, within))])
        rows = self._query(
            f"SELECT {found} FROM (SELECT lower(c.text) AS t FROM chunks c"
            f" JOIN documents d ON d.doc_id = c.doc_id WHERE NOT d.superseded{where})",
            params,
        )
        return {needle for needle, hit in zip(needles, rows[0], strict=True) if hit}

    def chunk_places(self, ckeys: Sequence[int]) -> dict[int, tuple[str, int, str]]:
        """(doc_id, page, section) of each chunk."""
        rows = self._query(
            "SELECT ckey, doc_id, page, section FROM chunks WHERE ckey IN (SELECT unnest(?::BIGINT[]))",
            [list(ckeys)],
        )
        return {int(key): (str(doc), int(page), str(section)) for key, doc, page, section in rows}

    def chunk_keys_within(self, paths: Sequence[str]) -> np.ndarray:
        """The sorted ckeys (int64) of the chunks of the live files at ``paths`` (files) or
        under them (folders): what a question asked within those paths may cite."""
        if not paths:
            return np.zeros(0, dtype=np.int64)
        exact, prefixes = scope_params(paths)
        rows = self._query(
            "SELECT DISTINCT c.ckey FROM chunks c JOIN files f ON f.doc_id = c.doc_id"
            " JOIN (SELECT unnest(?::VARCHAR[]) AS exact, unnest(?::VARCHAR[]) AS prefix) s"
            " ON f.path = s.exact OR starts_with(f.path, s.prefix)"
            " WHERE NOT f.removed ORDER BY c.ckey",
            [exact, prefixes],
        )
        return np.asarray([int(r[0]) for r in rows], dtype=np.int64)

    def files_within(self, paths: Sequence[str]) -> list[tuple[str, str]]:
        """(path, status) of the live files at ``paths`` or under them, by path."""
        if not paths:
            return []
        exact, prefixes = scope_params(paths)
        rows = self._query(
            "SELECT DISTINCT f.path, f.status FROM files f"
            " JOIN (SELECT unnest(?::VARCHAR[]) AS exact, unnest(?::VARCHAR[]) AS prefix) s"
            " ON f.path = s.exact OR starts_with(f.path, s.prefix)"
            " WHERE NOT f.removed ORDER BY f.path",
            [exact, prefixes],
        )
        return [(str(p), str(status)) for p, status in rows]

    # ------------------------------------------------------------------ provenance

    def document_totals(self, doc_id: str) -> tuple[int, int, tuple[int, ...]] | None:
        """(pages, chunks, pages flagged as unreadable) of a document, None if unknown."""
        rows = self._query("SELECT pages, chunks, bad_pages FROM documents WHERE doc_id = ?", [doc_id])
        if not rows:
            return None
        pages, chunks, bad = rows[0]
        return int(pages), int(chunks), tuple(int(x) for x in str(bad).split(",") if x)

    def document_ocr_pages(self, doc_id: str) -> int:
        """How many pages of a document were read by OCR."""
        rows = self._query("SELECT ocr_pages FROM documents WHERE doc_id = ?", [doc_id])
        return int(rows[0][0]) if rows else 0

    def ocr_lines(self, doc_id: str, page: int, char_start: int, char_end: int
                  ) -> list[tuple[int, int, tuple[float, float, float, float]]]:
        """(char_start, char_end, box) of the OCR lines of a page that hold characters
        ``char_start:char_end`` of its text, in text order; boxes in points on the
        unrotated page, origin bottom-left."""
        rows = self._query(
            "SELECT char_start, char_end, x0, y0, x1, y1 FROM ocr_lines WHERE doc_id = ? AND page = ?"
            " AND char_end > ? AND char_start < ? ORDER BY char_start",
            [doc_id, page, char_start, char_end],
        )
        return [(int(s), int(e), (float(a), float(b), float(c), float(d))) for s, e, a, b, c, d in rows]

    def ocr_line_boxes(self, doc_id: str, page: int, char_start: int,
                       char_end: int) -> list[tuple[float, float, float, float]]:
        """The boxes of :meth:`ocr_lines`."""
        return [box for _, _, box in self.ocr_lines(doc_id, page, char_start, char_end)]

    def page_geometry(self, doc_id: str, page: int) -> tuple[float, float, int] | None:
        """(width, height, rotation) of a stored page."""
        rows = self._query("SELECT width, height, rotation FROM pages WHERE doc_id = ? AND page = ?",
                           [doc_id, page])
        return (float(rows[0][0]), float(rows[0][1]), int(rows[0][2])) if rows else None

    def live_files(self, doc_id: str) -> list[tuple[str, int, float]]:
        """(path, size, mtime) of the files that held ``doc_id`` when last scanned."""
        rows = self._query(
            "SELECT path, size, mtime FROM files WHERE doc_id = ? AND NOT removed ORDER BY path", [doc_id]
        )
        return [(str(p), int(s), float(m)) for p, s, m in rows]

    def document_path(self, doc_id: str) -> str | None:
        """The path a document was indexed from."""
        rows = self._query("SELECT path FROM documents WHERE doc_id = ?", [doc_id])
        return str(rows[0][0]) if rows else None


def scope_params(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Each path exactly (a file) and as a folder prefix (``/a/b`` -> ``/a/b/``)."""
    exact = [str(Path(p)) for p in paths]
    return exact, [p.rstrip("/\\") + os.sep for p in exact]
