"""Prompt building: what the model is shown, in which order, within its window."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.answer import prompts
from desktop_app.core.answer.citations import SourceMap
from desktop_app.core.text.words import question_language
from desktop_app.core.types import Passage


def count_words(text: str) -> int:
    """A fake tokenizer: one token per whitespace-separated word, one per CJK character."""
    return len(text.split()) + sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")


def passage(
    n: int,
    text: str | None = None,
    *,
    title: str = "Annual report",
    section: str = "Cash flows",
    page_label: str | None = None,
) -> Passage:
    body = (
        text
        if text is not None
        else f"Passage number {n} says the figure is {n * 111} million. " * 3
    )
    return Passage(
        chunk_id=f"doc:{n}:0",
        doc_id="doc",
        doc_path="/docs/report.pdf",
        doc_title=title,
        page=n,
        page_label=page_label or str(n),
        section=section,
        char_start=0,
        char_end=len(body),
        score=1.0 / n,
        text=body,
    )


def sources(passages: list[Passage], style: str = "label") -> list[tuple[str, str, Passage]]:
    source_map = SourceMap.build(passages, style)
    return [(label, source_map.marker(label), p) for label, p in source_map.items()]


def total_tokens(packed: prompts.PackedPrompt) -> int:
    return sum(count_words(m["content"]) + prompts.MESSAGE_OVERHEAD_TOKENS for m in packed.messages)


def test_packing_keeps_the_best_sources_that_fit_the_window_in_rank_order() -> None:
    given = sources([passage(n) for n in range(1, 21)])
    packed = prompts.build_prompt(
        "What is the figure?",
        given,
        count_tokens=count_words,
        context_tokens=900,
        answer_tokens=300,
    )
    assert 0 < len(packed.labels) < 20
    assert packed.labels == [
        str(n) for n in range(1, len(packed.labels) + 1)
    ]  # best first, no gaps
    assert total_tokens(packed) + prompts.TEMPLATE_MARGIN_TOKENS <= 900 - 300
    task = packed.messages[-1]["content"]
    positions = [task.index(f"[{label}] (") for label in packed.labels]
    assert positions == sorted(positions)
    assert f"[{len(packed.labels) + 1}] (" not in task


def test_a_bigger_window_holds_more_sources_and_max_sources_caps_them() -> None:
    given = sources([passage(n) for n in range(1, 21)])
    small = prompts.build_prompt(
        "q?", given, count_tokens=count_words, context_tokens=900, answer_tokens=300
    )
    big = prompts.build_prompt(
        "q?", given, count_tokens=count_words, context_tokens=8000, answer_tokens=300
    )
    capped = prompts.build_prompt(
        "q?", given, count_tokens=count_words, context_tokens=8000, answer_tokens=300, max_sources=3
    )
    assert len(big.labels) == 20 > len(small.labels)
    assert capped.labels == ["1", "2", "3"]


def test_a_best_source_too_long_for_the_window_is_cut_to_fit() -> None:
    long = passage(1, "Revenue grew in every region this year. " * 400)
    packed = prompts.build_prompt(
        "How did revenue grow?",
        sources([long, passage(2)]),
        count_tokens=count_words,
        context_tokens=1200,
        answer_tokens=300,
        passage_chars=100_000,
        passage_tokens=None,
    )
    assert packed.labels == ["1"]
    assert total_tokens(packed) + prompts.TEMPLATE_MARGIN_TOKENS <= 1200 - 300
    assert "Revenue grew in every region" in packed.messages[-1]["content"]


def test_no_source_is_listed_when_even_the_prompt_alone_overflows() -> None:
    packed = prompts.build_prompt(
        "q?", sources([passage(1)]), count_tokens=count_words, context_tokens=300, answer_tokens=290
    )
    assert packed.labels == []


def test_each_source_is_listed_with_its_label_title_section_and_page_label_before_its_text() -> (
    None
):
    given = sources(
        [
            passage(1, "Capital expenditure was $1,577 million.", page_label="47"),
            passage(2, "Dividends were $3,193 million.", title="Proxy", section=""),
        ]
    )
    packed = prompts.build_prompt(
        "What was capital expenditure?",
        given,
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    task = packed.messages[-1]["content"]
    assert "[1] (Annual report, Cash flows, p. 47)\nCapital expenditure was $1,577 million." in task
    assert "[2] (Proxy, p. 2)\nDividends were $3,193 million." in task


def test_the_question_and_the_instruction_to_cite_come_after_the_sources() -> None:
    packed = prompts.build_prompt(
        "What was capital expenditure in 2018?",
        sources([passage(1), passage(2)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    task = packed.messages[-1]["content"]
    last_source = task.index("[2] (")
    assert task.index("What was capital expenditure in 2018?") > last_source
    tail = task[task.index("What was capital expenditure in 2018?") :]
    assert "[1]" in tail  # the citing instruction, with a marker to copy, sits by the question
    assert prompts.NO_ANSWER["en"] in tail


def test_a_worked_example_precedes_the_question_as_an_earlier_cited_answer() -> None:
    packed = prompts.build_prompt(
        "What was capital expenditure?",
        sources([passage(1), passage(2)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    roles = [m["role"] for m in packed.messages]
    assert roles[0] == "system" and roles[-1] == "user"
    assert "assistant" in roles
    example_answer = packed.messages[roles.index("assistant")]["content"]
    assert example_answer.count("[1]") + example_answer.count("[2]") >= 2


def test_the_example_uses_the_short_ids_of_the_request_in_shortid_style() -> None:
    given = sources([passage(1), passage(2)], style="shortid")
    markers = [marker for _, marker, _ in given]
    packed = prompts.build_prompt(
        "What was capital expenditure?",
        given,
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    example_answer = next(m["content"] for m in packed.messages if m["role"] == "assistant")
    assert markers[0] in example_answer and "[1]" not in example_answer
    assert markers[0] in packed.messages[0]["content"]


def test_a_chinese_question_gets_the_chinese_templates_and_refusal() -> None:
    packed = prompts.build_prompt(
        "2018年第一季度的营业收入是多少？",
        sources([passage(1)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    assert packed.language == "zh"
    text = "\n".join(m["content"] for m in packed.messages)
    assert "资料" in text and prompts.NO_ANSWER["zh"] in packed.messages[-1]["content"]
    assert "Sources:" not in text
    english = prompts.build_prompt(
        "What was revenue?",
        sources([passage(1)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    assert english.language == "en" and "Sources:" in english.messages[-1]["content"]
    forced = prompts.build_prompt(
        "What was revenue?",
        sources([passage(1)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
        language="zh",
    )
    assert forced.language == "zh"


def test_a_german_question_gets_the_german_templates_and_refusal() -> None:
    packed = prompts.build_prompt(
        "Wie viele Verbindungen darf ein Client zu einem Server halten?",
        sources([passage(1)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    assert packed.language == "de"
    text = "\n".join(m["content"] for m in packed.messages)
    assert "Quellen:" in text and prompts.NO_ANSWER["de"] in packed.messages[-1]["content"]
    assert "Sources:" not in text and "{" not in text


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Was ist ein topologischer Raum?", "de"),
        ("Welche Eigenschaften hat die Quotiententopologie?", "de"),
        ("Ist jede kompakte Teilmenge abgeschlossen?", "de"),
        ("What is the default port of the protocol?", "en"),
        ("Is a compact subset of a Hausdorff space closed?", "en"),
        ("Where was the Causby case decided, and when?", "en"),
        ("ctex 宏包默认启用哪些选项？", "zh"),
        # Chinese around English names: it is answered in Chinese (these went to English)
        ("uniqueMPgraphic 和 useMPgraphic 两种环境有什么区别？", "zh"),
        ('Windows XP 下 Asymptote 报 "Invalid Parameter - 432x432" 是什么原因？', "zh"),
        ("What does 甲方 mean in this contract?", "en"),
        # "A" of "A5" is not English's article; a leading "Was" before a German verb
        ("Was kostet eine gedruckte A5-Ausgabe des Skripts?", "de"),
        ("Was besagt der Brouwersche Fixpunktsatz?", "de"),
        ("Was the treaty signed in 1990?", "en"),
    ],
)
def test_the_question_language_is_told_from_its_words(question: str, language: str) -> None:
    assert question_language(question) == language


def test_a_long_passage_is_cut_around_the_question_terms() -> None:
    text = (
        "Unrelated boilerplate about the company. " * 40
        + "Capital expenditure was $1,577 million. "
        + "More unrelated text follows here. " * 40
    )
    shown = prompts.focus_text(text, "What was the capital expenditure?", 300)
    assert len(shown) <= 304
    assert "Capital expenditure was $1,577 million." in shown
    assert shown.startswith("…") and shown.endswith("…")
    assert prompts.focus_text("Short passage.", "anything", 300) == "Short passage."


def test_a_passage_dense_in_tokens_is_cut_to_the_token_cap() -> None:
    chinese = "营业收入比上年同期减少百分之十六。" * 60  # one fake token per character
    packed = prompts.build_prompt("营业收入是多少？", sources([passage(1, chinese)]), count_tokens=count_words,
                                  context_tokens=4096, answer_tokens=300, passage_chars=600, passage_tokens=150)
    shown = packed.messages[-1]["content"].split("\n", 3)[3].split("\n\n")[0]
    assert "营业收入" in shown
    assert count_words(shown) <= 150
    uncapped = prompts.build_prompt("营业收入是多少？", sources([passage(1, chinese)]), count_tokens=count_words,
                                    context_tokens=4096, answer_tokens=300, passage_chars=600, passage_tokens=None)
    assert total_tokens(uncapped) - total_tokens(packed) > 300


def test_templates_are_read_from_the_prompts_folder(tmp_path: Path) -> None:
    (tmp_path / "system_en.txt").write_text("SYSTEM cite like {example_marker}", encoding="utf-8")
    (tmp_path / "task_en.txt").write_text(
        "{sources}\nQ: {question}\nElse: {refusal}", encoding="utf-8"
    )
    packed = prompts.build_prompt(
        "Why?",
        sources([passage(1)]),
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
        prompts_dir=tmp_path,
    )
    assert [m["role"] for m in packed.messages] == [
        "system",
        "user",
    ]  # no example file, no example turn
    assert packed.messages[0]["content"] == "SYSTEM cite like [1]"
    assert packed.messages[1]["content"].endswith("Q: Why?\nElse: " + prompts.NO_ANSWER["en"])


@pytest.mark.parametrize("language", ["en", "zh", "de"])
def test_the_shipped_examples_parse(language: str) -> None:
    examples = prompts.load_examples(language)
    assert examples and all(e.question and e.answer and e.sources for e in examples)


def test_a_source_names_its_innermost_heading_and_spells_out_pdf_ligatures() -> None:
    given = sources([passage(1, "Metrische Räume sind hausdorﬀsch (Deﬁnition 10).",
                             section="1 Topologie > 1.2 Metrische Räume")])
    packed = prompts.build_prompt(
        "Sind metrische Räume immer hausdorffsch?",
        given,
        count_tokens=count_words,
        context_tokens=4096,
        answer_tokens=300,
    )
    task = packed.messages[-1]["content"]
    assert "[1] (Annual report, 1.2 Metrische Räume, p. 1)\nMetrische Räume sind hausdorffsch (Definition 10)." in task
    assert "ﬀ" not in task and "1 Topologie >" not in task


def test_a_follow_up_prompt_recalls_earlier_turns_briefly_without_their_markers() -> None:
    from desktop_app.core.answer.prompts import (
        RECALLED_TOKENS,
        build_prompt,
        recalled_turns,
        short_answer,
    )

    def count(text: str) -> int:
        return len(text.split())

    history = [("What does a 404 status code mean?", "Not found [1]."),
               ("And what about 410?", "The resource is gone for good [2][3].")]
    turns = recalled_turns(history, count)
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[1]["content"] == "Not found." and turns[3]["content"] == "The resource is gone for good."
    # A long answer is cut at a word; what does not fit drops the oldest turn first.
    long = short_answer("The server found nothing at the URI [1]. " + "More words. " * 80)
    assert long.endswith("…") and len(long) <= 125 and "[1]" not in long
    wordy = [("What does a 404 status code mean?", "More words. " * 80), history[1]]
    kept = recalled_turns(wordy, count)
    assert [t["content"] for t in kept if t["role"] == "user"] == ["And what about 410?"]
    assert sum(count(t["content"]) + 8 for t in kept) <= RECALLED_TOKENS
    packed = build_prompt("Is it cacheable?", [], count_tokens=count, context_tokens=4096, answer_tokens=256,
                          language="en", history=history)
    assert packed.messages[-3]["content"] == "And what about 410?"
    assert packed.messages[-1]["role"] == "user" and "Is it cacheable?" in packed.messages[-1]["content"]
    alone = build_prompt("Is it cacheable?", [], count_tokens=count, context_tokens=4096, answer_tokens=256,
                         language="en")
    assert len(packed.messages) == len(alone.messages) + 4
    assert packed.request_tokens > alone.request_tokens  # the recalled turns are read too


def test_a_chinese_answer_is_cut_to_fit_not_dropped() -> None:
    from desktop_app.core.answer.prompts import RECALLED_TOKENS, recalled_turns

    def count(text: str) -> int:  # about a token a Chinese character
        return len(text)

    turns = recalled_turns([("东北电气 2018 年第一季度的营业收入是多少？",
                             "东北电气 2018 年第一季度的营业收入为 4,755,785.11 元，比上年同期减少 16.55% [1]。" * 3)], count)
    assert turns[1]["content"].startswith("东北电气") and turns[1]["content"] != "…"
    assert sum(count(t["content"]) + 8 for t in turns) <= RECALLED_TOKENS
