"""The steering that keeps a Chinese sentence from ending without its marker (unit level:
a made-up vocabulary; tests/e2e runs it with the real model)."""

from __future__ import annotations

import numpy as np

from desktop_app.core.models.steer import SentenceMarkers, SourceChoice, TokenTable
from desktop_app.core.types import Steering

PIECES = ["<s>", "报告", "必须", "。", "[", " [", "1", "]", "文档中没有这个问题的答案", "是", "，", "!", "。\n"]
TOKEN = {p: i for i, p in enumerate(PIECES)}
REFUSAL = "文档中没有这个问题的答案。"


def table() -> TokenTable:
    return TokenTable([p.encode("utf-8") for p in PIECES])


def scores_preferring(piece: str) -> np.ndarray:
    scores = np.zeros(len(PIECES), dtype=np.float32)
    scores[TOKEN[piece]] = 5.0
    scores[TOKEN[" ["]] = 1.0
    return scores


def ids(*pieces: str) -> np.ndarray:
    return np.array([TOKEN["<s>"], *(TOKEN[p] for p in pieces)], dtype=np.intc)


def test_the_table_finds_full_stops_and_brackets() -> None:
    t = table()
    assert sorted(t.terminators) == [TOKEN["。"], TOKEN["。\n"]]
    assert sorted(t.brackets) == [TOKEN["["], TOKEN[" ["]]


def test_a_sentence_without_a_marker_opens_one_instead_of_ending() -> None:
    steer = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    out = steer(ids("报告", "必须", "报告", "必须"), scores_preferring("。"))
    assert int(out.argmax()) == TOKEN[" ["]  # the likelier bracket of the two
    assert out[TOKEN["。"]] == -np.inf and out[TOKEN["。\n"]] == -np.inf
    assert steer.forced == 1


def test_a_marked_sentence_ends_as_the_model_wants() -> None:
    steer = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    out = steer(ids("报告", "必须", "报告", " [", "1", "]"), scores_preferring("。"))
    assert int(out.argmax()) == TOKEN["。"] and steer.forced == 0


def test_the_next_sentence_needs_its_own_marker() -> None:
    steer = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    written = ids("报告", "必须", " [", "1", "]", "。", "报告", "必须", "报告")
    assert int(steer(written, scores_preferring("。")).argmax()) == TOKEN[" ["]


def test_only_the_likeliest_token_decides() -> None:
    steer = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    before = scores_preferring("是")
    out = steer(ids("报告", "必须", "报告", "必须"), before.copy())
    assert np.array_equal(out, before) and steer.forced == 0


def test_the_no_answer_sentence_and_short_runs_are_not_marked() -> None:
    steer = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    assert int(steer(ids("文档中没有这个问题的答案"), scores_preferring("。")).argmax()) == TOKEN["。"]
    short = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    assert int(short(ids("是"), scores_preferring("。")).argmax()) == TOKEN["。"]


def test_only_the_answer_is_read_not_the_prompt() -> None:
    steer = SentenceMarkers(table(), 3, Steering(refusal=REFUSAL))  # "<s>报告必须" is the prompt
    assert steer.text(ids("报告", "必须", "是", "。")) == "是。"


def test_a_full_width_marker_counts_as_a_marker() -> None:
    steer = SentenceMarkers(table(), 1, Steering(refusal=REFUSAL))
    assert not steer.needs_marker("报告必须报告必须【1】")
    assert not steer.needs_marker("报告必须报告必须［2］")
    assert steer.needs_marker("报告必须报告必须")


# ----------------------------------------------------------------- the number in a marker

WORDS = ["<s>", "The", " fee", " is", " 10", " euro", " [", "1", "2", "]", ".", " The", " colour", " red"]
WORD = {p: i for i, p in enumerate(WORDS)}
SOURCES = (("1", "Apples come in many colours, most often red."), ("2", "The fee is 10 euro a month."))


def words_table() -> TokenTable:
    return TokenTable([p.encode("utf-8") for p in WORDS])


def words(*pieces: str) -> np.ndarray:
    return np.array([WORD["<s>"], *(WORD[p] for p in pieces)], dtype=np.intc)


def digit_scores(one: float, two: float) -> np.ndarray:
    scores = np.zeros(len(WORDS), dtype=np.float32)
    scores[WORD["1"]], scores[WORD["2"]] = one, two
    return scores


def test_the_table_finds_the_digits() -> None:
    assert words_table().digits == {"1": WORD["1"], "2": WORD["2"]}


def test_the_number_goes_to_the_source_that_holds_the_sentence() -> None:
    choice = SourceChoice(words_table(), 1, Steering(mark_sentences=False, sources=SOURCES))
    out = choice(words("The", " fee", " is", " 10", " euro", " ["), digit_scores(2.0, 1.5))
    assert int(out.argmax()) == WORD["2"]  # the model leaned to [1], which says nothing of a fee
    assert choice.weighed == 1 and choice.moved == 1


def test_a_clear_choice_of_the_model_stands() -> None:
    sources = (("1", "The fee is 10 euro a month."), ("2", "Apples are red."))
    choice = SourceChoice(words_table(), 1, Steering(mark_sentences=False, sources=sources))
    out = choice(words("The", " fee", " is", " 10", " euro", " ["), digit_scores(1.0, 6.0))
    assert int(out.argmax()) == WORD["2"] and choice.moved == 0


def test_the_first_source_is_preferred_when_both_hold_the_sentence() -> None:
    sources = (("1", "The fee is 10 euro."), ("2", "The fee is 10 euro a month."))
    choice = SourceChoice(words_table(), 1, Steering(mark_sentences=False, sources=sources))
    out = choice(words("The", " fee", " is", " 10", " euro", " ["), digit_scores(1.0, 1.5))
    assert int(out.argmax()) == WORD["1"]


def test_only_the_first_marker_of_a_sentence_and_only_after_an_opener() -> None:
    choice = SourceChoice(words_table(), 1, Steering(mark_sentences=False, sources=SOURCES))
    second = digit_scores(2.0, 1.5)
    assert np.array_equal(choice(words("The", " fee", " is", " 10", " [", "1", "]", " ["), second.copy()), second)
    elsewhere = digit_scores(2.0, 1.5)
    assert np.array_equal(choice(words("The", " fee", " is", " 10", " euro"), elsewhere.copy()), elsewhere)
    assert choice.weighed == 0


def test_the_next_sentence_is_weighed_on_its_own_words() -> None:
    choice = SourceChoice(words_table(), 1, Steering(mark_sentences=False, sources=SOURCES))
    written = words("The", " fee", " is", " 10", " euro", " [", "2", "]", ".", " The", " colour", " red", " [")
    assert int(choice(written, digit_scores(1.0, 2.5)).argmax()) == WORD["1"]


def test_ten_sources_or_more_are_left_to_the_model() -> None:
    """With a label "10", the "1" token also opens "10".."19": the number is the model's."""
    table = TokenTable([p.encode("utf-8") for p in [*WORDS, *"3456789"]])
    nine = (*SOURCES, *((str(n), "Pears are green.") for n in range(3, 10)))
    assert SourceChoice(table, 1, Steering(mark_sentences=False, sources=nine)).sources
    ten = (*nine, ("10", "Plums are blue."))
    choice = SourceChoice(table, 1, Steering(mark_sentences=False, sources=ten))
    before = np.zeros(len(WORDS) + 7, dtype=np.float32)
    before[WORD["1"]], before[WORD["2"]] = 2.0, 1.5
    assert np.array_equal(choice(words("The", " fee", " is", " 10", " euro", " ["), before.copy()), before)


def test_a_bracket_that_opens_no_source_number_is_left_alone() -> None:
    """"[0,1]" in a sentence about an interval: the model means no source, nothing is weighed."""
    choice = SourceChoice(words_table(), 1, Steering(mark_sentences=False, sources=SOURCES))
    before = digit_scores(2.0, 1.5)
    before[WORD[" The"]] = 4.0  # the model's likeliest token is not a source number
    assert np.array_equal(choice(words("The", " fee", " is", " 10", " euro", " ["), before.copy()), before)
    assert choice.weighed == 0
