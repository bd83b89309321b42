"""Asking within a document or folder: retrieval, the evidence gate, the sources and the
history are limited to it; a question its documents cannot answer has no basis even when
another document could answer it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.answer import answering
from desktop_app.core.library.history import export_markdown
from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerStarted, NoBasis
from desktop_app.core.verdicts import Verifier
from tests.core.search.test_retrieve import add_document, places
from tests.fakes import FakeEmbedder, FakeGenerator


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "lib.duckdb")
    yield s
    s.close()


@pytest.fixture()
def library(store: Store) -> tuple[Store, FakeEmbedder]:
    embedder = FakeEmbedder()
    add_document(store, embedder, "http-spec", [
        ["The server returns 414 Request-URI Too Long when the URI is longer than it can handle."],
        ["Caching: a response may be stored by a shared cache unless Cache-Control forbids it."],
    ])
    add_document(store, embedder, "gardening", [
        ["Tomatoes need full sun and regular watering through the summer."],
    ])
    add_document(store, embedder, "sub/websocket", [
        ["The server accepts the handshake by sending 101 Switching Protocols with Sec-WebSocket-Accept."],
    ])
    return store, embedder


def test_the_store_resolves_files_and_folders_to_their_chunks(library: tuple[Store, FakeEmbedder]) -> None:
    store, _ = library
    everything = store.chunk_keys_within(["/library"])
    assert len(everything) == 4 and list(everything) == sorted(everything)
    assert len(store.chunk_keys_within(["/library/http-spec.pdf"])) == 2
    assert len(store.chunk_keys_within(["/library/sub"])) == 1
    assert len(store.chunk_keys_within(["/library/gardening.pdf", "/library/sub"])) == 2
    assert len(store.chunk_keys_within(["/lib"])) == 0  # a prefix of a name is not a folder
    assert store.files_within(["/library/sub"]) == [("/library/sub/websocket.pdf", "indexed")]


def test_a_search_within_a_document_returns_only_its_passages(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    retriever = Retriever(store, embedder)
    assert places(retriever.search("server URI too long", k=3).passages)[0] == ("http-spec", 1)
    within = retriever.search("server URI too long", k=3, scope=["/library/sub"])
    assert places(within.passages) == [("websocket", 1)]
    empty = retriever.search("server URI too long", k=3, scope=["/elsewhere"])
    assert empty.passages == [] and empty.coverage == 0.0


def ask(store: Store, embedder: FakeEmbedder, question: str, scope: tuple[str, ...] = ()) -> list[object]:
    events: list[object] = []
    generator = FakeGenerator(["The server returns 414 [1]."])
    answering.answer(question, retriever=Retriever(store, embedder), store=store,
                     generator_factory=lambda _language: generator, settings=Settings(), emit=events.append,
                     should_cancel=lambda: False, verifier=Verifier(), scope=scope)
    return events


def test_a_scoped_question_its_document_cannot_answer_has_no_basis(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    question = "What does the server return when the Request-URI is too long?"
    unscoped = ask(store, embedder, question)
    assert not any(isinstance(e, NoBasis) for e in unscoped)  # the library can answer it
    scoped = ask(store, embedder, question, ("/library/gardening.pdf",))
    started = next(e for e in scoped if isinstance(e, AnswerStarted))
    assert started.scope == ("/library/gardening.pdf",) and started.sources == ()
    reason = next(e for e in scoped if isinstance(e, NoBasis)).reason
    assert reason.startswith("Asked within gardening.pdf: ")
    record = store.answer(started.answer_id)
    assert record is not None and record.status == "no_basis"
    assert record.scope == ("/library/gardening.pdf",)
    assert store.answers()[0].scope == ("/library/gardening.pdf",)
    assert "Asked within: `/library/gardening.pdf`" in export_markdown(record)


def test_a_scoped_answer_gives_the_model_only_the_scopes_passages(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    events = ask(store, embedder, "What does the server return when the Request-URI is too long?",
                 ("/library/http-spec.pdf",))
    started = next(e for e in events if isinstance(e, AnswerStarted))
    assert started.sources and {s.doc_path for s in started.sources} == {"/library/http-spec.pdf"}
    assert store.answer(started.answer_id).scope == ("/library/http-spec.pdf",)  # type: ignore[union-attr]
    assert started.to_json()["scope"] == ["/library/http-spec.pdf"]


def test_scope_words() -> None:
    assert answering.scope_words(["/a/manual.pdf"]) == "manual.pdf"
    assert answering.scope_words(["/a/contracts"]) == "the folder contracts"
    assert answering.scope_words(["/a/x.pdf", "/a/y.pdf", "/a/z.pdf", "/b"]) == "x.pdf, y.pdf and 2 more"
