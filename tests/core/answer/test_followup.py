"""Follow-up questions made to stand alone by rules, in each language Folio answers in;
a question that stands alone is searched exactly as written."""

from __future__ import annotations

import pytest

from desktop_app.core.answer import followup
from desktop_app.core.answer.followup import standalone


def test_without_a_conversation_nothing_changes() -> None:
    result = standalone("And what about 410?")
    assert result.searched == "And what about 410?" and not result.rewritten


@pytest.mark.parametrize(("first", "question", "searched"), [
    ("What does a 404 status code mean?", "And what about 410?", "What does a 410 status code mean?"),
    ("What does the 401 status code mean?", "What about 403?", "What does the 403 status code mean?"),
    ("How many NICS firearm background checks were there in Kansas in total?", "And in Kentucky?",
     "How many NICS firearm background checks were there in Kentucky in total?"),
])
def test_english_ellipsis_takes_the_place_of_its_counterpart(first: str, question: str, searched: str) -> None:
    result = standalone(question, [first])
    assert result.searched == searched and result.rule == "replaced"


def test_english_ellipsis_without_a_counterpart_carries_the_topic() -> None:
    result = standalone("And how many extra BM25 negatives per question were used?", ["What batch size was DPR trained with?"])
    assert result.rule == "elliptical"
    assert result.searched.startswith("How many extra BM25 negatives per question were used")
    assert "DPR" in result.searched and "batch" in result.searched


@pytest.mark.parametrize(("first", "question", "topic"), [
    ("What is PDF.js?", "Who was its original author?", "PDF.js"),
    ("What is the DMCA?", "When was it signed?", "DMCA"),
    ("What is a self-locking nut?", "What are the two general types of them in use?", "self-locking nut"),
])
def test_english_reference_is_searched_with_the_previous_topic(first: str, question: str, topic: str) -> None:
    result = standalone(question, [first])
    assert result.rule == "reference" and result.searched == f"{question} ({topic})"


@pytest.mark.parametrize("question", [
    "What status code should a server return when a request URI is longer than it can handle?",
    "How does a WebSocket server show the client that it actually read the opening handshake?",
    "What values of b and k1 did the DPR paper use for its BM25 baseline?",
    "Which movie introduced synchronized sound to film a year before Steamboat Willie?",
])
def test_a_question_that_names_what_it_is_about_stands_alone(question: str) -> None:
    result = standalone(question, ["What does a 404 status code mean?"])
    assert result.searched == question and not result.rewritten


@pytest.mark.parametrize(("first", "question", "kept", "new"), [
    ("东北电气 2018 年第一季度的营业收入是多少？", "那普通股股东总数呢？", "东北电气", "普通股股东总数"),
    ("八车道高速公路停车区用地指标基准值是多少公顷？", "那六车道的呢？", "停车区用地指标基准值", "六车道"),
    ("菲达环保对神鹰集团担保预计的损失率是多少？", "那计提了多少预计负债？", "菲达环保", "预计负债"),
])
def test_chinese_na_ne_follow_up_keeps_the_subject(first: str, question: str, kept: str, new: str) -> None:
    result = standalone(question, [first])
    assert result.rule == "elliptical"
    assert kept in result.searched and new in result.searched
    assert "呢" not in result.searched and "是多少" not in result.searched


def test_chinese_reference_is_searched_with_the_previous_topic() -> None:
    result = standalone("它是在哪一年发布的？", ["OpenType 是谁发布的？"])
    assert result.rule == "reference" and "OpenType" in result.searched


def test_chinese_words_that_contain_a_reference_are_none() -> None:
    # 其他 (other), 应该 (should), 因此 (so) hold 其, 该, 此 but point back at nothing
    assert followup.references("其他的宏包应该怎么设置？因此") == []


@pytest.mark.parametrize(("first", "question", "topic"), [
    ("Was ist die diskrete Metrik?", "Welche Topologie induziert sie?", "diskrete Metrik"),
    ("Was besagt der Jordansche Kurvensatz?", "Wo kann man den Beweis dafür nachlesen?", "Jordansche Kurvensatz"),
    ("Was ist die Gauß-Krümmung?", "Und wer hat es bewiesen?", "Gauß-Krümmung"),
])
def test_german_reference_and_und_are_follow_ups(first: str, question: str, topic: str) -> None:
    result = standalone(question, [first])
    assert result.rewritten and topic in result.searched


def test_german_short_und_reads_the_previous_question_s_language() -> None:
    result = standalone("Und GLn(R)?", ["Welche Dimension hat Cⁿ als Mannigfaltigkeit?"])
    assert result.rule == "elliptical"
    assert "GLn(R)" in result.searched and "Mannigfaltigkeit" in result.searched


def test_german_article_before_a_noun_is_no_reference() -> None:
    # "das Skript" names its noun; "gibt es" points at nothing
    assert followup.references("Was versteht das Skript unter einem Knoten?") == []
    assert followup.references("Gibt es in der Zariski-Topologie disjunkte offene Mengen?") == []
    assert followup.references("Ist das immer ein Homöomorphismus?") == ["das"]


def test_a_chain_carries_the_standalone_question_on() -> None:
    first = "What does a 404 status code mean?"
    second = standalone("And what about 410?", [first]).searched
    third = standalone("What about 403?", [first, second])
    assert third.searched == "What does a 403 status code mean?"


def test_a_chinese_chain_carries_one_flat_topic() -> None:
    first = "东北电气 2018 年第一季度的营业收入是多少？"
    second = standalone("那净利润呢？", [first]).searched
    third = standalone("这家公司的第一大股东是谁？", [first, second])
    assert third.rule == "reference"
    assert third.searched.count("(") == 1 and "东北电气" in third.searched and "净利润" in third.searched
