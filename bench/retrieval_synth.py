"""Synthetic libraries for ``bench/retrieval.py``: how query latency grows with size.

A library of N chunks is written through ``Store.write_document`` (the indexer's own
write path: Arrow inserts, postings appended and re-sorted as they grow), as documents of
:data:`CHUNKS_PER_DOC` chunks. Chunk text is drawn word by word from the word frequencies
of real chunk text (the QA libraries), with lengths drawn from real chunk lengths, plus
a Heaps'-law stream of new rare words, so document frequencies of question terms look
like a real library's. Vectors are random unit 384-d float32 (latency does not depend on
their content). One page per chunk, so the pages table grows too.

Each library is kept in ``WORK/synthetic_N.duckdb`` with its build time beside it, and
reused on the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.text import words as termlib
from desktop_app.core.types import Chunk, DocStatus, ExtractedDocument, PageText

CHUNKS_PER_DOC = 200
DIM = 384


def word_model(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(words, probabilities, chunk lengths in words) of real chunk text."""
    counts: Counter[str] = Counter()
    lengths = []
    for text in texts:
        words = text.split()
        counts.update(words)
        lengths.append(len(words))
    words = list(counts)
    freq = np.array([counts[w] for w in words], dtype=np.float64)
    return words, freq / freq.sum(), np.array(lengths or [80], dtype=np.int64)


def _documents(size: int, texts: Sequence[str], seed: int = 7) -> Any:
    rng = np.random.default_rng(seed)
    words, prob, lengths = word_model(texts)
    vocab = np.array(words, dtype=object)
    cdf = np.cumsum(prob)
    new_word = 0
    for first in range(0, size, CHUNKS_PER_DOC):
        n = min(CHUNKS_PER_DOC, size - first)
        doc_id = hashlib.sha256(f"synthetic {first}".encode()).hexdigest()
        chunk_texts = []
        for _ in range(n):
            length = int(rng.choice(lengths))
            picks = np.minimum(np.searchsorted(cdf, rng.random(length)), len(vocab) - 1)
            chunk_words = list(vocab[picks])
            # Heaps' law: a large library keeps meeting words it has not seen.
            for _ in range(rng.poisson(1.5)):
                chunk_words.insert(int(rng.integers(0, len(chunk_words) + 1)), f"zq{new_word:x}")
                new_word += 1
            chunk_texts.append(" ".join(chunk_words))
        pages = tuple(
            PageText(page=i + 1, label=str(i + 1), width=612.0, height=792.0, rotation=0, text=t)
            for i, t in enumerate(chunk_texts)
        )
        doc = ExtractedDocument(
            path=f"/synthetic/doc{first // CHUNKS_PER_DOC:06d}.pdf", doc_id=doc_id, size=1, mtime=0.0,
            title=f"Synthetic {first // CHUNKS_PER_DOC}", status=DocStatus.INDEXED,
            page_count=n, pages=pages,
        )
        chunks = [
            Chunk(chunk_id=f"{doc_id[:16]}:{i + 1}:0", doc_id=doc_id, page=i + 1, index=0, text=t,
                  char_start=0, char_end=len(t), section="")
            for i, t in enumerate(chunk_texts)
        ]
        vectors = rng.standard_normal((n, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        yield doc, chunks, vectors


def build(db: Path, size: int, texts: Sequence[str], model_id: str) -> float:
    """Write a synthetic library of ``size`` chunks to ``db``; returns seconds taken."""
    for path in (db, Path(str(db) + ".wal")):
        path.unlink(missing_ok=True)
    started = time.monotonic()
    store = Store(db)
    try:
        for doc, chunks, vectors in _documents(size, texts):
            terms = [dict(termlib.term_counts(c.text)) for c in chunks]
            store.write_document(doc, chunks, terms, vectors, model_id, 1)
    finally:
        store.close()
    seconds = time.monotonic() - started
    Path(str(db) + ".json").write_text(json.dumps({"chunks": size, "build_seconds": seconds}))
    return seconds


def _percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))] if ordered else 0.0


def measure(store: Store, embedder: Any, questions: Sequence[str], k: int = 5) -> dict[str, float]:
    """Median / p95 of ``Retriever.search`` over ``questions`` (after one warm-up that
    loads the vectors), with the medians of its parts."""
    retriever = Retriever(store, embedder)
    retriever.search(questions[0], k)
    walls, cpus, embeds, denses, lexical = [], [], [], [], []
    for q in questions:
        t0, c0 = time.perf_counter(), time.process_time()
        retriever.search(q, k)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        t0 = time.perf_counter()
        vec = embedder.embed_queries([q])[0]
        t1 = time.perf_counter()
        if retriever.vectors is not None:
            retriever.vectors.search(vec, 50)
        t2 = time.perf_counter()
        retriever.bm25(q, 50)
        t3 = time.perf_counter()
        embeds.append(t1 - t0)
        denses.append(t2 - t1)
        lexical.append(t3 - t2)
    ms = 1000.0
    return {
        "p50": _percentile(walls, 50) * ms, "p95": _percentile(walls, 95) * ms,
        "cpu": statistics.median(cpus) * ms, "embed": statistics.median(embeds) * ms,
        "dense": statistics.median(denses) * ms, "bm25": statistics.median(lexical) * ms,
    }


def describe(label: str, chunks: int, m: dict[str, float], extra: str = "") -> str:
    return (
        f"{label:<24} {chunks:>8}  p50 {m['p50']:6.1f}  p95 {m['p95']:6.1f}  cpu {m['cpu']:6.1f}"
        f"  | embed {m['embed']:5.1f}  dense {m['dense']:5.1f}  bm25 {m['bm25']:5.1f}  {extra}"
    )


def synthetic_latency(work: Path, size: int, embedder: Any, questions: Sequence[str],
                      texts: Sequence[str]) -> str:
    db = work / f"synthetic_{size}.duckdb"
    meta = Path(str(db) + ".json")
    built = json.loads(meta.read_text()) if meta.exists() and db.exists() else None
    if built is None or built.get("chunks") != size:
        print(f"building a synthetic library of {size} chunks...", flush=True)
        seconds = build(db, size, texts, str(getattr(embedder, "model_id", "")))
    else:
        seconds = float(built["build_seconds"])
    store = Store(db)
    try:
        loaded = time.monotonic()
        Retriever(store, embedder).vectors.refresh()  # type: ignore[union-attr]
        load = time.monotonic() - loaded
        m = measure(store, embedder, questions)
    finally:
        store.close()
    size_mb = os.path.getsize(db) / 1e6
    return describe(f"synthetic {size // 1000}k", size, m,
                    f"built in {seconds:.0f} s, {size_mb:.0f} MB, vectors load {load:.1f} s")
