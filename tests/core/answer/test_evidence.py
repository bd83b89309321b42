"""Evidence, not chunks: what evidence.select keeps of each passage, and that its offsets
point at exactly the text the prompt carries."""

from __future__ import annotations

import dataclasses

from desktop_app.core.answer import evidence, prompts
from desktop_app.core.answer.answering import read_only
from desktop_app.core.answer.citations import SourceMap
from desktop_app.core.types import Passage

FILLER = [
    "The committee met twice in the spring.",
    "Its minutes were filed with the clerk.",
    "Weather delayed the second meeting by a week.",
    "Members asked for printed agendas.",
    "The chair thanked the volunteers.",
]


def passage(n: int, text: str, *, page: int | None = None, doc: str = "doc") -> Passage:
    return Passage(chunk_id=f"{doc}:{n}", doc_id=doc, doc_path=f"/docs/{doc}.pdf", doc_title="Report",
                   page=page if page is not None else n, page_label=str(page or n), section="",
                   char_start=100 * n, char_end=100 * n + len(text), score=1.0 / n, text=text)


def words(text: str) -> int:
    return len(text.split())


def test_keeps_the_answering_sentence_with_one_sentence_either_side() -> None:
    text = " ".join(FILLER[:2] + ["The server returns 414 when the request URI is too long."] + FILLER[2:])
    [kept] = evidence.select("Which status does the server return for a URI that is too long?",
                             [passage(1, text)], budget_tokens=200, count_tokens=words)
    pieces = [kept.text[s:e] for s, e in kept.read]
    assert pieces == [" ".join([FILLER[1], "The server returns 414 when the request URI is too long.",
                                FILLER[2]])]
    assert kept.text == text and kept.chunk_id == "doc:1"  # the whole chunk stays the citation


def test_offsets_are_exact_and_the_prompt_carries_only_the_pieces() -> None:
    text = ("Revenue rose in 2023. " + " ".join(FILLER) + " Net income was 42 million dollars in 2023. "
            + " ".join(FILLER))
    [kept] = evidence.select("What was net income in 2023?", [passage(1, text)], budget_tokens=40,
                             count_tokens=words, context_units=0)
    for start, end in kept.read:
        assert kept.text[start:end] in evidence.evidence_text(kept)
    assert "Net income was 42 million dollars in 2023." in [kept.text[s:e] for s, e in kept.read]
    block = prompts.format_source("[1]", kept, "What was net income in 2023?")
    assert "Net income was 42 million" in block
    assert "volunteers" not in block  # filler far from the answer is not shown
    assert "…" in block  # where text was left out


def test_order_within_a_passage_is_the_passage_order() -> None:
    text = "Alpha beta gamma appear first. " + " ".join(FILLER) + " Then gamma delta alpha once more."
    [kept] = evidence.select("alpha gamma delta", [passage(1, text)], budget_tokens=500,
                             count_tokens=words, context_units=0)
    starts = [s for s, _ in kept.read]
    assert starts == sorted(starts) and len(kept.read) == 2


def test_a_table_row_is_kept_whole() -> None:
    table = "Item 2022 2023\nRevenue 1,204 1,530\nCosts 800 912\nNet income 404 618\n"
    [kept] = evidence.select("What were the costs?", [passage(1, table)], budget_tokens=100,
                             count_tokens=words, context_units=0)
    assert [kept.text[s:e] for s, e in kept.read] == ["Costs 800 912"]


def test_near_duplicate_and_same_page_repeat_are_dropped() -> None:
    body = "The warranty covers the battery for eight years or 100,000 miles. " + FILLER[0]
    first, repeat = passage(1, body, page=4), passage(2, "Note: " + body, page=4)
    other = passage(3, "The warranty on the paint lasts three years. " + FILLER[1], page=9)
    kept = evidence.select("How long does the battery warranty last?", [first, repeat, other],
                           budget_tokens=500, count_tokens=words)
    assert [p.chunk_id for p in kept] == ["doc:1", "doc:3"]


def test_budget_holds_and_each_passage_gets_its_best_sentence_first() -> None:
    long = " ".join(f"The battery warranty detail number {i} is described here at length." for i in range(20))
    later = "In short the battery warranty lasts eight years."
    kept = evidence.select("How long does the battery warranty last?", [passage(1, long), passage(2, later)],
                           budget_tokens=40, count_tokens=words)
    assert [p.chunk_id for p in kept] == ["doc:1", "doc:2"]
    total = sum(words(p.text[s:e]) for p in kept for s, e in p.read)
    assert total <= 40


def test_the_best_sentence_is_kept_even_over_budget_and_zero_budget_is_the_old_path() -> None:
    text = "The only sentence about the battery warranty is rather long " + "and wordy " * 30 + "."
    [kept] = evidence.select("battery warranty", [passage(1, text)], budget_tokens=5, count_tokens=words)
    assert kept.read
    whole = [passage(1, text), passage(2, FILLER[0])]
    assert evidence.select("battery warranty", whole, budget_tokens=0) == whole


def test_chinese_question_finds_its_sentence() -> None:
    text = "公司成立于2001年。本期营业收入为4,755,785.11元，比上年同期减少16.55%。管理费用下降。员工人数保持稳定。"
    [kept] = evidence.select("本期营业收入是多少？", [passage(1, text)], budget_tokens=60,
                             context_units=0)
    assert [kept.text[s:e] for s, e in kept.read] == ["本期营业收入为4,755,785.11元，比上年同期减少16.55%。"]


def test_payload_carries_read_spans_and_checks_see_only_what_was_read() -> None:
    text = FILLER[0] + " The fee is 30 dollars. " + " ".join(FILLER[1:])
    [kept] = evidence.select("What is the fee?", [passage(1, text)], budget_tokens=100,
                             count_tokens=words, context_units=0)
    payload = SourceMap.build([kept]).payload("1")
    assert payload is not None and payload.read == kept.read
    assert payload.to_json()["read"] == [list(s) for s in kept.read]
    masked = read_only(kept)
    assert len(masked) == len(text) and "The fee is 30 dollars." in masked and "committee" not in masked
    assert read_only(dataclasses.replace(kept, read=())) == text


def test_one_source_keeps_the_cached_head_of_the_prompt() -> None:
    def render(count: int) -> list[dict[str, str]]:
        chosen = [passage(n, f"The fee is {n} dollars.") for n in range(1, count + 1)]
        source_map = SourceMap.build(chosen)
        return prompts.build_prompt("What is the fee?", [(lab, source_map.marker(lab), p) for lab, p in source_map.items()],
                                    count_tokens=words, context_tokens=4096, answer_tokens=320).messages

    primed = prompts.build_prompt("", [], count_tokens=words, context_tokens=4096, answer_tokens=320).messages
    for count in (1, 2, 3):
        assert render(count)[:-1] == primed[:-1]  # system and worked examples: the cached head
