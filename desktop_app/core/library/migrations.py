"""DuckDB schema, as numbered migrations applied in order. Qt-free.

Text tables (documents, files, pages, chunks) are the truth; ``postings``,
``chunk_terms`` and ``embeddings`` are derived and can be rebuilt (``folio reindex``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

logger = logging.getLogger(__name__)

# BM25 postings: one row per (term, chunk). ``term_id`` is terms.term_id(term), a hash;
# ``dl`` is the chunk's length in terms (kept here so scoring needs no join). Rows are kept
# sorted by term_id except for a tail of recent writes (``bm25_state.unsorted`` rows), so
# a query reads only the row groups that hold its terms; the store re-sorts the tail when
# it grows. ``bm25_state.tokenizer`` is the terms.TOKENIZER_VERSION the postings were made
# with: the store rebuilds them from the chunk text when it differs.
POSTINGS_DDL = """
        CREATE TABLE postings (
            term_id BIGINT NOT NULL,
            ckey BIGINT NOT NULL,
            tf INTEGER NOT NULL,
            dl INTEGER NOT NULL
        );
        CREATE TABLE bm25_state (
            tokenizer VARCHAR NOT NULL,
            unsorted BIGINT NOT NULL
        );
"""

# The migration that drops the answer tables from the index (their rows copied out first).
ANSWERS_MOVED_OUT = 7

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE documents (
            doc_id VARCHAR PRIMARY KEY,       -- sha256 of the bytes
            path VARCHAR NOT NULL,            -- where it was first (or last) seen
            title VARCHAR NOT NULL,
            version INTEGER NOT NULL,         -- 1 for the first bytes seen at a path, then 2, ...
            status VARCHAR NOT NULL,
            error VARCHAR NOT NULL DEFAULT '',
            pages INTEGER NOT NULL,
            chunks INTEGER NOT NULL,
            bad_pages VARCHAR NOT NULL DEFAULT '',   -- comma-separated physical page numbers
            size BIGINT NOT NULL,
            mtime DOUBLE NOT NULL,
            indexed_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            superseded BOOLEAN NOT NULL DEFAULT false
        );
        -- Which bytes live at which path now. Moving a file keeps its doc_id and chunks.
        CREATE TABLE files (
            path VARCHAR PRIMARY KEY,
            doc_id VARCHAR,                   -- NULL while the file could not be read
            size BIGINT NOT NULL,
            mtime DOUBLE NOT NULL,
            status VARCHAR NOT NULL,
            error VARCHAR NOT NULL DEFAULT '',
            removed BOOLEAN NOT NULL DEFAULT false,
            seen_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        );
        CREATE TABLE pages (
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,            -- 1-based physical page
            label VARCHAR NOT NULL,
            width DOUBLE NOT NULL,
            height DOUBLE NOT NULL,
            rotation INTEGER NOT NULL,
            quality VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            PRIMARY KEY (doc_id, page)
        );
        CREATE TABLE chunks (
            chunk_id VARCHAR PRIMARY KEY,     -- "{doc_id[:16]}:{page}:{index}"
            ckey BIGINT NOT NULL,             -- compact integer key for postings and vectors
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            text VARCHAR NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL,
            section VARCHAR NOT NULL DEFAULT '',
            n_terms INTEGER NOT NULL
        );
        """
        + POSTINGS_DDL
        + """
        CREATE TABLE embeddings (
            ckey BIGINT NOT NULL,
            model_id VARCHAR NOT NULL,
            vec FLOAT[] NOT NULL
        );
        """,
    ),
    (
        2,
        """
        -- Answers are an audit record: what was asked, what the model said, what it cited,
        -- in which version of which document, and what Folio thought of each sentence.
        CREATE TABLE answers (
            answer_id VARCHAR PRIMARY KEY,
            question VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            style VARCHAR NOT NULL,
            model_id VARCHAR NOT NULL,
            status VARCHAR NOT NULL,           -- finished | no_basis | cancelled | failed
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            payload VARCHAR NOT NULL           -- JSON: sources, citations, claims, hallucinated
        );
        CREATE TABLE judge_cache (
            sentence_sha VARCHAR NOT NULL,
            chunk_id VARCHAR NOT NULL,
            supported BOOLEAN NOT NULL,
            PRIMARY KEY (sentence_sha, chunk_id)
        );
        """,
    ),
    (
        3,
        """
        -- The version of the ingest rules (title, section names) a document's title and
        -- chunk sections were made with: an index run re-derives older ones.
        ALTER TABLE documents ADD COLUMN rules INTEGER NOT NULL DEFAULT 0;
        -- What an answer was asked within: a JSON list of file and folder paths ('' = all).
        ALTER TABLE answers ADD COLUMN scope VARCHAR NOT NULL DEFAULT '';
        """,
    ),
    (
        4,
        """
        -- Pages read by OCR: the mean confidence of their lines (0: the page's own text),
        -- and per document how many pages that is.
        ALTER TABLE pages ADD COLUMN ocr_confidence DOUBLE NOT NULL DEFAULT 0;
        ALTER TABLE documents ADD COLUMN ocr_pages INTEGER NOT NULL DEFAULT 0;
        -- One row per line OCR read: where its text sits in the page text and its box
        -- (points, the unrotated page, origin bottom-left): the viewer highlights with it.
        CREATE TABLE ocr_lines (
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL,
            x0 DOUBLE NOT NULL,
            y0 DOUBLE NOT NULL,
            x1 DOUBLE NOT NULL,
            y1 DOUBLE NOT NULL
        );
        """,
    ),
    (
        5,
        """
        -- The judge answers yes, partial or no (core/verdicts/judge.py); rows from before
        -- keep '' and are read from ``supported``.
        ALTER TABLE judge_cache ADD COLUMN answer VARCHAR NOT NULL DEFAULT '';
        """,
    ),
    (
        6,
        """
        -- What a document's chunks were cut for: '<chunker version>:<embedder id>' (chunk
        -- sizes are counted in the embedder's tokens). An index run or a re-embed re-cuts
        -- the documents whose value differs from the current one. Documents from before
        -- were cut by chunker 1 for the embedder their vectors come from.
        ALTER TABLE documents ADD COLUMN chunked_with VARCHAR NOT NULL DEFAULT '';
        UPDATE documents SET chunked_with = '1:' || v.model_id
        FROM (SELECT c.doc_id, min(e.model_id) AS model_id FROM chunks c
              JOIN embeddings e ON e.ckey = c.ckey GROUP BY c.doc_id) v
        WHERE documents.doc_id = v.doc_id;
        """,
    ),
    (
        ANSWERS_MOVED_OUT,
        """
        -- Saved answers and the judge's cache live in their own file now
        -- (core/library/answer_records.py); the store copies them there just before this
        -- runs (Store._copy_answers_out), so the index holds only what can be rebuilt.
        DROP TABLE IF EXISTS answers;
        DROP TABLE IF EXISTS judge_cache;
        """,
    ),
    (
        8,
        """
        -- Documents in other formats than PDF (core/ingest/formats): the format ('pdf',
        -- 'html', 'epub', 'docx', 'odt', 'pptx', 'md', 'txt'). Their pages are parts (an
        -- EPUB spine item's or a heading-bounded section, a slide), and each part's blocks
        -- (heading, paragraph, list item, table row, code) with their character range in
        -- the part's text: the document view renders them, a locator counts paragraphs.
        ALTER TABLE documents ADD COLUMN format VARCHAR NOT NULL DEFAULT 'pdf';
        CREATE TABLE blocks (
            doc_id VARCHAR NOT NULL,
            page INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            kind VARCHAR NOT NULL,
            level INTEGER NOT NULL,
            char_start INTEGER NOT NULL,
            char_end INTEGER NOT NULL
        );
        """,
    ),
]
LATEST = MIGRATIONS[-1][0]


def rollback(cur: DuckDBPyConnection) -> None:
    """Roll back the cursor's transaction, if DuckDB has not already: after some failures
    (a full disk) it aborts the transaction itself, and a second ROLLBACK would raise
    "no transaction is active" over the error that matters."""
    try:
        cur.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - the original error is the one to raise
        logger.debug("rollback after a failed write: %s", "no transaction", exc_info=True)


def current_version(con: DuckDBPyConnection) -> int:
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(con: DuckDBPyConnection, before: Mapping[int, Callable[[DuckDBPyConnection], None]] | None = None) -> int:
    """Apply the migrations the database lacks, each in its own transaction; ``before``
    (number -> step) runs a step of Python just before that migration (e.g. copying rows
    out of tables it drops; a step must be safe to run again: a crash may come between it
    and its migration)."""
    version = current_version(con)
    for number, sql in MIGRATIONS:
        if number <= version:
            continue
        if before and number in before:
            before[number](con)
        logger.info("applying migration %d", number)
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(sql)
            con.execute("INSERT INTO schema_version VALUES (?)", [number])
            con.execute("COMMIT")
        except Exception:
            rollback(con)
            raise
        version = number
    return version
