"""The chunks' vectors: the ``embeddings`` table, written through Arrow and loaded as one
matrix per embedder. Qt-free.

:class:`~desktop_app.core.library.store.Store` inherits them; a new document's vectors
are written in its own transaction by ``Store.write_document``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.library.connection import StoreConnection

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

logger = logging.getLogger(__name__)


class LibraryVectors(StoreConnection):
    """Adding, finding missing, dropping and loading vectors (a mixin of ``Store``)."""

    def adopt_vectors(self, model_id: str) -> int:
        """Give ``model_id`` the vectors stored under another name of the same model file.

        An embedder's id is ``name:first 12 hex digits of its file's sha256``. Libraries built
        before the built-in embedders were named by their manifest id hold MiniLM's vectors
        as ``all-MiniLM-L6-v2-int8:8199be6f699a`` (the folder's name), looked up as
        ``all-minilm-l6-v2-int8:8199be6f699a``: without this the dense half of search finds
        no vector, silently (bench/retrieval.py on such a library; docs/evaluation.md,
        "Constants and their figures"), and every document looks cut for another embedder.
        Same file, same vectors: the old name is renamed, in the vectors and in
        ``documents.chunked_with``. Returns how
        many vectors were renamed (checked once per id and Store)."""
        name, _, digest = model_id.rpartition(":")
        if model_id in self._adopted_ids or not name or len(digest) < 12:
            return 0
        self._adopted_ids.add(model_id)
        others = [str(m) for (m,) in self._query(
            "SELECT DISTINCT model_id FROM embeddings WHERE model_id <> ? AND model_id LIKE ?",
            [model_id, f"%:{digest}"])]
        if len(others) != 1 or self._query("SELECT 1 FROM embeddings WHERE model_id = ? LIMIT 1", [model_id]):
            return 0  # nothing to adopt, or not one clear candidate, or vectors under both
        old = others[0]
        with self._write_lock:
            cur = self._cursor()
            cur.execute("BEGIN TRANSACTION")
            try:
                counted = cur.execute("SELECT count(*) FROM embeddings WHERE model_id = ?", [old]).fetchone()
                assert counted is not None  # count(*) has one row
                renamed = int(counted[0])
                cur.execute("UPDATE embeddings SET model_id = ? WHERE model_id = ?", [model_id, old])
                cur.execute("UPDATE documents SET chunked_with = split_part(chunked_with, ':', 1) || ':' || ?"
                            " WHERE chunked_with = split_part(chunked_with, ':', 1) || ':' || ?", [model_id, old])
                cur.execute("COMMIT")
            except Exception:  # search goes on without them rather than failing
                cur.execute("ROLLBACK")
                logger.exception("could not rename the vectors of %s to %s", old, model_id)
                return 0
            self.generation += 1
        logger.info("vectors of %s are now %s's (%d)", old, model_id, renamed)
        return renamed

    def _insert_vectors(self, cur: DuckDBPyConnection, ckeys: Sequence[int], vectors: np.ndarray, model_id: str) -> None:
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

    def chunks_without_vectors(self, model_id: str) -> list[tuple[int, str]]:
        self.adopt_vectors(model_id)
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

    def drop_vectors(self, model_id: str | None = None) -> None:
        with self._write_lock:
            if model_id is None:
                self._cursor().execute("DELETE FROM embeddings")
            else:
                self._cursor().execute("DELETE FROM embeddings WHERE model_id = ?", [model_id])
            self.generation += 1

    def load_vectors(self, model_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(ckeys int64[n], matrix float32[n, dim]) of every live chunk's vector."""
        self.adopt_vectors(model_id)
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
