"""Hybrid retrieval: BM25 in DuckDB SQL fused with exact vector search in numpy. Qt-free.

The embedder (all-MiniLM-L6-v2) only knows English, so fusion is weighted per query
language: a Chinese question leans on BM25 over character bigrams, an English one
takes both. Weighted reciprocal-rank fusion keeps scores comparable across retrievers.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from desktop_app.core import terms as termlib
from desktop_app.core.store import Store
from desktop_app.core.types import Passage

logger = logging.getLogger(__name__)

BM25_K1 = 1.2
BM25_B = 0.75
RRF_K = 60
# Fusion weights (bm25, dense) by query language; calibrated with bench/retrieval.py.
WEIGHTS_LATIN = (1.0, 0.6)
WEIGHTS_CJK = (1.0, 0.15)
CANDIDATES = 50


@dataclass(frozen=True)
class Retrieval:
    passages: list[Passage]
    coverage: float  # idf-weighted share of the query's terms found in the best passage
    best_cosine: float  # cosine of the best dense hit (0 without an embedder)
    cjk: bool


class VectorIndex:
    """All chunk vectors of one embedder as a normalised float32 matrix in memory."""

    def __init__(self, store: Store, model_id: str) -> None:
        self.store = store
        self.model_id = model_id
        self._generation = -1
        self._keys = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._lock = threading.Lock()

    def refresh(self) -> None:
        with self._lock:
            if self._generation == self.store.generation:
                return
            generation = self.store.generation
            self._keys, self._matrix = self.store.load_vectors(self.model_id)
            self._generation = generation

    def search(self, query_vec: np.ndarray, k: int) -> list[tuple[int, float]]:
        self.refresh()
        if self._matrix.shape[0] == 0:
            return []
        scores = self._matrix @ query_vec.astype(np.float32).reshape(-1)
        k = min(k, scores.shape[0])
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(self._keys[i]), float(scores[i])) for i in top]

    def __len__(self) -> int:
        self.refresh()
        return int(self._matrix.shape[0])


class Retriever:
    def __init__(self, store: Store, embedder: object | None = None) -> None:
        self.store = store
        self.embedder = embedder
        model_id = getattr(embedder, "model_id", "") if embedder is not None else ""
        self.vectors = VectorIndex(store, model_id) if embedder is not None else None
        self._stats_generation = -1
        self._n = 0
        self._avgdl = 1.0

    # ------------------------------------------------------------------ BM25

    def _stats(self) -> tuple[int, float]:
        if self._stats_generation != self.store.generation:
            row = self.store.query("SELECT count(*), coalesce(avg(n_terms), 1) FROM chunks")[0]
            self._n, self._avgdl = int(row[0]), float(row[1]) or 1.0
            self._stats_generation = self.store.generation
        return self._n, self._avgdl

    def bm25(self, query: str, k: int = CANDIDATES) -> tuple[list[tuple[int, float]], dict[str, float]]:
        """Top ``k`` (ckey, score) and the idf of each query term."""
        counts = Counter(termlib.tokenize(query))
        if not counts:
            counts = Counter(termlib.tokenize(query, keep_stopwords=True))
        if not counts:
            return [], {}
        n, avgdl = self._stats()
        if n == 0:
            return [], {}
        terms = list(counts)
        df_rows = self.store.query(
            "SELECT term, count(*) FROM postings WHERE term IN (SELECT unnest(?::VARCHAR[])) GROUP BY term",
            [terms],
        )
        idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df_rows}
        present = [t for t in terms if t in idf]
        if not present:
            return [], {t: 0.0 for t in terms}
        weights = [idf[t] * counts[t] for t in present]
        rows = self.store.query(
            f"""
            WITH q AS (SELECT unnest(?::VARCHAR[]) AS term, unnest(?::DOUBLE[]) AS w)
            SELECT p.ckey,
                   sum(q.w * p.tf * {BM25_K1 + 1} /
                       (p.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * c.n_terms / ?))) AS score
            FROM postings p JOIN q ON q.term = p.term JOIN chunks c ON c.ckey = p.ckey
            GROUP BY p.ckey ORDER BY score DESC, p.ckey LIMIT ?
            """,
            [present, weights, avgdl, k],
        )
        idf.update({t: 0.0 for t in terms if t not in idf})
        return [(int(r[0]), float(r[1])) for r in rows], idf

    # ------------------------------------------------------------------ dense

    def dense(self, query: str, k: int = CANDIDATES) -> list[tuple[int, float]]:
        if self.embedder is None or self.vectors is None:
            return []
        vec = self.embedder.embed([query])[0]  # type: ignore[attr-defined]
        return self.vectors.search(vec, k)

    # ------------------------------------------------------------------ hybrid

    def search(self, query: str, k: int = 5) -> Retrieval:
        cjk = termlib.is_cjk_query(query)
        w_bm25, w_dense = WEIGHTS_CJK if cjk else WEIGHTS_LATIN
        lexical, idf = self.bm25(query, CANDIDATES)
        semantic = self.dense(query, CANDIDATES) if w_dense > 0 else []
        fused: dict[int, float] = {}
        for rank, (key, _) in enumerate(lexical):
            fused[key] = fused.get(key, 0.0) + w_bm25 / (RRF_K + rank + 1)
        for rank, (key, _) in enumerate(semantic):
            fused[key] = fused.get(key, 0.0) + w_dense / (RRF_K + rank + 1)
        order = sorted(fused, key=lambda key: (-fused[key], key))[:k]
        by_key = self.store.passages(order)
        passages = [replace(by_key[key], score=fused[key]) for key in order if key in by_key]
        coverage = self._coverage(passages, idf)
        best_cosine = semantic[0][1] if semantic else 0.0
        return Retrieval(passages=passages, coverage=coverage, best_cosine=best_cosine, cjk=cjk)

    @staticmethod
    def _coverage(passages: Sequence[Passage], idf: dict[str, float]) -> float:
        total = sum(idf.values())
        if not passages or total <= 0:
            return 0.0
        best = 0.0
        for passage in passages:
            found = set(termlib.tokenize(passage.text))
            best = max(best, sum(w for t, w in idf.items() if t in found) / total)
        return best
