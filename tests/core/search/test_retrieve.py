"""Hybrid retrieval: what a reader notices in the passages a question brings back."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from desktop_app.core.library import postings
from desktop_app.core.library.store import Store
from desktop_app.core.search.glossary import Glossary
from desktop_app.core.search.retrieve import Retriever
from desktop_app.core.text import words as termlib
from desktop_app.core.types import Chunk, DocStatus, ExtractedDocument, PageText
from tests.fakes import FakeEmbedder


def add_document(store: Store, embedder: object, name: str, pages: Sequence[Sequence[str]],
                 chunked_with: str = "") -> str:
    """Write ``name`` with one list of chunk texts per page; returns its doc id."""
    doc_id = hashlib.sha256(name.encode()).hexdigest()
    page_texts = [PageText(page=i + 1, label=str(i + 1), width=612.0, height=792.0, rotation=0,
                           text="\n".join(chunks)) for i, chunks in enumerate(pages)]
    chunks: list[Chunk] = []
    for page_no, texts in enumerate(pages, 1):
        start = 0
        for index, text in enumerate(texts):
            chunks.append(Chunk(chunk_id=f"{doc_id[:16]}:{page_no}:{index}", doc_id=doc_id, page=page_no,
                                index=index, text=text, char_start=start, char_end=start + len(text)))
            start += len(text) + 1
    doc = ExtractedDocument(path=f"/library/{name}.pdf", doc_id=doc_id, size=100, mtime=1.0, title=name,
                            status=DocStatus.INDEXED, page_count=len(pages), pages=tuple(page_texts))
    terms = [dict(termlib.term_counts(c.text)) for c in chunks]
    vectors = embedder.embed([c.text for c in chunks]) if embedder is not None else None  # type: ignore[attr-defined]
    model_id = getattr(embedder, "model_id", "")
    store.write_document(doc, chunks, terms, vectors, model_id, 1, chunked_with=chunked_with)
    return doc_id


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
    add_document(store, embedder, "land-standard", [
        ["土地利用规划应当符合国家标准，建设用地指标按表执行。"],
        ["停车区用地指标基准值按路段交通量确定。"],
    ])
    add_document(store, embedder, "gardening", [
        ["Tomatoes need full sun and regular watering through the summer."],
    ])
    return store, embedder


def places(passages: Sequence[object]) -> list[tuple[str, int]]:
    return [(Path(p.doc_path).stem, p.page) for p in passages]  # type: ignore[attr-defined]


def test_bm25_ranks_the_chunk_holding_the_query_terms_first(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    retriever = Retriever(store, embedder)
    ranked, idf = retriever.bm25("What does the server return when a URI is too long?")
    top = store.passages([ranked[0][0]])[ranked[0][0]]
    assert (Path(top.doc_path).stem, top.page) == ("http-spec", 1)
    assert idf["uri"] > 0 and idf["long"] > 0
    result = retriever.search("What does the server return when a URI is too long?", k=3)
    assert places(result.passages)[0] == ("http-spec", 1)
    assert result.passages[0].text.startswith("The server returns 414")


def test_a_chinese_question_finds_chinese_text_through_character_bigrams(
    library: tuple[Store, FakeEmbedder],
) -> None:
    store, embedder = library
    retriever = Retriever(store, embedder)
    result = retriever.search("停车区的用地指标是怎么确定的？", k=2)
    assert result.cjk
    assert places(result.passages)[0] == ("land-standard", 2)
    # A word the text splits differently still matches through its characters.
    assert places(retriever.search("用地标准", k=1).passages) in ([("land-standard", 1)], [("land-standard", 2)])


class SteeringEmbedder(FakeEmbedder):
    """Embeds like FakeEmbedder, except that listed queries get the vector of a chosen
    text: the dense retriever then "prefers" that text whatever BM25 says."""

    def __init__(self, steer: dict[str, str], tokens_per_word: int = 1) -> None:
        super().__init__()
        self.steer = steer
        self.tokens_per_word = tokens_per_word

    def count_tokens(self, text: str) -> int:
        return 2 + self.tokens_per_word * len(text.split())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed([self.steer.get(t, t) for t in texts])


def test_fusion_weighs_the_embedder_only_for_languages_it_knows(store: Store) -> None:
    lexical_text = "Rotation policy for the backup tapes: tapes are rotated weekly."
    semantic_text = "Offsite storage: cartridges leave the building every Friday."
    steer = {
        "How often are backup tapes rotated?": semantic_text,
        "备份磁带多久轮换一次": semantic_text,
        "Wie oft werden die Backup-Bänder rotiert?": semantic_text,
    }
    embedder = SteeringEmbedder(steer)
    add_document(store, embedder, "ops-manual", [[lexical_text], [semantic_text], ["备份磁带每周轮换一次。"]])
    add_document(store, embedder, "filler", [[f"Unrelated note number {i} about lunch menus."] for i in range(6)])
    retriever = Retriever(store, embedder)
    english = retriever.search("How often are backup tapes rotated?", k=2)
    assert set(places(english.passages)) == {("ops-manual", 1), ("ops-manual", 2)}
    assert english.best_cosine == pytest.approx(1.0, abs=1e-5)
    chinese = retriever.search("备份磁带多久轮换一次", k=1)
    assert places(chinese.passages) == [("ops-manual", 3)]
    assert chinese.best_cosine == 0.0  # the English-only embedder is not asked
    # A Latin-script language the embedder only spells out (many WordPiece tokens per
    # word) is ranked by BM25 alone, like Chinese.
    german = Retriever(store, SteeringEmbedder(steer, tokens_per_word=3))
    ranked = places(german.search("Wie oft werden die Backup-Bänder rotiert?", k=5).passages)
    assert ("ops-manual", 2) not in ranked


def test_coverage_is_a_share_and_zero_for_an_unrelated_question(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    retriever = Retriever(store, embedder)
    full = retriever.search("server URI too long", k=3)
    assert full.coverage == pytest.approx(1.0)
    partial = retriever.search("server xylophone", k=3)
    assert 0.0 < partial.coverage < 1.0
    unrelated = retriever.search("quantum zebra orchestra", k=3)
    assert unrelated.coverage == 0.0
    for result in (full, partial, unrelated):
        assert 0.0 <= result.coverage <= 1.0
        assert -1.0 <= result.best_cosine <= 1.0 + 1e-6


def test_a_document_written_after_the_first_search_is_found(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    retriever = Retriever(store, embedder)
    assert retriever.vectors is not None
    before = len(retriever.vectors)
    assert "astronomy" not in {Path(p.doc_path).stem for p in retriever.search("telescope aperture", k=5).passages}
    add_document(store, embedder, "astronomy", [["A telescope aperture sets how much light it gathers."]])
    assert len(retriever.vectors) == before + 1
    assert places(retriever.search("telescope aperture", k=1).passages) == [("astronomy", 1)]
    assert [k for k, _ in retriever.dense("telescope aperture light gathers", 1)] == [
        int(store._query("SELECT max(ckey) FROM chunks")[0][0])
    ]


def test_a_removed_document_never_comes_back(library: tuple[Store, FakeEmbedder]) -> None:
    store, embedder = library
    retriever = Retriever(store, embedder)
    assert places(retriever.search("tomatoes full sun watering", k=1).passages) == [("gardening", 1)]
    store.mark_removed(["/library/gardening.pdf"])
    result = retriever.search("tomatoes full sun watering", k=10)
    assert "gardening" not in {stem for stem, _ in places(result.passages)}
    assert retriever.bm25("tomatoes")[0] == []
    assert all("Tomatoes" not in store.passages([k])[k].text for k, _ in retriever.dense("tomatoes", 10))


def test_each_page_appears_once_among_the_passages(store: Store) -> None:
    embedder = FakeEmbedder()
    add_document(store, embedder, "report", [
        ["Revenue grew in the third quarter.", "Revenue in the third quarter came from services."],
        ["Headcount stayed flat."],
        ["Third quarter revenue by region: revenue rose in Europe."],
    ])
    found = places(Retriever(store, embedder).search("third quarter revenue", k=3).passages)
    assert len(found) == len(set(found)) == 3
    assert sorted(found[:2]) == [("report", 1), ("report", 3)]


def test_a_question_naming_a_document_prefers_its_pages(store: Store) -> None:
    text = "Total revenue for the year was reported in the consolidated statement."
    add_document(store, None, "ACME_2021_annual", [[text]])
    add_document(store, None, "GLOBEX_2021_annual", [[text]])
    retriever = Retriever(store, None)
    assert places(retriever.search("What was Globex total revenue?", k=1).passages) == [("GLOBEX_2021_annual", 1)]
    assert places(retriever.search("What was ACME total revenue?", k=1).passages) == [("ACME_2021_annual", 1)]


def test_a_glossary_phrase_finds_the_words_the_document_uses(store: Store) -> None:
    """ "capex" is never written in a cash-flow statement: the built-in glossary searches
    for "purchases of property, plant and equipment" too. The evidence gate's coverage
    still counts the question's own words only."""
    add_document(store, None, "report", [
        ["Cash Flows from Investing Activities\nPurchases of property, plant and equipment (1,577) (1,373)"],
        ["The board met four times in 2018 and approved the plan."],
    ])
    question = "What was the capex in 2018?"
    plain = Retriever(store, None, glossary=Glossary()).search(question, k=1)
    expanded = Retriever(store, None).search(question, k=1)
    assert places(plain.passages) == [("report", 2)]
    assert places(expanded.passages) == [("report", 1)]
    assert expanded.coverage < 0.5  # "capex" and "2018" are not on page 1


def test_the_evidence_gate_measures_the_question_without_the_glossarys_words(
    library: tuple[Store, FakeEmbedder],
) -> None:
    """The expansion steers ranking, but "is anything close in meaning" is asked of the
    question alone: glossary words must not make an unrelated library look relevant."""
    from desktop_app.core.search.glossary import Entry

    store, embedder = library
    question = "What is the quick ratio?"
    glossary = Glossary([Entry(("quick ratio",), "shared cache response stored Cache-Control")])
    plain = Retriever(store, embedder, glossary=Glossary()).search(question, k=3)
    expanded = Retriever(store, embedder, glossary=glossary)
    found = expanded.search(question, k=3)
    assert found.expansion and places(found.passages)[0] == ("http-spec", 2)
    assert found.best_cosine == pytest.approx(plain.best_cosine)
    steered = expanded.dense(f"{question} ({found.expansion})", 1)[0][1]
    assert steered > plain.best_cosine + 0.05  # the expansion did move the dense side


def test_search_works_without_an_embedder(library: tuple[Store, FakeEmbedder]) -> None:
    store, _ = library
    result = Retriever(store, None).search("shared cache Cache-Control", k=2)
    assert places(result.passages)[0] == ("http-spec", 2)
    assert result.best_cosine == 0.0


def test_postings_stay_correct_when_the_tail_is_resorted(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "COMPACT_MIN_ROWS", 20)
    for i in range(12):
        add_document(store, None, f"memo-{i}", [[f"Memo {i} about budget item alpha{i} and the annual plan."]])
    tokenizer, unsorted, total = postings.state(store._cursor())
    assert tokenizer == termlib.TOKENIZER_VERSION
    assert unsorted <= max(20, 0.2 * total)  # the tail was re-sorted on the way
    ids = [r[0] for r in store._query("SELECT term_id FROM postings")]
    assert ids[: total - unsorted] == sorted(ids[: total - unsorted])
    retriever = Retriever(store, None)
    for i in (0, 5, 11):
        assert places(retriever.search(f"alpha{i}", k=1).passages) == [(f"memo-{i}", 1)]


def test_postings_are_rebuilt_for_a_new_tokenizer_or_an_old_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "lib.duckdb"
    store = Store(db)
    add_document(store, None, "notes", [["Quarterly numbers for FY2018 were restated."]])
    store.close()
    monkeypatch.setattr(termlib, "TOKENIZER_VERSION", "test-next")
    store = Store(db)
    assert postings.state(store._cursor())[0] == "test-next"
    assert places(Retriever(store, None).search("restated 2018", k=1).passages) == [("notes", 1)]
    # A library written before postings held term ids (a "term" column) is upgraded.
    cur = store._cursor()
    cur.execute("DROP TABLE postings")
    cur.execute("CREATE TABLE postings (term VARCHAR, ckey BIGINT, tf INTEGER)")
    store.close()
    store = Store(db)
    assert places(Retriever(store, None).search("restated 2018", k=1).passages) == [("notes", 1)]
    store.close()


def test_hand_written_question_files_name_pages_and_files() -> None:
    data = Path(__file__).resolve().parents[3] / "bench" / "data"
    for name, language in (("corpus_zh.json", "zh"), ("corpus_en.json", None)):
        questions = json.loads((data / name).read_text())["questions"]
        assert len(questions) >= 10
        for q in questions:
            assert q["file"].endswith(".pdf") and q["pages"] and all(p >= 1 for p in q["pages"])
            if language == "zh":
                assert termlib.is_cjk_query(q["question"])


E2E_FILES = (
    "zh_manual_zhlineskip.pdf", "zh_report_dbdq_2018q1.pdf", "zh_standard_anhui_landuse_p173.pdf",
    "en_wiki_pdfjs_article.pdf", "en_gov_faa_amt_handbook_sample.pdf", "en_gov_federal_register_2020-17221.pdf",
)


@pytest.mark.slow
@pytest.mark.e2e
def test_hand_questions_find_their_page_in_real_pdfs(
    shared_dir: Path, real_embedder: object, tmp_path: Path,
) -> None:
    """Real PDFs, the real embedder: our hand-written questions about these files, in
    Chinese and English, find a passage on the page that answers them in the top 5."""
    from desktop_app.core.ingest.indexing import Indexer

    folder = tmp_path / "pdfs"
    folder.mkdir()
    for name in E2E_FILES:
        (folder / name).symlink_to(shared_dir / "corpus" / name)
    store = Store(tmp_path / "lib.duckdb")
    summary = Indexer(store, real_embedder, workers=1, parse_timeout_s=300).run(folder, lambda _e: None)
    assert summary.documents == len(E2E_FILES) and not summary.failed
    data = Path(__file__).resolve().parents[3] / "bench" / "data"
    questions = [
        q for name in ("corpus_zh.json", "corpus_en.json")
        for q in json.loads((data / name).read_text())["questions"] if q["file"] in E2E_FILES
    ]
    by_language = {termlib.is_cjk_query(q["question"]) for q in questions}
    assert by_language == {True, False}
    retriever = Retriever(store, real_embedder)
    misses = []
    for q in questions:
        found = places(retriever.search(q["question"], k=5).passages)
        if not any(stem + ".pdf" == q["file"] and page in q["pages"] for stem, page in found):
            misses.append((q["question"], q["file"], q["pages"], found))
    store.close()
    assert not misses


def test_writes_leave_nothing_that_blocks_a_checkpoint(tmp_path: Path) -> None:
    """Every document write updates the postings' bookkeeping; nothing the store or
    the retriever leaves open may keep DuckDB from folding its WAL into the file (a
    half-read result did, and the WAL of a large library grew by gigabytes)."""
    store = Store(tmp_path / "lib.duckdb")
    retriever = Retriever(store, None)
    for i in range(3):
        add_document(store, None, f"memo-{i}", [[f"Budget memo {i} for the annual plan."]])
        retriever.search("annual budget plan", k=2)
    store._cursor().execute("CHECKPOINT")  # raises while another write transaction is open
    wal = tmp_path / "lib.duckdb.wal"
    assert not wal.exists() or wal.stat().st_size < 64 * 1024
    store.close()
