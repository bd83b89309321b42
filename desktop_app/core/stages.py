"""The interfaces between the pipeline's stages, as Protocols. Qt-free.

Callers are annotated with these, never with a backend class: the answer stage asks a
``Retriever``, a ``Generator`` and a ``Verifier``, the indexer an ``Embedder``; each has one
real backend (core/search/retrieve.py, core/models/worker.py and generate.py,
core/models/embed.py, core/verdicts/) and fakes in the tests. Adding a reranker, an HTTP
model server or another verifier means writing one more class that satisfies its Protocol.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from desktop_app.core.types import (
    Chunk,
    Citations,
    ClaimVerdict,
    ExtractedDocument,
    FileRecord,
    Found,
    GenerationStats,
    PageText,
    Passage,
    Retrieval,
    SavedAnswer,
    SourcePage,
    Steering,
)

if TYPE_CHECKING:
    import numpy as np

Message = dict[str, str]
# What ``Generator.stream`` returns: text deltas, and ``close()`` stops the model early.
Deltas = collections.abc.Generator[str, None, None]


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors (one row per text, input order).
    Questions and the passages that answer them are embedded differently (e5 prefixes
    ``query: `` and ``passage: ``), so callers say which they hold."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def multilingual(self) -> bool:
        """Whether it reads every language Folio answers in, not English alone (retrieval
        then leaves the dense weight whole instead of scaling it by the vocabulary's fit)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...


class Generator(Protocol):
    """An answer model: counts tokens, renders a chat, streams text deltas, and reads a
    prompt head into its cache ahead of the question (``prime``).

    Its capabilities are declared here, not probed: ``scores_replies`` says whether
    ``reply_logprob`` can weigh a reply (a local model can, a model server cannot),
    ``last_stats`` holds the figures of the last streamed answer, and ``estimate_s`` the
    seconds an answer should take at this machine's measured speed (0.0: no measure)."""

    model_id: str
    context_tokens: int
    scores_replies: bool
    last_stats: GenerationStats | None

    def count_tokens(self, text: str) -> int: ...

    def render(self, messages: Sequence[Message]) -> str: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        grammar: str | None = None,
        should_cancel: Callable[[], bool] = ...,
        steering: Steering | None = None,
    ) -> Deltas: ...

    def prime(self, messages: Sequence[Message], should_cancel: Callable[[], bool] = ...) -> int: ...

    def reply_logprob(self, messages: Sequence[Message], reply: str,
                      should_cancel: Callable[[], bool] = ...) -> float:
        """The log probability of the model answering ``messages`` with ``reply``; raises
        KnownError when ``scores_replies`` is False."""
        ...

    def estimate_s(self, prompt_tokens: int) -> float: ...

    def close(self) -> None: ...


class SearchIndex(Protocol):
    """What retrieval reads of the library (core/library's ``Store`` implements it): term
    statistics and BM25 in SQL, chunk texts and places, the vectors, the passages."""

    generation: int  # bumped on every write that changes searchable content

    def chunk_stats(self) -> tuple[int, float]: ...

    def document_titles(self) -> list[tuple[str, str, str]]: ...

    def term_chunk_counts(self, term_ids: Sequence[int]) -> dict[int, int]: ...

    def bm25_top(self, term_ids: Sequence[int], weights: Sequence[float], avgdl: float,
                 k: int, within: Sequence[int] | None = None) -> list[tuple[int, float, int]]: ...

    def bm25_of(self, term_ids: Sequence[int], weights: Sequence[float], avgdl: float,
                ckeys: Sequence[int]) -> list[tuple[int, float, int]]: ...

    def chunk_texts(self, ckeys: Sequence[int]) -> dict[int, str]: ...

    def chunk_places(self, ckeys: Sequence[int]) -> dict[int, tuple[str, int, str]]: ...

    def chunk_keys_within(self, paths: Sequence[str]) -> np.ndarray: ...

    def mentioned(self, needles: Sequence[str], within: Sequence[int] | None = None) -> set[str]: ...

    def passages(self, ckeys: Sequence[int], scope: Sequence[str] = ()) -> dict[int, Passage]: ...

    def load_vectors(self, model_id: str) -> tuple[np.ndarray, np.ndarray]: ...

    def source_pages(self, pages: Sequence[tuple[str, int]]) -> dict[tuple[str, int], SourcePage]: ...


class LibraryWriter(Protocol):
    """What indexing reads and writes of the library (core/library's ``Store`` implements it):
    the files and their documents, pages, chunks, postings and vectors."""

    def file_record(self, path: str) -> FileRecord | None: ...

    def file_records(self) -> list[FileRecord]: ...

    def set_file(self, path: str, doc_id: str | None, size: int, mtime: float, status: str,
                 error: str = "") -> None: ...

    def mark_removed(self, paths: Iterable[str]) -> None: ...

    def has_document(self, doc_id: str) -> bool: ...

    def document_status(self, doc_id: str) -> str | None: ...

    def document_totals(self, doc_id: str) -> tuple[int, int, tuple[int, ...]] | None: ...

    def document_ocr_pages(self, doc_id: str) -> int: ...

    def document_format(self, doc_id: str) -> str: ...

    def document_pages(self, doc_id: str) -> list[PageText]: ...

    def next_version(self, path: str, doc_id: str) -> int: ...

    def write_document(self, doc: ExtractedDocument, chunks: Sequence[Chunk],
                       chunk_terms: Sequence[dict[str, int]], vectors: np.ndarray | None, model_id: str,
                       version: int, rules: int = 0, chunked_with: str = "") -> None: ...

    def replace_chunks(self, doc_id: str, chunks: Sequence[Chunk], chunk_terms: Sequence[dict[str, int]],
                       vectors: np.ndarray | None, model_id: str, chunked_with: str) -> None: ...

    def apply_rules(self, doc_id: str, title: str | None, sections: Mapping[int, str], rules: int) -> None: ...

    def documents_before_rules(self, rules: int) -> list[tuple[str, str]]: ...

    def documents_chunked_otherwise(self, chunked_with: str) -> list[tuple[str, str]]: ...

    def chunk_spans(self, doc_id: str) -> list[tuple[int, int, int, int]]: ...

    def all_chunk_texts(self) -> list[tuple[int, str]]: ...

    def rebuild_postings(self, chunk_terms: Iterable[tuple[int, dict[str, int]]]) -> None: ...

    def chunks_without_vectors(self, model_id: str) -> list[tuple[int, str]]: ...

    def add_vectors(self, ckeys: Sequence[int], vectors: np.ndarray, model_id: str) -> None: ...

    def counts(self) -> dict[str, int]: ...


class Retriever(Protocol):
    """Finds the passages for a question, with the signals the evidence gate reads; with a
    ``scope`` (file and folder paths), only in the documents at or under them. ``language``
    (Settings.prompt_language: "auto" or a language's code) decides ``Retrieval.language``,
    the one language the answer stage reads."""

    def search(self, query: str, k: int, scope: Sequence[str] = (), language: str = "auto") -> Retrieval: ...


class AnswerFinder(Protocol):
    """Finds the document's own sentence that answers a question among the retrieved
    passages' pages (core/answer/finder.py): the quotes, best first, each in the chunk that
    holds it; none when no sentence answers surely enough."""

    def find(self, question: str, language: str, passages: Sequence[Passage]) -> Found: ...


class VerdictStream(Protocol):
    """Checks the sentences of a growing answer against the passages they cite; each
    sentence's verdict is returned once, when the sentence is complete."""

    def feed(self, text: str, citations: Citations) -> list[ClaimVerdict]: ...

    def finish(self, text: str | None = None, citations: Citations | None = None) -> list[ClaimVerdict]: ...


class JudgeCache(Protocol):
    """The judge's answers by (sentence sha, chunk id); ``Store`` keeps them in DuckDB."""

    def judge_get(self, sentence_sha: str, chunk_id: str) -> str | None: ...

    def judge_put(self, sentence_sha: str, chunk_id: str, answer: str) -> None: ...


class AnswerLog(JudgeCache, Protocol):
    """Where answers are kept (the history) with the judge's cache; ``Store`` implements it."""

    def keep(self, record: SavedAnswer) -> None: ...


class Verifier(Protocol):
    """Judges an answer's sentences against its sources (core/verdicts): the rules while it
    streams, then the answer model's second opinion on the sentences they were unsure of."""

    def stream(self, by_label: Mapping[str, str], by_chunk: Mapping[str, str]) -> VerdictStream:
        """A verdict stream over the texts the model read, keyed by the labels it cites;
        ``by_chunk`` (keyed by chunk id) is where better sources are suggested from."""
        ...

    def review(self, generator: Generator, cache: JudgeCache | None, text: str,
               claims: Sequence[ClaimVerdict], sources: Mapping[str, Passage],
               should_cancel: Callable[[], bool], budget_s: float) -> list[ClaimVerdict]:
        """The verdicts ``generator`` changed, in order; asks no new question after
        ``budget_s`` seconds."""
        ...

    def merge(self, claims: Sequence[ClaimVerdict], updates: Sequence[ClaimVerdict]) -> list[ClaimVerdict]:
        """``claims`` with the reviewed ones replaced."""
        ...
