"""Chunk sizes are counted in the embedder's tokens: a library cut for one embedder (or an
older chunker) is cut again from its stored pages when the embedder changes, by the next
re-embed or index run, with progress; a cancel keeps whole documents."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from desktop_app.core.ingest import chunking
from desktop_app.core.ingest.indexing import Indexer
from desktop_app.core.library.store import Store
from desktop_app.core.types import IndexProgress
from tests.core.ingest.test_indexing import make_folder
from tests.fakes import FakeEmbedder


class WordyEmbedder(FakeEmbedder):
    """Another embedder whose tokenizer counts three tokens a word (chunks come out smaller)."""

    model_id = "fake-wordy-64"

    def count_tokens(self, text: str) -> int:
        return 3 * max(1, len(text.split()))


def _chunks(store: Store) -> dict[str, int]:
    return dict(store._query("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))  # noqa: SLF001


def test_a_new_embedder_recuts_every_document_on_reembed(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=2)
    store = Store(tmp_path / "lib.duckdb")
    first = Indexer(store, FakeEmbedder(), workers=1)
    first.run(folder, lambda _e: None)
    before = _chunks(store)
    assert first.chunking_key == f"{chunking.CHUNKER_VERSION}:fake-hashing-64"
    assert store.documents_chunked_otherwise(first.chunking_key) == []

    wordy = Indexer(store, WordyEmbedder(), workers=1)
    assert len(store.documents_chunked_otherwise(wordy.chunking_key)) == 2
    events: list[object] = []
    wordy.reindex(events.append)
    after = _chunks(store)
    assert set(after) == set(before) and all(after[d] > before[d] for d in before)  # cut smaller
    assert store.documents_chunked_otherwise(wordy.chunking_key) == []
    progress = [e for e in events if isinstance(e, IndexProgress)]
    assert progress and progress[-1].chunks_done == sum(after.values())
    # every new chunk has a vector of the new embedder, none of the old one is left
    keys, vectors = store.load_vectors(WordyEmbedder.model_id)
    assert len(keys) == sum(after.values()) and vectors.shape[1] == 64
    assert len(store.load_vectors(FakeEmbedder.model_id)[0]) == 0
    texts = dict(store.all_chunk_texts())
    expected = WordyEmbedder().embed_passages([texts[int(k)] for k in keys])
    assert np.allclose(vectors, expected, atol=1e-6)
    # BM25 finds the new chunks
    assert store._query("SELECT count(DISTINCT ckey) FROM postings")[0][0] == sum(after.values())  # noqa: SLF001
    store.close()


def test_an_index_run_recuts_the_documents_of_its_folder_and_a_cancel_keeps_whole_ones(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, files=3)
    store = Store(tmp_path / "lib.duckdb")
    Indexer(store, FakeEmbedder(), workers=1).run(folder, lambda _e: None)
    before = _chunks(store)
    wordy = Indexer(store, WordyEmbedder(), workers=1)
    key = wordy.chunking_key

    def one_document_done() -> bool:
        return len(store.documents_chunked_otherwise(key)) < 3

    assert wordy.rechunk(lambda _e: None, one_document_done, folder) == 1
    stale = {d for d, _ in store.documents_chunked_otherwise(key)}
    after = _chunks(store)
    assert len(stale) == 2 and all((after[d] == before[d]) == (d in stale) for d in before)
    summary = wordy.run(folder, lambda _e: None)  # the next index run finishes the job
    assert not summary.cancelled and summary.unchanged == 3
    assert store.documents_chunked_otherwise(key) == []
    assert all(n > before[d] for d, n in _chunks(store).items())
    store.close()


def test_a_library_from_before_knows_what_its_chunks_were_cut_for(tmp_path: Path) -> None:
    """Migration 6: documents with vectors were cut by chunker 1 for that embedder; the
    ones without vectors are cut again by the next run."""
    import duckdb

    from desktop_app.core.library.migrations import MIGRATIONS, migrate

    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for number, sql in MIGRATIONS[:5]:
        con.execute(sql)
        con.execute("INSERT INTO schema_version VALUES (?)", [number])
    for doc in ("a", "b"):
        con.execute("INSERT INTO documents (doc_id, path, title, version, status, pages, chunks, size, mtime)"
                    " VALUES (?, ?, '', 1, 'indexed', 1, 1, 1, 0)", [doc, f"/{doc}.pdf"])
        con.execute("INSERT INTO chunks VALUES (?, ?, ?, 1, 0, 'text', 0, 4, '', 1)",
                    [f"{doc}:1:0", ord(doc), doc])
    con.execute("INSERT INTO embeddings VALUES (97, 'all-minilm-l6-v2-int8:8199be6f699a', [0.0, 1.0])")
    assert migrate(con) >= 6
    rows = dict(con.execute("SELECT doc_id, chunked_with FROM documents").fetchall())
    assert rows == {"a": "1:all-minilm-l6-v2-int8:8199be6f699a", "b": ""}
    con.close()
