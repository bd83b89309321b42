"""The answer finder on real PDFs with the library's real default embedder (multilingual
e5), in English, German and Chinese and per question kind: the quote is the document's own
sentence that answers, on the right page, in a chunk the model is given, with exact offsets;
a question the folder cannot answer gets no quote. ``folio ask --quote-only`` runs no model."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.answer import gate
from desktop_app.core.answer.finder import PageFinder
from desktop_app.core.models.catalog import open_embedder
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFailed, AnswerFinished, AnswerQuoted, AnswerStarted, NoBasis
from desktop_app.services.knowledge_base import KnowledgeBase

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # indexes three real PDFs with e5 (minutes)

DOCS = ("en_rfc2616_http11.pdf", "de_lecturenotes_GeoTopo.pdf", "zh_manual_zhlineskip.pdf")


def collect(agen: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in agen]

    return asyncio.run(run())


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path, models_dir: Path) -> Any:
    root = tmp_path_factory.mktemp("finder")
    folder = root / "docs"
    folder.mkdir()
    for name in DOCS:
        shutil.copy(shared_dir / "corpus" / name, folder)
    embedder = open_embedder("default")
    kb = KnowledgeBase(root / "lib.duckdb", Settings(judge=False), embedder=embedder)
    collect(kb.library.index(folder))
    yield kb
    asyncio.run(kb.close())


@pytest.mark.parametrize(("question", "file", "page", "words"), [
    # amount, English: the chunk search returns is not always the one that says it
    ("How many simultaneous connections to one server should a single-user HTTP/1.1 client keep at most?",
     "en_rfc2616_http11.pdf", None, ("2 connections",)),
    # a number the question asks for, English
    ("Which TCP port does an http URL use when it does not name one?", "en_rfc2616_http11.pdf", None,
     ("port 80 is assumed",)),
    # name + date, German
    ("In welchem Semester und von wem wurde das Skript zur Geometrie und Topologie geschrieben?",
     "de_lecturenotes_GeoTopo.pdf", None, ("Wintersemester 2013/2014", "Martin Thoma")),
    # amount, Chinese
    ("zhlineskip 靠哪个宏包来做精确的浮点运算？", "zh_manual_zhlineskip.pdf", None, ("xintexpr",)),
])
def test_the_quote_is_the_documents_own_answering_sentence(library: Any, question: str, file: str,
                                                          page: int | None, words: tuple[str, ...]) -> None:
    kb = library
    retrieval = kb.parts.retriever.search(question, 5)
    assert gate.refusal(retrieval) is None
    quotes = PageFinder(kb.parts.store, kb.parts.embedder).find(question, gate.language_of(retrieval), retrieval.passages).quotes
    assert quotes, [p.text[:80] for p in retrieval.passages]
    quote = quotes[0]
    joined = " ".join(" ".join(q.text.split()) for q in quotes)
    assert all(w in joined for w in words), joined
    assert Path(quote.source.doc_path).name == file
    # Exact offsets: the quote is the chunk's text there, and the page's.
    assert quote.source.text[quote.span[0]:quote.span[1]] == quote.text
    page_text = kb.parts.store.source_pages([(quote.source.doc_id, quote.source.page)])[
        (quote.source.doc_id, quote.source.page)].text
    assert page_text[quote.page_span[0]:quote.page_span[1]] == quote.text


def test_quote_only_shows_the_sentence_with_its_source_and_runs_no_model(library: Any) -> None:
    events = collect(library.answers.ask("Which TCP port does an http URL use when it does not name one?",
                                         quote_only=True))
    kinds = [type(e) for e in events]
    assert kinds[0] is AnswerStarted and AnswerQuoted in kinds and kinds[-1] is AnswerFinished
    started = events[0]
    quoted = next(e for e in events if isinstance(e, AnswerQuoted))
    first = quoted.quotes[0]
    assert "port 80" in first.text
    source = next(s for s in started.sources if s.id == first.id)  # the marker opens its source
    assert source.text[first.span[0]:first.span[1]] == first.text
    assert any(s <= first.span[0] and first.span[1] <= e for s, e in source.read)  # highlighted as read
    assert next(e for e in events if isinstance(e, AnswerFinished)).text == ""
    # No answer model is installed where the tests run: had it tried to load one, it would fail.
    assert not any(isinstance(e, AnswerFailed) for e in events)


def test_a_question_the_folder_cannot_answer_gets_no_quote(library: Any) -> None:
    events = collect(library.answers.ask("Which HTTP/1.1 status code did the authors assign to quantum"
                                         " teleportation of cookies?", quote_only=True))
    assert not any(isinstance(e, AnswerQuoted) for e in events)
    assert any(isinstance(e, NoBasis) for e in events)
