"""The index pipeline with the fake embedder: parsing runs ahead of embedding, cancel
stops within one embedder call and keeps whole files only, a resumed run redoes
nothing, every chunk gets its own vector, and a bug surfaces instead of hanging."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from desktop_app.core.ingest import chunking, indexing
from desktop_app.core.ingest.extract import extract_document
from desktop_app.core.ingest.indexing import Indexer
from desktop_app.core.library.store import Store
from desktop_app.core.types import ExtractedDocument, FileIndexed, IndexSummary
from tests.fakes import FakeEmbedder
from tests.pdfgen import write_pdf

WORDS = "pump valve seal bearing tenant landlord deposit invoice ledger audit clause permit".split()


def make_folder(root: Path, files: int = 4, pages: int = 3) -> Path:
    folder = root / "docs"
    folder.mkdir()
    for number in range(files):
        content = [
            [f"Section {page + 1}"] + [
                " ".join(WORDS[(number + page + line + k) % len(WORDS)] for k in range(9)) + f" {line}."
                for line in range(30)
            ]
            for page in range(pages)
        ]
        write_pdf(folder / f"doc{number}.pdf", content, title=f"Doc {number}")
    return folder


class SlowEmbedder(FakeEmbedder):
    """The fake embedder, taking ``delay`` seconds per call; ``on_call`` runs first."""

    def __init__(self, delay: float = 0.0, on_call: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self.delay = delay
        self.on_call = on_call

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.on_call is not None:
            self.on_call(self.calls)
        time.sleep(self.delay)
        return super().embed(texts)


def library(store: Store) -> dict[str, Any]:
    vectors = {
        chunk_id: np.asarray(vec, dtype=np.float32)
        for chunk_id, vec in store._query(
            "SELECT c.chunk_id, e.vec FROM embeddings e JOIN chunks c ON c.ckey = e.ckey"
        )
    }
    docs = store._query("SELECT doc_id, chunks FROM documents WHERE NOT superseded ORDER BY doc_id")
    per_doc = dict(store._query("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))
    return {"chunk_ids": store.chunk_ids(), "vectors": vectors, "docs": docs, "per_doc": per_doc}


def test_every_chunk_is_stored_with_its_own_vector(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=2)
    store = Store(tmp_path / "lib.duckdb")
    summary = Indexer(store, FakeEmbedder(), workers=1).run(folder, lambda _e: None)
    assert summary.documents == 2 and summary.chunks > 10
    texts = dict(store._query("SELECT chunk_id, text FROM chunks"))
    lib = library(store)
    assert sorted(lib["vectors"]) == lib["chunk_ids"]
    expected = FakeEmbedder().embed([texts[c] for c in lib["chunk_ids"]])
    stored = np.vstack([lib["vectors"][c] for c in lib["chunk_ids"]])
    assert np.allclose(stored, expected, atol=1e-6)  # embedded out of order, stored in place


def test_parsing_runs_ahead_while_the_embedder_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path, files=5, pages=1)
    parsed = {str(p): extract_document(str(p)) for p in sorted(folder.glob("*.pdf"))}
    handed = threading.Semaphore(0)

    def parse_many(paths: Sequence[str], **_kw: Any) -> Iterator[ExtractedDocument]:
        for path in paths:
            yield parsed[path]
            handed.release()

    monkeypatch.setattr(indexing.parse_pool, "parse_many", parse_many)
    ahead: list[bool] = []

    def first_call_waits_for_the_parser(call: int) -> None:
        if call == 0:  # three more documents are handed over while this one embeds
            ahead.append(all(handed.acquire(timeout=5) for _ in range(3)))

    store = Store(tmp_path / "lib.duckdb")
    indexer = Indexer(store, SlowEmbedder(on_call=first_call_waits_for_the_parser), workers=1)
    summary = indexer.run(folder, lambda _e: None)
    assert ahead == [True]
    assert summary.documents == 5
    assert indexer.stages.embedded_chunks == summary.chunks


def test_cancel_while_embedding_stops_promptly_keeps_whole_files_and_resumes(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=4, pages=10)  # ~20 chunks: several embedder calls a file
    clean_store = Store(tmp_path / "clean.duckdb")
    Indexer(clean_store, FakeEmbedder(), workers=1).run(folder, lambda _e: None)
    clean = library(clean_store)

    cancel = threading.Event()
    events: list[Any] = []
    cancelled_at: list[float] = []

    def on_call(call: int) -> None:
        if sum(isinstance(e, FileIndexed) for e in events) >= 2 and not cancel.is_set():
            cancel.set()  # mid-file: the third document is being embedded
            cancelled_at.append(call)

    store = Store(tmp_path / "lib.duckdb")
    embedder = SlowEmbedder(delay=0.05, on_call=on_call)
    summary = Indexer(store, embedder, workers=1).run(folder, events.append, cancel.is_set)
    assert summary.cancelled
    # Promptly: no embedder call starts after the one during which cancel was set (counted,
    # not timed: a busy machine makes each call slower, never the count larger).
    assert embedder.calls == cancelled_at[0] + 1, (embedder.calls, cancelled_at)
    partial = library(store)
    assert len(partial["docs"]) == 2  # the file being embedded was not written
    assert all(partial["per_doc"][doc] == n for doc, n in partial["docs"])
    assert sorted(partial["vectors"]) == partial["chunk_ids"]

    resumed: list[Any] = []
    again = FakeEmbedder()
    summary = Indexer(store, again, workers=1).run(folder, resumed.append)
    assert not summary.cancelled and summary.unchanged == 2
    done_before = {e.path for e in events if isinstance(e, FileIndexed)}
    assert {e.path for e in resumed if isinstance(e, FileIndexed) and e.unchanged} == done_before
    assert again.embedded == len(clean["chunk_ids"]) - len(partial["chunk_ids"])  # nothing twice
    final = library(store)
    assert final["chunk_ids"] == clean["chunk_ids"] and final["docs"] == clean["docs"]


def test_a_bug_while_preparing_documents_surfaces_and_stops_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_folder(tmp_path, files=3, pages=1)

    def broken(*_a: Any, **_kw: Any) -> list[Any]:
        raise RuntimeError("chunker bug")

    monkeypatch.setattr(chunking, "chunk_document", broken)
    store = Store(tmp_path / "lib.duckdb")
    with pytest.raises(RuntimeError, match="chunker bug"):
        Indexer(store, FakeEmbedder(), workers=2).run(folder, lambda _e: None)
    assert not [p for p in multiprocessing.active_children() if p.name == "folio-parse"]
    assert store.counts()["documents"] == 0


def test_a_file_deleted_during_the_run_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path, files=2, pages=1)
    real_scan = indexing.scan_folder
    monkeypatch.setattr(indexing, "scan_folder", lambda f: [*real_scan(f), f / "gone.pdf"])
    summary = Indexer(Store(tmp_path / "lib.duckdb"), FakeEmbedder(), workers=1).run(folder, lambda _e: None)
    assert isinstance(summary, IndexSummary) and summary.documents == 2 and not summary.failed


def test_reindex_keeps_what_it_embedded_when_cancelled_and_finishes_later(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=3, pages=10)
    store = Store(tmp_path / "lib.duckdb")
    embedder = FakeEmbedder()
    Indexer(store, embedder, workers=1).run(folder, lambda _e: None)
    total = store.counts()["chunks"]
    assert total > indexing.EMBED_BATCH
    store.drop_vectors()
    cancel = threading.Event()
    slow = SlowEmbedder(on_call=lambda call: cancel.set() if call >= 2 else None)
    written = Indexer(store, slow).reindex(lambda _e: None, cancel.is_set)
    assert 0 < written < total and store.counts()["vectors"] == written
    rest = Indexer(store, FakeEmbedder()).reindex(lambda _e: None)
    assert rest == total - written and store.counts()["vectors"] == total


def test_a_file_that_timed_out_is_tried_again_on_the_next_run(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=2, pages=1)
    store = Store(tmp_path / "lib.duckdb")
    first = Indexer(store, FakeEmbedder(), workers=1, parse_timeout_s=0.001).run(folder, lambda _e: None)
    assert isinstance(first, IndexSummary)
    assert {f.status for f in first.failed} == {"timed_out"} and first.documents == 0
    second = Indexer(store, FakeEmbedder(), workers=1).run(folder, lambda _e: None)
    assert isinstance(second, IndexSummary)
    assert second.documents == 2 and not second.failed and second.unchanged == 0
    third = Indexer(store, FakeEmbedder(), workers=1).run(folder, lambda _e: None)
    assert isinstance(third, IndexSummary) and third.unchanged == 2


def test_titles_and_sections_made_by_older_rules_are_rederived_without_parsing_or_embedding(tmp_path: Path) -> None:
    """A library indexed before today's title and section rules: the next run fixes its
    names from the first page and the stored text, and re-embeds nothing."""
    folder = make_folder(tmp_path, files=2, pages=3)
    store = Store(tmp_path / "lib.duckdb")
    embedder = FakeEmbedder()
    indexer = Indexer(store, embedder, workers=1)
    indexer.run(folder, lambda event: None)
    assert store.documents_before_rules(indexing.INGEST_RULES) == []
    doc = store.documents()[0]
    assert doc.title == "doc0"  # "Doc 0" reads like a tool's default ("Document1"): the file's name
    right_sections = {key: store.passages([key])[key].section for key, *_ in store.chunk_spans(doc.doc_id)}
    # As an older Folio left it: the metadata's file name as the title, a boundary as a section.
    store.apply_rules(doc.doc_id, "doc0.txt", dict.fromkeys(right_sections, "--THIS_STRING_SEPARATES--"), 0)
    assert store.documents_before_rules(indexing.INGEST_RULES) == [(doc.doc_id, doc.path)]
    calls = embedder.calls
    events: list[Any] = []
    summary = indexer.run(folder, events.append)
    assert summary.unchanged == 2 and embedder.calls == calls
    assert all(e.unchanged for e in events if isinstance(e, FileIndexed))
    assert store.documents_before_rules(indexing.INGEST_RULES) == []
    assert store.documents()[0].title == "doc0"
    assert {key: store.passages([key])[key].section for key in right_sections} == right_sections
    store.close()


def test_reindex_rederives_what_older_rules_named_in_every_folder(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=1, pages=2)
    store = Store(tmp_path / "lib.duckdb")
    indexer = Indexer(store, FakeEmbedder(), workers=1)
    indexer.run(folder, lambda event: None)
    doc = store.documents()[0]
    store.apply_rules(doc.doc_id, "Binder1.pdf", {}, 0)
    indexer.reindex(lambda event: None)
    assert store.documents()[0].title == "doc0" and store.documents_before_rules(indexing.INGEST_RULES) == []
    store.close()
