"""Folio's BM25 tokenizer: the terms a question and a passage share decide what is found."""

from __future__ import annotations

import pytest

from desktop_app.core.text import words as termlib


def test_words_are_lowercased_stemmed_and_stripped_of_function_words() -> None:
    assert termlib.tokenize("The Servers were Caching the Responses") == ["server", "cach", "respons"]
    # Singular, plural and verb forms meet.
    for forms in (("expense", "expenses"), ("increase", "increased", "increasing"), ("policy", "policies"),
                  ("tax", "taxes"), ("statement", "statements"), ("cache", "caching")):
        assert len({termlib.tokenize(f)[0] for f in forms}) == 1, forms
    assert termlib.tokenize("the of and") == []
    assert termlib.tokenize("the of and", keep_stopwords=True) == ["the", "of", "and"]


def test_chinese_runs_become_bigrams_and_the_index_also_keeps_characters() -> None:
    assert termlib.tokenize("土地利用") == ["土地", "地利", "利用"]
    counts = termlib.term_counts("土地利用，土地")
    assert counts["土地"] == 2 and counts["土"] == 2 and counts["用"] == 1
    assert termlib.tokenize("省") == ["省"]


def test_a_year_glued_to_letters_is_also_found_on_its_own() -> None:
    counts = termlib.term_counts("FY2018 results, 10-K filing")
    assert {"fy2018", "fy", "2018", "10", "k"} <= set(counts)
    assert "fiscal" not in counts
    assert set(termlib.query_terms("capex in FY2018")) >= {"fy2018", "2018"}


def test_questions_search_for_their_content_not_their_phrasing() -> None:
    weights = termlib.query_terms(
        "What is the capital expenditure? Give a response by relying on the cash flow statement and explain why."
    )
    assert {"capital", "expenditur", "cash", "flow", "statement"} <= set(weights)
    assert not {"give", "response", "explain", "what", "relying", "rely"} & set(weights)
    # A question made only of such words still searches for them.
    assert set(termlib.query_terms("Explain the answer")) == {"explain", "the", "answer"}


def test_chinese_question_words_are_dropped_and_characters_weigh_less_than_bigrams() -> None:
    weights = termlib.query_terms("停车区用地指标是多少？")
    assert "多少" not in weights and "是多" not in weights
    assert weights["用地"] == 1.0
    assert weights["停"] == pytest.approx(termlib.CJK_UNIGRAM_WEIGHT)
    assert termlib.query_terms("省") == {"省": 1.0}  # a lone character is a full term


def test_term_ids_are_stable_positive_63_bit_hashes() -> None:
    assert termlib.term_id("土地") == termlib.term_id("土地")
    assert termlib.term_id("revenue") != termlib.term_id("revenues")
    for term in ("revenue", "土地", "fy2018", "a"):
        assert 0 <= termlib.term_id(term) < 2**63
    # The same in every process: postings written today must match queries tomorrow.
    assert termlib.term_id("revenue") == 828152096138512148


def test_query_language_is_decided_by_the_share_of_cjk_letters() -> None:
    assert termlib.is_cjk_query("停车区用地指标")
    assert termlib.is_cjk_query("xeCJK 中斜体的倾斜程度")
    assert not termlib.is_cjk_query("What does 用地 mean in this English sentence about land use?")
    assert termlib.cjk_share("") == 0.0
    assert termlib.is_cjk_char("土") and not termlib.is_cjk_char("土地") and not termlib.is_cjk_char("a")
