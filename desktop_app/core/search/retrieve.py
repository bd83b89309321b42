"""Hybrid retrieval: BM25 in DuckDB SQL, exact vector search in numpy, and a second
stage that fuses them per query language. Qt-free.

1. Candidates: the top :data:`CANDIDATES` chunks by BM25 (SQL over the postings table,
   see postings.py) and, when the dense weight is not 0, by cosine (one matrix-vector
   product over every chunk vector, one BLAS thread: __main__ pins it), the two at once.
   A question asking for a glossary phrase ("capex", "quick ratio", glossary.py) is
   searched with the words documents use for it too: BM25 at :data:`EXPANSION_WEIGHT`,
   and the embedder reads them after the question.
2. Each candidate gets the same features: its BM25 score (a second, narrow statement
   scores the dense-only candidates) over the best candidate's; its cosine rescaled between
   the weakest and the best dense candidate; coverage, the idf-weighted share of the
   question's terms the chunk or its heading holds; and that share in its document's
   title or file name, over the best document's when that is at least :data:`TITLE_FLOOR`
   (a question naming "Best Buy" or "3M" prefers that report, by as much however long
   the question is).
3. A weighted sum ranks them, with weights per language (:data:`LATIN`, :data:`CJK`).
   all-MiniLM-L6-v2 only knows English: a Chinese question does not use it (its cosine
   is noise on Chinese; bench/retrieval.py measures recall per language), and a Latin-script
   question weighs it by how well the embedder's vocabulary covers its words (German
   words fall apart into WordPiece fragments: weight 0).
4. One passage per page: a page's best chunk stands for it, so ``k`` passages are ``k``
   different pages (chunks of one page overlap and repeat each other).

A search asked within some files or folders (``scope``) ranks only their chunks: BM25 in
SQL over those chunks, cosine over their vectors. Idf stays the library's, and the
evidence gate's coverage and best cosine are measured within the scope, so a question
whose documents lack the answer has no basis even when another document has it.

Weights were chosen with bench/retrieval.py (FinanceBench, MMLongBench-Doc and our
hand-written corpus questions in Chinese, English and German).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from desktop_app.core.search.glossary import Glossary, load_builtin
from desktop_app.core.stages import Embedder, SearchIndex
from desktop_app.core.text import anchors as anchorlib
from desktop_app.core.text import lang
from desktop_app.core.text import words as termlib
from desktop_app.core.text.listing import asks_for_listing, reads_as_listing
from desktop_app.core.text.words import text_language
from desktop_app.core.types import Passage, Retrieval

logger = logging.getLogger(__name__)

CANDIDATES = 50


@dataclass(frozen=True)
class FusionWeights:
    bm25: float
    dense: float
    coverage: float
    title: float


LATIN = FusionWeights(bm25=1.0, dense=1.0, coverage=0.5, title=0.5)
CJK = FusionWeights(bm25=1.0, dense=0.0, coverage=0.5, title=0.25)
# Chinese with a multilingual embedder (multilingual-e5-small): the dense weight with the best
# recall on the tuning half of bench/data/eval_zh.json (``bench/gate.py retrieve
# --cjk-dense W`` tries one). English and German keep LATIN (``--latin-dense W``).
CJK_MULTILINGUAL = FusionWeights(bm25=1.0, dense=0.5, coverage=0.5, title=0.25)
# How much of the embedder's vocabulary a Latin-script question uses: WordPiece tokens per
# word. English questions of the QA sets: median 1.08, max 1.5; German: 2.0 to 2.6. The
# dense weight goes from full at VOCAB_FULL down to 0 at VOCAB_NONE.
VOCAB_FULL = 1.5
VOCAB_NONE = 2.0
_WORD = re.compile(r"[^\W\d_]+")
# BM25 weight of a glossary expansion's terms against the question's own: half, so that the
# glossary's words help find a filing without outweighing the question (bench/retrieval.py).
EXPANSION_WEIGHT = 0.5
# The least idf-weighted share of a question's terms a document's title must hold to count
# as named by it: a company name, not a common word of every title (bench/retrieval.py).
TITLE_FLOOR = 0.05

# A question's rarest terms are scored, at most one per bit of a BIGINT mask; common terms
# are scored too (leaving them out lost recall and saved little time: bench/retrieval.py).
MAX_SCORED_TERMS = 62


@dataclass(frozen=True)
class _Lexical:
    ranked: list[tuple[int, float]]  # the best chunks by BM25, best first
    scores: dict[int, float]  # BM25 of the ranked chunks and of any added ones
    matched: dict[int, frozenset[int]]  # term ids (of the scored ones) each of those chunks holds
    idf: dict[str, float]  # of every query term (the highest for a term no chunk holds)
    present: frozenset[str]  # the query terms some chunk holds
    ids: tuple[int, ...] = ()  # the scored terms' ids, bit i of a mask = ids[i]
    weights: tuple[float, ...] = ()  # their idf times query weight


class VectorIndex:
    """All chunk vectors of one embedder as a normalised float32 matrix in memory."""

    def __init__(self, store: SearchIndex, model_id: str) -> None:
        self.store = store
        self.model_id = model_id
        self._generation = -1
        self._keys = np.zeros(0, dtype=np.int64)  # sorted (load_vectors orders by ckey)
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._lock = threading.Lock()

    def refresh(self) -> None:
        with self._lock:
            if self._generation == self.store.generation:
                return
            generation = self.store.generation
            self._keys, self._matrix = self.store.load_vectors(self.model_id)
            self._generation = generation

    def scores(self, query_vec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ckeys, cosine of each) for every vector."""
        self.refresh()
        keys, matrix = self._keys, self._matrix
        if matrix.shape[0] == 0:
            return keys, np.zeros(0, dtype=np.float32)
        return keys, matrix @ np.asarray(query_vec, dtype=np.float32).reshape(-1)

    def search(self, query_vec: np.ndarray, k: int) -> list[tuple[int, float]]:
        keys, scores = self.scores(query_vec)
        return _top(keys, scores, k)

    def __len__(self) -> int:
        self.refresh()
        return int(self._matrix.shape[0])


def _one_term_held(terms: Sequence[str], present: Collection[str]) -> bool:
    return len(set(terms)) == 1 and terms[0] in present


def _top(keys: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    if scores.shape[0] == 0 or k <= 0:
        return []
    k = min(k, scores.shape[0])
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((keys[top], -scores[top]))]
    return [(int(keys[i]), float(scores[i])) for i in top]


def _lookup(keys: np.ndarray, scores: np.ndarray, wanted: Sequence[int]) -> dict[int, float]:
    if keys.shape[0] == 0 or not wanted:
        return {}
    asked = np.asarray(wanted, dtype=np.int64)
    at = np.clip(np.searchsorted(keys, asked), 0, keys.shape[0] - 1)
    return {int(key): float(scores[i]) for key, i in zip(asked, at, strict=True) if keys[i] == key}


class Retriever:
    def __init__(self, store: SearchIndex, embedder: Embedder | None = None, glossary: Glossary | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.glossary = glossary if glossary is not None else load_builtin()
        self.vectors = VectorIndex(store, embedder.model_id) if embedder is not None else None
        self._stats_generation = -1
        self._n = 0
        self._avgdl = 1.0
        self._titles: dict[str, frozenset[str]] = {}
        self._scopes: dict[tuple[str, ...], tuple[int, np.ndarray]] = {}  # -> (generation, ckeys)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    # ------------------------------------------------------------------ BM25

    def _stats(self) -> tuple[int, float]:
        if self._stats_generation != self.store.generation:
            self._n, self._avgdl = self.store.chunk_stats()
            titles = self.store.document_titles()
            self._titles = {
                d: frozenset(termlib.term_counts(f"{t} {Path(p).stem}")) for d, t, p in titles
            }
            self._stats_generation = self.store.generation
        return self._n, self._avgdl

    def _within(self, scope: Sequence[str]) -> np.ndarray | None:
        """The sorted chunk keys a search within ``scope`` may return (None: every chunk)."""
        if not scope:
            return None
        key = tuple(scope)
        cached = self._scopes.get(key)
        if cached is None or cached[0] != self.store.generation:
            generation = self.store.generation
            cached = (generation, self.store.chunk_keys_within(scope))
            if len(self._scopes) > 32:
                self._scopes.clear()
            self._scopes[key] = cached
        return cached[1]

    def _lexical(self, weights: dict[str, float], k: int, within: np.ndarray | None = None) -> _Lexical:
        n, avgdl = self._stats()
        if not weights or n == 0:
            return _Lexical([], {}, {}, {t: 1.0 for t in weights}, frozenset())
        ids = {termlib.term_id(t): t for t in weights}
        df = {ids[term]: count for term, count in self.store.term_chunk_counts(list(ids)).items()}
        # A term no chunk holds gets the highest idf: the question asks for something the
        # library does not say, which coverage must show.
        idf = {t: math.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in weights}
        present = sorted((t for t in weights if t in df), key=lambda t: (df[t], t))
        if not present:
            return _Lexical([], {}, {}, idf, frozenset())
        scored = present[:MAX_SCORED_TERMS]
        scored_ids = [termlib.term_id(t) for t in scored]
        rows = self.store.bm25_top(scored_ids, [idf[t] * weights[t] for t in scored], avgdl, k,
                                   within=None if within is None else within.tolist())
        ranked = [(int(key), float(score)) for key, score, _ in rows]
        scores = dict(ranked)
        matched = {int(key): frozenset(t for i, t in enumerate(scored_ids) if int(held) >> i & 1)
                   for key, _, held in rows}
        return _Lexical(ranked, scores, matched, idf, frozenset(present), tuple(scored_ids),
                        tuple(idf[t] * weights[t] for t in scored))

    def _add_chunks(self, lexical: _Lexical, keys: Sequence[int]) -> _Lexical:
        """``lexical`` with the BM25 score and held terms of ``keys`` too."""
        todo = [int(key) for key in keys if key not in lexical.scores]
        if not todo or not lexical.ids:
            return lexical
        _, avgdl = self._stats()
        rows = self.store.bm25_of(list(lexical.ids), list(lexical.weights), avgdl, todo)
        scores = dict(lexical.scores)
        matched = dict(lexical.matched)
        for key, score, held in rows:
            scores[int(key)] = float(score)
            matched[int(key)] = frozenset(t for i, t in enumerate(lexical.ids) if int(held) >> i & 1)
        return replace(lexical, scores=scores, matched=matched)

    def bm25(self, query: str, k: int = CANDIDATES) -> tuple[list[tuple[int, float]], dict[str, float]]:
        """Top ``k`` (ckey, score) and the idf of each query term."""
        lexical = self._lexical(termlib.query_terms(query), k)
        return lexical.ranked, lexical.idf

    # ------------------------------------------------------------------ dense

    def _query_vector(self, query: str) -> np.ndarray | None:
        if self.embedder is None or self.vectors is None:
            return None
        return np.asarray(self.embedder.embed_queries([query])[0], dtype=np.float32)

    @property
    def multilingual(self) -> bool:
        """Whether the embedder reads every language Folio answers in (e5), not English alone."""
        return self.embedder is not None and self.embedder.multilingual

    def _weights(self, query: str, cjk: bool) -> FusionWeights:
        """The fusion weights for this question: per script, and for an English-only
        embedder the dense weight scaled by how well its vocabulary covers the words."""
        if self.multilingual:
            return CJK_MULTILINGUAL if cjk else LATIN
        return CJK if cjk else replace(LATIN, dense=LATIN.dense * self._embedder_fit(query))

    def _embedder_fit(self, query: str) -> float:
        """1 when the embedder knows the question's words (few WordPiece tokens per word),
        falling to 0 for text it only spells out (German, French...)."""
        words = _WORD.findall(query)
        if self.embedder is None or not words:
            return 1.0
        ratio = max(0, self.embedder.count_tokens(" ".join(words)) - 2) / len(words)  # less [CLS] and [SEP]
        return min(1.0, max(0.0, (VOCAB_NONE - ratio) / (VOCAB_NONE - VOCAB_FULL)))

    def _dense_scores(self, query: str, within: np.ndarray | None = None,
                      timings: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        begun = time.perf_counter()
        vec = self._query_vector(query)
        if timings is not None:
            timings["embed_s"] = timings.get("embed_s", 0.0) + time.perf_counter() - begun
        if vec is None or self.vectors is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        keys, scores = self.vectors.scores(vec)
        if within is not None:
            keep = np.isin(keys, within, assume_unique=True)
            keys, scores = keys[keep], scores[keep]
        return keys, scores

    def _dense_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="folio-dense")
            return self._pool

    def dense(self, query: str, k: int = CANDIDATES) -> list[tuple[int, float]]:
        vec = self._query_vector(query)
        if vec is None or self.vectors is None:
            return []
        return self.vectors.search(vec, k)

    # ------------------------------------------------------------------ hybrid

    def search(self, query: str, k: int = 5, scope: Sequence[str] = (), language: str = "auto",
               fusion: FusionWeights | None = None) -> Retrieval:
        """The best ``k`` passages for ``query``; with ``scope`` (file and folder paths), only
        from the documents at or under those paths. ``language`` is the setting ("auto" or a
        language's code): the returned ``Retrieval.language`` honours it, while ranking and
        the question's anchors follow the language the question is written in. ``fusion``
        replaces the language's weights (bench/retrieval.py ranks by one retriever alone with
        it: the same glossary, title share and one passage per page as the fused ranking)."""
        # The question's language, decided here once for the whole answer: what it is
        # written in ranks; with the setting applied it is Retrieval.language, which the
        # gate, the evidence, the prompt and a refusal read.
        written = termlib.question_language(query)
        language = termlib.answer_language(written, language)
        cjk = lang.of(written).script == "cjk"  # ranked as CJK text: bigrams, its own weights
        if fusion is None:
            fusion = self._weights(query, cjk)
        asked = termlib.query_terms(query)
        expansion = self.glossary.expand(query)
        weights, dense_query = _with_expansion(query, asked, expansion)
        within = self._within(scope)
        if within is not None and within.shape[0] == 0:
            return Retrieval([], 0.0, 0.0, cjk, expansion, language=language)
        keys = cosines = np.zeros(0)
        semantic: list[tuple[int, float]] = []
        # The embedder and the matrix product run on a worker thread while DuckDB scores
        # BM25 here: both release the GIL, so on two cores the two halves overlap.
        job = plain = None
        timings: dict[str, float] = {}
        if (fusion.dense > 0 or not weights) and self.vectors is not None:
            job = self._dense_pool().submit(self._dense_scores, dense_query, within, timings)
            if expansion:  # the evidence gate measures the question alone (below)
                plain = self._dense_pool().submit(self._dense_scores, query, within, timings)
        lexical = self._lexical(weights, CANDIDATES, within)
        if job is not None:
            keys, cosines = job.result()
            semantic = _top(keys, cosines, CANDIDATES)
            lexical = self._add_chunks(lexical, [key for key, _ in semantic])
        candidates = list(dict.fromkeys([key for key, _ in lexical.ranked] + [key for key, _ in semantic]))
        if not candidates:
            return Retrieval([], 0.0, 0.0, cjk, expansion, language=language)
        cos = _lookup(keys, cosines, candidates)
        places = self._places(candidates)
        scores = self._fuse(candidates, lexical, cos, semantic, weights, fusion, places)
        order = sorted(candidates, key=lambda key: (-scores[key], key))
        anchoring = time.perf_counter()
        marks = anchorlib.anchors(query, written)
        anchors_s = time.perf_counter() - anchoring
        texts = self.store.chunk_texts(order[:CANDIDATES * 2 if marks.numbers else CANDIDATES])
        if not asks_for_listing(query):  # an index or contents page holds the words, no answer
            order = sorted(order, key=lambda key: reads_as_listing(texts.get(key, "")))
        held = self._numbers_held(texts, marks.numbers) if marks.numbers else None
        chosen = _one_per_page(order, places, k, held)
        by_key = self.store.passages(chosen, scope)
        passages = [replace(by_key[key], score=scores[key]) for key in chosen if key in by_key]
        anchoring = time.perf_counter()
        unmatched = tuple(n for n in marks.numbers
                          if not any(anchorlib.holds_number(f"{p.section}\n{p.text}", n) for p in passages))
        anchors_s += time.perf_counter() - anchoring
        # The evidence gate's measures count the question's own words only: the glossary's
        # words must not make an unrelated library look close in meaning.
        coverage = self._coverage(chosen, lexical, asked)
        best_cosine = semantic[0][1] if semantic else 0.0
        if plain is not None:
            _, plain_cosines = plain.result()
            best_cosine = float(plain_cosines.max()) if plain_cosines.shape[0] else 0.0
        anchoring = time.perf_counter()
        # The passages' language when it is not the one the question is written in (a forced
        # answer language does not make an English question's words Chinese).
        documents = documents_language(passages)
        documents = "" if documents == written else documents
        # Across languages only the handles written alike must be mentioned (text/anchors.py)
        names = anchorlib.alike_handles(query, written) if documents else marks.names
        unmentioned = self._unmentioned(names, lexical, within, passages)
        # The anchors' share of the search: the question's names and numbers looked for.
        timings["anchors_s"] = anchors_s + time.perf_counter() - anchoring
        return Retrieval(passages=passages, coverage=coverage, best_cosine=best_cosine, cjk=cjk,
                         expansion=expansion,
                         embedder=self.vectors.model_id if semantic and self.vectors is not None else "",
                         language=language, unmatched=unmatched,
                         unmentioned=unmentioned, documents_language=documents, timings=timings)

    @staticmethod
    def _numbers_held(texts: dict[int, str], numbers: Sequence[str]) -> dict[int, int]:
        """How many of the question's ``numbers`` each of the first candidates states."""
        return {key: sum(anchorlib.holds_number(text, n) for n in numbers) for key, text in texts.items()}

    def _unmentioned(self, names: Sequence[str], lexical: _Lexical, within: np.ndarray | None,
                     passages: Sequence[Passage]) -> tuple[str, ...]:
        """The ``names`` no chunk (within the scope) mentions, even inside a longer word
        ("DIRECTORBAIN" mentions "Bain"), and no word of the passages is a typing slip
        away from. A one-term name the postings hold is mentioned when the search is not
        scoped; the others ("HTTP/2": "http" and "2" are everywhere) are looked for in the
        chunks' text."""
        doubtful = [name for name in names if within is not None
                    or not _one_term_held(termlib.tokenize(name), lexical.present)]
        if not doubtful:
            return ()
        found = self.store.mentioned([name.lower() for name in doubtful],
                                     within=None if within is None else within.tolist())
        missing = [name for name in doubtful if name.lower() not in found]
        if not missing:
            return ()
        seen = {w.lower() for p in passages for w in _WORD.findall(f"{p.text} {p.doc_title} {Path(p.doc_path).stem}")}
        return tuple(name for name in missing if not anchorlib.near_miss(name, seen))

    def _fuse(
        self,
        candidates: Sequence[int],
        lexical: _Lexical,
        cos: dict[int, float],
        semantic: Sequence[tuple[int, float]],
        weights: dict[str, float],
        fusion: FusionWeights,
        places: dict[int, tuple[str, int, str]],
    ) -> dict[int, float]:
        best_bm25 = max((lexical.scores.get(key, 0.0) for key in candidates), default=0.0) or 1.0
        top_cos = semantic[0][1] if semantic else 0.0
        floor = semantic[-1][1] if semantic else 0.0
        span = max(1e-6, top_cos - floor)
        # Coverage among candidates counts the terms the library holds (a misspelt word
        # would only scale every candidate down alike).
        by_id = {termlib.term_id(t): lexical.idf[t] * w for t, w in weights.items() if t in lexical.present}
        total = sum(by_id.values()) or 1.0
        # The title share counts every term: a company named only in a file name still counts.
        everything = sum(lexical.idf[t] * w for t, w in weights.items()) or 1.0
        title_share: dict[str, float] = {}
        for doc_id in {place[0] for place in places.values()} if fusion.title > 0 else ():
            title = self._titles.get(doc_id, frozenset())
            title_share[doc_id] = sum(lexical.idf[t] * w for t, w in weights.items() if t in title) / everything
        # A question that names a document ("3M", "Best Buy") gives the best-named documents
        # the full title weight, however many other words the question has.
        top_title = max(title_share.values(), default=0.0)
        if top_title >= TITLE_FLOOR:
            title_share = {doc_id: share / top_title for doc_id, share in title_share.items()}
        scores = {}
        for key in candidates:
            doc_id, _, section = places.get(key, ("", 0, ""))
            # A chunk's heading counts as part of it ("Appendix E", "4.2 Opening Handshake").
            held = lexical.matched.get(key, frozenset()) | _section_terms(section)
            scores[key] = (
                fusion.bm25 * lexical.scores.get(key, 0.0) / best_bm25
                + fusion.dense * max(0.0, cos.get(key, floor) - floor) / span
                + fusion.coverage * sum(v for t, v in by_id.items() if t in held) / total
                + fusion.title * title_share.get(doc_id, 0.0)
            )
        return scores

    def _places(self, keys: Sequence[int]) -> dict[int, tuple[str, int, str]]:
        """(doc_id, page, section) of each chunk."""
        return self.store.chunk_places(keys)

    @staticmethod
    def _coverage(chosen: Sequence[int], lexical: _Lexical, weights: dict[str, float]) -> float:
        """Idf-weighted share of the question's words and CJK bigrams (single CJK
        characters left out) held by the best of the ``chosen`` passages."""
        wanted = {termlib.term_id(t): lexical.idf[t] * w for t, w in weights.items()
                  if not termlib.is_cjk_char(t)}
        total = sum(wanted.values())
        if not chosen or total <= 0:
            return 0.0
        return max(
            sum(v for t, v in wanted.items() if t in lexical.matched.get(key, frozenset())) / total
            for key in chosen
        )


def _with_expansion(query: str, asked: dict[str, float], expansion: str) -> tuple[dict[str, float], str]:
    """The BM25 terms of the question plus its glossary expansion's at
    :data:`EXPANSION_WEIGHT`, and the text the embedder reads."""
    if not expansion:
        return asked, query
    weights = dict(asked)
    for term, weight in termlib.query_terms(expansion).items():
        weights.setdefault(term, EXPANSION_WEIGHT * weight)
    return weights, f"{query} ({expansion})"


@lru_cache(maxsize=4096)
def _section_terms(section: str) -> frozenset[int]:
    return frozenset(termlib.term_id(t) for t in termlib.term_counts(section))


def _one_per_page(order: Sequence[int], places: dict[int, tuple[str, int, str]], k: int,
                  held: dict[int, int] | None = None) -> list[int]:
    """The first ``k`` pages of ``order``, each by its first chunk; with ``held`` (how many
    of the question's numbers a chunk states), by its chunk stating the most of them (the
    page keeps its place: a page's best chunk on the close-code table may end at 1005
    while the question asks for 1009, which the page's next chunk states)."""
    pages: dict[tuple[str, int], int] = {}
    for key in order:
        place = places.get(key)
        if place is None:
            continue
        best = pages.get(place[:2])
        if best is None:
            if len(pages) < k:
                pages[place[:2]] = key
            elif not held:
                break
        elif held and held.get(key, 0) > held.get(best, 0):
            pages[place[:2]] = key
    return list(pages.values())


def documents_language(passages: Sequence[Passage]) -> str:
    """The language most of ``passages`` are written in ("en", "de", "zh"), "" when most
    do not say (formulas, tables of figures)."""
    votes = Counter(text_language(p.text) or "" for p in passages)
    if not votes:
        return ""
    language, count = votes.most_common(1)[0]
    return language if count * 2 > len(passages) else ""
