"""The BM25 postings table: writing it, keeping it sorted, rebuilding it. Qt-free.

Rows are ``(term_id, ckey, tf, dl)`` (schema in migrations.POSTINGS_DDL). A query reads
the postings of a handful of terms; DuckDB skips every row group whose term_id range
holds none of them, so the table is kept sorted by term_id: rebuilds write it sorted,
per-document writes append an unsorted tail, and :func:`maybe_compact` re-sorts the
whole table once that tail outgrows :data:`COMPACT_SHARE` of it (amortised: each row
is re-sorted a bounded number of times as a library grows).

All functions take a DuckDB cursor inside the caller's transaction, except
:func:`maybe_compact` and :func:`ensure_current`, which open their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.library.migrations import POSTINGS_DDL, rollback
from desktop_app.core.text import words as termlib

if TYPE_CHECKING:
    import pyarrow as pa
    from duckdb import DuckDBPyConnection

logger = logging.getLogger(__name__)

BM25_K1 = 1.2
BM25_B = 0.75
COMPACT_MIN_ROWS = 200_000  # never re-sort for a tail smaller than this
COMPACT_SHARE = 0.2  # re-sort when the unsorted tail exceeds this share of all rows


def arrow_rows(chunk_terms: Iterable[tuple[int, Mapping[str, int]]]) -> pa.Table:
    """The postings of ``(ckey, {term: tf})`` pairs as an Arrow table sorted by term_id."""
    import pyarrow as pa

    ids: list[int] = []
    keys: list[int] = []
    tfs: list[int] = []
    dls: list[int] = []
    term_id = termlib.term_id
    for key, counts in chunk_terms:
        dl = sum(counts.values())
        for term, tf in counts.items():
            ids.append(term_id(term))
            keys.append(key)
            tfs.append(tf)
            dls.append(dl)
    id_arr = np.asarray(ids, dtype=np.int64)
    order = np.lexsort((np.asarray(keys, dtype=np.int64), id_arr)) if ids else np.zeros(0, np.int64)
    return pa.table({
        "term_id": pa.array(id_arr[order]),
        "ckey": pa.array(np.asarray(keys, dtype=np.int64)[order]),
        "tf": pa.array(np.asarray(tfs, dtype=np.int32)[order]),
        "dl": pa.array(np.asarray(dls, dtype=np.int32)[order]),
    })


def append(cur: DuckDBPyConnection, ckeys: Sequence[int], chunk_terms: Sequence[Mapping[str, int]]) -> int:
    """Append the postings of new chunks (unsorted tail); returns the rows written."""
    table = arrow_rows(zip(ckeys, chunk_terms, strict=True))
    if table.num_rows == 0:
        return 0
    cur.register("postings_in", table)
    try:
        cur.execute("INSERT INTO postings SELECT * FROM postings_in")
    finally:
        cur.unregister("postings_in")
    cur.execute("UPDATE bm25_state SET unsorted = unsorted + ?", [table.num_rows])
    return int(table.num_rows)


def replace_all(cur: DuckDBPyConnection, chunk_terms: Iterable[tuple[int, Mapping[str, int]]]) -> int:
    """Replace every posting, written sorted; returns the rows written."""
    import pyarrow as pa

    table = arrow_rows(chunk_terms)
    cur.execute("DELETE FROM postings")
    if table.num_rows:
        cur.register("postings_in", table)
        try:
            cur.execute("INSERT INTO postings SELECT * FROM postings_in")
        finally:
            cur.unregister("postings_in")
        # Chunk lengths follow the tokenizer: BM25 normalises by their average.
        keys, first = np.unique(table.column("ckey").to_numpy(), return_index=True)
        lengths = pa.table({"ckey": keys, "dl": table.column("dl").to_numpy()[first]})
        cur.register("lengths_in", lengths)
        try:
            cur.execute("UPDATE chunks SET n_terms = l.dl FROM lengths_in l WHERE chunks.ckey = l.ckey")
        finally:
            cur.unregister("lengths_in")
    _set_state(cur, termlib.TOKENIZER_VERSION, 0)
    return int(table.num_rows)


def _set_state(cur: DuckDBPyConnection, tokenizer: str, unsorted: int) -> None:
    cur.execute("DELETE FROM bm25_state")
    cur.execute("INSERT INTO bm25_state VALUES (?, ?)", [tokenizer, unsorted])


def state(cur: DuckDBPyConnection) -> tuple[str, int, int]:
    """(tokenizer version, unsorted tail rows, all rows)."""
    rows = cur.execute(
        "SELECT (SELECT max(tokenizer) FROM bm25_state), (SELECT coalesce(max(unsorted), 0)"
        " FROM bm25_state), (SELECT count(*) FROM postings)"
    ).fetchall()  # fetchall: a half-read result blocks the cursor's next relation query
    return (str(rows[0][0] or ""), int(rows[0][1]), int(rows[0][2])) if rows else ("", 0, 0)


def needs_compaction(unsorted: int, total: int) -> bool:
    return unsorted > max(COMPACT_MIN_ROWS, COMPACT_SHARE * total)


def compact(cur: DuckDBPyConnection) -> None:
    """Re-sort the whole table by term_id, in one transaction of plain deletes and
    inserts, so that a search running meanwhile keeps reading its snapshot."""
    cur.execute("BEGIN TRANSACTION")
    try:
        cur.execute("CREATE TEMP TABLE postings_sorted AS SELECT * FROM postings ORDER BY term_id, ckey")
        cur.execute("DELETE FROM postings")
        cur.execute("INSERT INTO postings SELECT * FROM postings_sorted")
        cur.execute("DROP TABLE postings_sorted")
        cur.execute("UPDATE bm25_state SET unsorted = 0")
        cur.execute("COMMIT")
    except Exception:
        rollback(cur)
        raise


def maybe_compact(cur: DuckDBPyConnection) -> bool:
    _, unsorted, total = state(cur)
    if not needs_compaction(unsorted, total):
        return False
    logger.info("re-sorting %d postings (%d unsorted)", total, unsorted)
    compact(cur)
    return True


def ensure_needed(cur: DuckDBPyConnection) -> bool:
    """Whether the postings were made by another tokenizer version or in an older layout."""
    columns = {r[0] for r in cur.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'postings'"
    ).fetchall()}
    tables = {r[0] for r in cur.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_name = 'bm25_state'"
    ).fetchall()}
    if "term_id" in columns and tables:
        version, _, _ = state(cur)
        return bool(version != termlib.TOKENIZER_VERSION)
    return True


def ensure_current(cur: DuckDBPyConnection, chunk_texts: Callable[[], Iterable[tuple[int, str]]]) -> bool:
    """Bring the postings up to this tokenizer; ``chunk_texts()`` yields (ckey, text).

    Rebuilds them from the chunk text when they were made by another tokenizer version
    or in an older layout (a term column instead of term_id). Returns whether it did.
    """
    if not ensure_needed(cur):
        return False
    columns = {r[0] for r in cur.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'postings'"
    ).fetchall()}
    tables = {r[0] for r in cur.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_name = 'bm25_state'"
    ).fetchall()}
    cur.execute("BEGIN TRANSACTION")
    try:
        if "term_id" not in columns or not tables:
            cur.execute("DROP TABLE IF EXISTS postings")
            cur.execute("DROP TABLE IF EXISTS bm25_state")
            cur.execute(POSTINGS_DDL)
        rows = replace_all(cur, ((k, termlib.term_counts(t)) for k, t in chunk_texts()))
        cur.execute("COMMIT")
    except Exception:
        rollback(cur)
        raise
    logger.info("rebuilt %d postings for tokenizer %s", rows, termlib.TOKENIZER_VERSION)
    return True


# --------------------------------------------------------------------------- BM25 in SQL

DF_SQL = """
SELECT p.term_id, count(*) FROM postings p
SEMI JOIN (SELECT unnest(?::BIGINT[]) AS term_id) q ON q.term_id = p.term_id
GROUP BY p.term_id
"""
# The weighted query terms ($ids, $w, and $bit: bit i marks term i) and the BM25 of a chunk
# holding them, shared by the statements below.
_QUERY_TERMS = """WITH q AS (SELECT unnest($ids::BIGINT[]) AS term_id, unnest($w::DOUBLE[]) AS w,
                  unnest($bit::BIGINT[]) AS bit)"""
_BM25 = f"sum(q.w * p.tf * {BM25_K1 + 1} / (p.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * p.dl / $avgdl)))"
_SCORED = f"""{_QUERY_TERMS}
SELECT p.ckey, {_BM25} AS score, bit_or(q.bit)
FROM postings p JOIN q ON q.term_id = p.term_id"""
# BM25 of every chunk holding a scored query term: the best ``k``, each with a bit mask
# of the query terms it holds.
SCORE_SQL = f"""{_SCORED}
GROUP BY p.ckey ORDER BY score DESC, p.ckey LIMIT $k
"""
# The same, among the chunks of $within only (a question asked within some documents).
SCORE_WITHIN_SQL = f"""{_SCORED}
SEMI JOIN (SELECT unnest($within::BIGINT[]) AS ckey) s ON s.ckey = p.ckey
GROUP BY p.ckey ORDER BY score DESC, p.ckey LIMIT $k
"""
# The same BM25 for given chunks only (dense candidates the first query did not return).
EXTRA_SQL = f"""{_SCORED}
WHERE p.ckey IN (SELECT unnest($extra::BIGINT[]))
GROUP BY p.ckey
"""
