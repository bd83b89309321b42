"""Vectors stored under an older name of the same embedder file are found, not silently
dropped from search (library/vectors.py adopt_vectors)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from tests.core.search.test_retrieve import add_document
from tests.fakes import FakeEmbedder

OLD = "all-MiniLM-L6-v2-int8:8199be6f699a"  # the folder's name, as libraries stored it
NEW = "all-minilm-l6-v2-int8:8199be6f699a"  # the manifest id the catalog opens it under


class Named(FakeEmbedder):
    def __init__(self, model_id: str) -> None:
        super().__init__()
        self.model_id = model_id


def test_an_old_name_of_the_same_file_keeps_its_vectors(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.duckdb")
    add_document(store, Named(OLD), "spec", [["The server returns 414 when the URI is too long."],
                                             ["Persistent connections are the default."]], chunked_with=f"1:{OLD}")
    assert store.documents_chunked_otherwise(f"1:{NEW}") == []  # not "cut for another embedder"
    keys, matrix = store.load_vectors(NEW)
    assert len(keys) == 2 and matrix.shape == (2, 64)
    assert store.chunks_without_vectors(NEW) == []  # nothing to embed again
    assert store._query("SELECT DISTINCT model_id FROM embeddings") == [(NEW,)]
    hits = Retriever(store, Named(NEW)).search("Which status code for a URI that is too long?", 1)
    assert hits.passages and "414" in hits.passages[0].text
    store.close()


def test_another_file_or_two_candidates_are_not_adopted(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.duckdb")
    add_document(store, Named("minilm:111111111111"), "a", [["alpha beta gamma"]])
    assert store.adopt_vectors("minilm:222222222222") == 0  # another file's vectors stay its own
    add_document(store, Named("x:333333333333"), "b", [["delta"]])
    add_document(store, Named("y:333333333333"), "c", [["epsilon"]])
    assert store.adopt_vectors("z:333333333333") == 0  # which one? neither
    assert set(np.asarray(store.load_vectors("minilm:111111111111")[0]).tolist())
    store.close()
