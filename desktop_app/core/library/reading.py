"""Reading the library: passages with the live path of their document, the list of
documents, counts and every chunk's text; the documents made by older ingest rules or cut
for another chunker, their stored pages and chunk spans (what titles, sections and chunks
are re-derived from). Qt-free.

:class:`~desktop_app.core.library.store.Store` inherits them; the search queries are
core/library/queries.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from desktop_app.core.library.connection import StoreConnection
from desktop_app.core.library.queries import scope_params
from desktop_app.core.types import (
    BlockKind,
    DocStatus,
    DocumentInfo,
    DocumentPart,
    PageQuality,
    PageText,
    Passage,
    SourcePage,
    TextBlock,
    locate,
)


def _format_of_path(path: str) -> str:
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"htm": "html", "xhtml": "html", "markdown": "md"}.get(suffix, suffix)


class LibraryReading(StoreConnection):
    """Read-only queries for showing passages and documents (a mixin of ``Store``)."""

    def passages(self, ckeys: Sequence[int], scope: Sequence[str] = ()) -> dict[int, Passage]:
        """The passages of ``ckeys``, each with its document's live path (one inside
        ``scope``, the paths a question was asked within, when the bytes live at several)."""
        if not ckeys:
            return {}
        # A reflowable document's locator counts the part's paragraphs (every block but a
        # heading) up to the one the chunk starts in: "section 9.10.1 ¶ 3".
        rows = self._query(
            "SELECT c.ckey, c.chunk_id, c.doc_id, d.path, d.title, c.page, p.label, c.section,"
            " c.char_start, c.char_end, c.text, d.version, d.format,"
            " CASE WHEN d.format = 'pdf' THEN 0 ELSE (SELECT count(*) FROM blocks b"
            "   WHERE b.doc_id = c.doc_id AND b.page = c.page AND b.kind <> 'heading'"
            "   AND b.char_start <= c.char_start) END"
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
            label = r[6] or str(r[5])
            out[int(r[0])] = Passage(
                chunk_id=r[1], doc_id=r[2], doc_path=path, doc_title=r[4], page=int(r[5]),
                page_label=label, section=r[7], char_start=int(r[8]),
                char_end=int(r[9]), score=0.0, text=r[10], version=int(r[11]), format=str(r[12]),
                locator=locate(str(r[12]), int(r[5]), label, max(1, int(r[13] or 0))),
            )
        return out

    def source_pages(self, pages: Sequence[tuple[str, int]]) -> dict[tuple[str, int], SourcePage]:
        """The whole text of each (doc_id, page) and where its chunks lie in it: what the
        answer finder reads around a retrieved chunk (core/answer/finder.py)."""
        wanted = list(dict.fromkeys((str(d), int(n)) for d, n in pages))
        if not wanted:
            return {}
        docs, numbers = [d for d, _ in wanted], [n for _, n in wanted]
        rows = self._query(
            "SELECT p.doc_id, p.page, p.text FROM pages p"
            " JOIN (SELECT unnest(?::VARCHAR[]) AS doc_id, unnest(?::INTEGER[]) AS page) w"
            " ON w.doc_id = p.doc_id AND w.page = p.page",
            [docs, numbers],
        )
        spans = self._query(
            "SELECT c.doc_id, c.page, c.ckey, c.char_start, c.char_end FROM chunks c"
            " JOIN (SELECT unnest(?::VARCHAR[]) AS doc_id, unnest(?::INTEGER[]) AS page) w"
            " ON w.doc_id = c.doc_id AND w.page = c.page ORDER BY c.doc_id, c.page, c.char_start",
            [docs, numbers],
        )
        chunks: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
        for doc_id, page, ckey, start, end in spans:
            chunks.setdefault((str(doc_id), int(page)), []).append((int(ckey), int(start), int(end)))
        return {
            (str(doc_id), int(page)): SourcePage(str(doc_id), int(page), str(text),
                                                 tuple(chunks.get((str(doc_id), int(page)), ())))
            for doc_id, page, text in rows
        }

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
            " f.size, f.mtime, coalesce(d.ocr_pages, 0), coalesce(d.format, '')"
            " FROM files f LEFT JOIN documents d ON d.doc_id = f.doc_id"
        )
        params: list[object] = []
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
                    format=str(r[12]) or _format_of_path(r[0]),
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

    # ------------------------------------------------------------------ what the ingest rules re-derive from

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
        blocks = self._blocks(doc_id)
        return [
            PageText(int(page), str(label), float(width), float(height), int(rotation), str(text),
                     PageQuality(quality), blocks=blocks.get(int(page), ()))
            for page, label, width, height, rotation, text, quality in rows
        ]

    def _blocks(self, doc_id: str, page: int | None = None) -> dict[int, tuple[TextBlock, ...]]:
        sql = "SELECT page, kind, level, char_start, char_end FROM blocks WHERE doc_id = ?"
        params: list[object] = [doc_id]
        if page is not None:
            sql += " AND page = ?"
            params.append(page)
        found: dict[int, list[TextBlock]] = {}
        for number, kind, level, start, end in self._query(sql + " ORDER BY page, idx", params):
            found.setdefault(int(number), []).append(
                TextBlock(BlockKind(kind), int(start), int(end), int(level)))
        return {number: tuple(blocks) for number, blocks in found.items()}

    def document_format(self, doc_id: str) -> str:
        rows = self._query("SELECT format FROM documents WHERE doc_id = ?", [doc_id])
        return str(rows[0][0]) if rows else ""

    def document_part(self, doc_id: str, page: int) -> DocumentPart | None:
        """A reflowable document's part ``page`` with its blocks, for the document view
        (None when the document or the part is not stored)."""
        rows = self._query(
            "SELECT p.label, p.text, d.pages, d.format FROM pages p"
            " JOIN documents d ON d.doc_id = p.doc_id WHERE p.doc_id = ? AND p.page = ?",
            [doc_id, page],
        )
        if not rows:
            return None
        label, text, parts, fmt = rows[0]
        return DocumentPart(doc_id=doc_id, page=page, label=str(label), text=str(text),
                            blocks=self._blocks(doc_id, page).get(page, ()), parts=int(parts),
                            format=str(fmt))

    def documents_chunked_otherwise(self, chunked_with: str) -> list[tuple[str, str]]:
        """(doc_id, path) of the current documents with chunks cut for something other than
        ``chunked_with`` (another chunker version or embedder), in path order."""
        if ":" in chunked_with:  # an old name of the same embedder is not another embedder
            self.adopt_vectors(chunked_with.split(":", 1)[1])
        rows = self._query(
            "SELECT d.doc_id, min(f.path) FROM documents d JOIN files f ON f.doc_id = d.doc_id"
            " WHERE NOT d.superseded AND d.chunked_with <> ? GROUP BY d.doc_id ORDER BY min(f.path)",
            [chunked_with],
        )
        return [(str(d), str(p)) for d, p in rows]

    def chunk_spans(self, doc_id: str) -> list[tuple[int, int, int, int]]:
        """(ckey, page, char_start, char_end) of a document's chunks, in page order."""
        rows = self._query(
            "SELECT ckey, page, char_start, char_end FROM chunks WHERE doc_id = ? ORDER BY page, idx",
            [doc_id],
        )
        return [(int(k), int(p), int(a), int(b)) for k, p, a, b in rows]
