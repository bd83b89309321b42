"""Saved answers as audit records: JSON and Markdown exports, stale and removed sources.

A generated lease PDF is indexed with the fake embedder, answered with the fake
generator, and the saved record is exported; then the file changes and disappears.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.answer import answering
from desktop_app.core.answer.finder import PageFinder
from desktop_app.core.ids import sha256_file
from desktop_app.core.ingest.indexing import Indexer
from desktop_app.core.library.history import annotate_staleness, export_json, export_markdown
from desktop_app.core.library.store import Store
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.settings import Settings
from desktop_app.core.types import AnswerFinished, AnswerQuoted, AnswerStarted, SavedAnswer
from desktop_app.core.verdicts import Verifier
from tests.fakes import FakeEmbedder, FakeGenerator
from tests.pdfgen import write_pdf

LEASE = [
    ["Residential Lease Agreement", "Section 1 Parties", "This lease is made between the landlord and the tenant."],
    ["Section 4 Repairs", "The tenant must report damage to the landlord within 30 days of discovering it.",
     "The landlord pays for repairs caused by normal wear."],
    ["Section 5 Rent", "Rent is due on the first day of each month.", "A late fee of 50 dollars applies after 5 days."],
]
ANSWER = "Damage must be reported to the landlord within 30 days [1]. Pets are welcome [9]."
QUESTION = "How many days does the tenant have to report damage to the landlord?"


class Library:
    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path / "docs"
        self.folder.mkdir()
        self.pdf = write_pdf(self.folder / "lease.pdf", LEASE, title="Residential Lease")
        self.store = Store(tmp_path / "lib.duckdb")
        self.embedder = FakeEmbedder()
        self.index()

    def index(self) -> None:
        Indexer(self.store, self.embedder, workers=1).run(self.folder, lambda _e: None)

    def ask(self, text: str = ANSWER, question: str = QUESTION) -> str:
        events: list[Any] = []
        answering.answer(
            question, retriever=Retriever(self.store, self.embedder), store=self.store,
            generator_factory=lambda _language: FakeGenerator([text]), settings=Settings(sources_per_answer=3),
            emit=events.append, should_cancel=lambda: False, verifier=Verifier(),
        )
        return next(e for e in events if isinstance(e, AnswerFinished)).answer_id

    def record(self, answer_id: str) -> SavedAnswer:
        record = self.store.answer(answer_id)
        assert record is not None
        return annotate_staleness(self.store, record)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    """Indexed once for the tests that only add answers (parsing spawns a process)."""
    library = Library(tmp_path_factory.mktemp("history"))
    yield library
    library.store.close()


@pytest.fixture
def fresh_lib(tmp_path: Path) -> Iterator[Library]:
    library = Library(tmp_path)
    yield library
    library.store.close()


def test_json_export_holds_question_answer_citations_verdicts_and_document_identity(lib: Library) -> None:
    answer_id = lib.ask()
    audit = json.loads(export_json(lib.record(answer_id)))
    assert audit["question"] == QUESTION
    assert audit["answer"] == ANSWER
    assert audit["model_id"] == "fake-generator"
    (citation,) = audit["citations"]
    assert citation["id"] == "1"
    assert [ANSWER[a:b] for a, b in citation["spans"]] == ["[1]"]
    passage = lib.store.passage_by_chunk_id(citation["chunk_id"])
    assert passage is not None and passage.page == 2
    assert citation["passage"] == passage.text  # verbatim, not re-flowed
    assert citation["page"] == 2 and citation["section"] == passage.section
    assert citation["document"]["sha256"] == sha256_file(lib.pdf)
    assert citation["document"]["version"] == 1 and citation["document"]["state"] == "current"
    assert [h["id"] for h in audit["hallucinated"]] == ["9"]
    first = audit["verdicts"][0]
    assert first["sentence"].startswith("Damage must be reported") and first["verdict"] == "supported"
    assert first["chunk_ids"] == [citation["chunk_id"]]
    assert audit["verdicts"][1]["verdict"] == "not_confirmed"  # cites a label it was not given
    assert {"quote", "conflict"} <= set(first)


def test_exports_name_the_verdict_states_and_read_an_older_answers_names(lib: Library) -> None:
    record = lib.record(lib.ask())
    markdown = export_markdown(record)
    assert "— not confirmed (the cited passage does not state this):" in markdown
    data = record.to_json()
    data["claims"][1]["verdict"] = "unsupported"  # type: ignore[index]  # as an older Folio saved it
    record = SavedAnswer.from_json(data)
    assert json.loads(export_json(record))["verdicts"][1]["verdict"] == "not_confirmed"
    assert "— not confirmed (the cited passage does not state this):" in export_markdown(record)


def test_markdown_export_has_footnotes_quoting_the_passage_verbatim(lib: Library) -> None:
    answer_id = lib.ask()
    record = lib.record(answer_id)
    markdown = export_markdown(record)
    source = record.source("1")
    assert source is not None
    assert markdown.startswith(f"# {QUESTION}\n")
    assert "within 30 days [^1]. Pets are welcome ~~[9]~~." in markdown
    footnote = next(line for line in markdown.splitlines() if line.startswith("[^1]: "))
    assert "Residential Lease" in footnote and "`lease.pdf`" in footnote and ", p. 2" in footnote
    assert source.section and source.section in footnote
    assert source.doc_id in footnote and "version 1" in footnote
    for line in source.text.strip().splitlines():
        assert f"    > {line}" in markdown if line.strip() else True
    assert "fake-generator" in markdown


def test_changed_then_removed_source_is_flagged_in_record_and_exports(fresh_lib: Library) -> None:
    lib = fresh_lib
    answer_id = lib.ask()
    changed = [list(page) for page in LEASE]
    changed[1][1] = "The tenant must report damage to the landlord within 60 days of discovering it."
    write_pdf(lib.pdf, changed, title="Residential Lease")
    os.utime(lib.pdf, (1, 1))
    lib.index()
    record = lib.record(answer_id)
    assert record.state("1") == "changed"
    assert "[^1] source changed since this answer: re-ask?" in export_markdown(record)
    audit = json.loads(export_json(record))
    assert audit["citations"][0]["document"]["state"] == "changed"
    assert audit["citations"][0]["passage"].count("30 days") == 1  # what it said then

    lib.pdf.unlink()
    lib.index()
    record = lib.record(answer_id)
    assert record.state("1") == "removed"
    assert "source removed" in export_markdown(record)


def test_no_basis_answer_exports_the_refusal_without_citations(lib: Library) -> None:
    answer_id = lib.ask(question="What is the boiling point of mercury on Jupiter?")
    record = lib.record(answer_id)
    audit = json.loads(export_json(record))
    assert audit["status"] == "no_basis" and audit["citations"] == [] and audit["no_basis_reason"]
    assert "no basis for this question" in export_markdown(record)


def test_the_answer_says_what_the_glossary_added_to_the_search(lib: Library) -> None:
    from desktop_app.core.search.glossary import Entry, Glossary

    events: list[Any] = []
    glossary = Glossary([Entry(("report window",), "report damage within days")])
    answering.answer(
        "What is the report window?", retriever=Retriever(lib.store, lib.embedder, glossary=glossary),
        store=lib.store, generator_factory=lambda _language: FakeGenerator([ANSWER]), settings=Settings(sources_per_answer=3),
        emit=events.append, should_cancel=lambda: False, verifier=Verifier(),
    )
    started = next(e for e in events if isinstance(e, AnswerStarted))
    assert started.also_searched == "report damage within days"
    assert started.to_json()["also_searched"] == "report damage within days"


def test_the_record_keeps_the_models_stats_and_what_it_read(lib: Library) -> None:
    from desktop_app.core.types import GenerationStats

    class Measured(FakeGenerator):
        def stream(self, messages: Any, **kwargs: Any) -> Any:
            self.last_stats = GenerationStats(prompt_tokens=420, completion_tokens=12, seconds_to_first_token=2.5,
                                              seconds=3.6, cached_tokens=300, drafted=8, accepted=6,
                                              prefill_tokens=120, prefill_s=2.25, first_decode_s=0.2)
            return super().stream(messages, **kwargs)

    events: list[Any] = []
    answering.answer(
        QUESTION, retriever=Retriever(lib.store, lib.embedder), store=lib.store,
        generator_factory=lambda _language: Measured([ANSWER]), settings=Settings(sources_per_answer=3),
        emit=events.append, should_cancel=lambda: False, verifier=Verifier(),
    )
    finished = next(e for e in events if isinstance(e, AnswerFinished))
    assert finished.stats["prompt_tokens"] == 420 and finished.stats["cached_tokens"] == 300
    assert finished.stats["draft_accept_rate"] == 0.75 and finished.stats["first_token_s"] == 2.5
    # Where the seconds before the first word went: every step, the model's reading among them.
    first = finished.stats["first_word"]
    assert first["prefill_s"] == 2.25 and first["prefill_tokens"] == 120 and first["first_decode_s"] == 0.2
    assert first["search_s"] > 0 and first["pack_token_counts"] > 0
    assert 0 < first["first_token_s"] <= first["first_word_s"]
    started = next(e for e in events if isinstance(e, AnswerStarted))
    assert started.prompt_tokens > 0 and all(s.read for s in started.sources)
    record = lib.record(finished.answer_id)
    assert record.stats == finished.stats
    assert all(s.read for s in record.sources)


def test_the_exports_keep_the_documents_own_words_with_their_source() -> None:
    from desktop_app.core.library.history import export_conversation
    from desktop_app.core.types import QuotePayload, SourcePayload

    text = "Section 4 Repairs\nThe tenant must report damage to the landlord within 30 days of discovering it."
    sentence = "The tenant must report damage to the landlord within 30 days of discovering it."
    start = text.index(sentence)
    source = SourcePayload(id="1", chunk_id="lease:2:0", doc_id="f" * 64, doc_path="/docs/lease.pdf",
                           doc_title="Residential Lease", page=2, page_label="2", section="Section 4 Repairs",
                           text=text, char_start=10, char_end=10 + len(text))
    quoted = QuotePayload("1", sentence, (start, start + len(sentence)), "/docs/lease.pdf", 2,
                          (10 + start, 10 + start + len(sentence)), 0.83, "duration")
    record = SavedAnswer(answer_id="a1", question=QUESTION, text="Within 30 days [1].", sources=(source,),
                         citations={"1": ((15, 18),)}, quotes=(quoted,), created_at="2024-05-01 10:00:00")
    audit = json.loads(export_json(record))
    (kept,) = audit["quotes"]
    assert kept["text"] == sentence and kept["id"] == "1" and kept["chunk_id"] == "lease:2:0"
    assert kept["document"]["path"] == "/docs/lease.pdf" and kept["document"]["sha256"] == "f" * 64
    assert kept["page"] == 2 and kept["span"] == [start, start + len(sentence)]
    assert kept["page_span"] == [10 + start, 10 + start + len(sentence)] and kept["kind"] == "duration"
    markdown = export_markdown(record)
    block = f"From the document, source [1]: Residential Lease (`lease.pdf`), p. 2, Section 4 Repairs\n\n> {sentence}\n"
    assert block in markdown and markdown.index(sentence) < markdown.index("Within 30 days")
    assert json.loads(export_conversation([record], "json"))[0]["quotes"][0]["text"] == sentence
    assert block in export_conversation([record, dataclasses.replace(record, answer_id="a2", quotes=())])
    assert json.loads(export_json(dataclasses.replace(record, quotes=())))["quotes"] == []


def test_the_quote_comes_before_the_first_token_is_read_first_and_is_saved(lib: Library) -> None:
    """The answer finder's quote: sent after answer_started and before any token, its
    sentence first in the prompt's first source, and kept with the saved answer."""
    events: list[Any] = []
    generator = FakeGenerator(["Within 30 days [1]."])
    answering.answer(
        QUESTION, retriever=Retriever(lib.store, lib.embedder), store=lib.store,
        generator_factory=lambda _language: generator, settings=Settings(sources_per_answer=3),
        emit=events.append, should_cancel=lambda: False, verifier=Verifier(),
        finder=PageFinder(lib.store, None),
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("AnswerStarted") < kinds.index("AnswerQuoted") < kinds.index("TokenDelta")
    quoted = next(e for e in events if isinstance(e, AnswerQuoted))
    quote = quoted.quotes[0]
    # The sentence, with the heading line the extractor put before it.
    assert quote.text.endswith("The tenant must report damage to the landlord within 30 days of discovering it.")
    started = next(e for e in events if isinstance(e, AnswerStarted))
    assert started.sources[0].id == quote.id  # the quote's source is [1]
    source = started.sources[0]
    assert source.text[quote.span[0]:quote.span[1]] == quote.text
    assert any(s <= quote.span[0] and quote.span[1] <= e for s, e in source.read)
    prompt = generator.prompts[-1][-1]["content"]
    assert " ".join(quote.text.split()) in prompt  # the prompt joins its lines
    answer_id = next(e for e in events if isinstance(e, AnswerFinished)).answer_id
    assert lib.record(answer_id).quotes == quoted.quotes
