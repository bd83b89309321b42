"""While the model reads its sources: the answer pane lists the passages it reads (what
evidence.select kept), each a link to its highlighted page, with how long it will take;
they give way to the answer's first words. A cited source highlights what the model read."""

from __future__ import annotations

import re

from desktop_app.core.types import AnswerFinished, AnswerStarted, SourcePayload, TokenDelta
from desktop_app.ui.conversation.answer_html import read_excerpt, render_turn, waiting_words
from desktop_app.ui.conversation.answer_turn import AnswerTurn
from desktop_app.ui.qt.palette import DARK

TEXT = ("The committee met twice. The warranty covers the battery for eight years. "
        "Members asked for agendas. The chair thanked the volunteers.")
READ = ((25, 73),)


def source(sid: str = "1", read: tuple[tuple[int, int], ...] = READ) -> SourcePayload:
    return SourcePayload(id=sid, chunk_id=f"doc:{sid}", doc_id="doc", doc_path="/docs/manual.pdf",
                         doc_title="Owner's manual", page=4, page_label="4", section="Warranty",
                         text=TEXT, char_start=0, char_end=len(TEXT), read=read)


def started(estimate_s: float = 21.4) -> AnswerStarted:
    return AnswerStarted(question="How long is the battery warranty?", sources=(source("1"), source("2")),
                         answer_id="a1", prompt_tokens=412, estimate_s=estimate_s)


def test_the_passages_show_at_once_with_the_estimate_and_give_way_to_the_answer() -> None:
    turn = AnswerTurn("How long is the battery warranty?")
    turn.apply(started())
    html = render_turn(turn, 1, DARK)
    assert "The model is reading 2 passages (412 tokens); the answer will take about 21 s." in html
    assert 'href="source:1?turn=1"' in html and 'href="source:2?turn=1"' in html
    assert "The warranty covers the battery for eight years." in html
    shown = re.sub(r'title="[^"]*"', "", html)  # the tooltips quote the whole chunk
    assert "volunteers" not in shown  # only what the model reads, not the whole chunk
    turn.apply(TokenDelta("The battery is covered for eight years [1]."))
    html = render_turn(turn, 1, DARK)
    assert "The model is reading" not in html and "eight years" in html
    assert 'href="source:1?turn=1"' in html  # the source list stays under the answer


def test_the_estimate_line_without_a_measure_and_for_long_waits() -> None:
    turn = AnswerTurn("q")
    turn.apply(started(estimate_s=0.0))
    assert waiting_words(turn) == "The model is reading 2 passages (412 tokens)."
    turn.apply(started(estimate_s=200.0))
    assert waiting_words(turn).endswith("about 3 min.")


def test_excerpt_marks_the_cut_and_whole_passages_show_whole() -> None:
    assert read_excerpt(source()) == "… The warranty covers the battery for eight years. …"
    assert read_excerpt(source(read=())).startswith("The committee met twice.")


def test_a_cited_source_highlights_what_the_model_read_unless_a_check_found_support() -> None:
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(AnswerFinished(text="Eight years [1].", citations={"1": [(12, 15)]}, answer_id="a1",
                              stats={"prompt_tokens": 800, "first_token_s": 9.5}))
    assert turn.support_spans("1") == [READ[0]]
    assert turn.stats["prompt_tokens"] == 800
    assert AnswerStarted.__dataclass_fields__["estimate_s"].default == 0.0
    assert started().to_json()["sources"][0]["read"] == [[25, 73]]


def test_a_finished_answer_says_where_the_seconds_before_its_first_word_went() -> None:
    turn = AnswerTurn("How long is the battery warranty?")
    turn.apply(started())
    turn.apply(TokenDelta("The battery is covered for eight years [1]."))
    stats = {"prefill_tokens": 412, "prefill_s": 3.9,
             "first_word": {"search_s": 0.12, "prefill_s": 3.9, "prefill_tokens": 412, "first_decode_s": 0.1,
                            "first_token_s": 4.2, "first_word_s": 4.25, "pack_token_counts": 7}}
    turn.apply(AnswerFinished(text=turn.text, citations={"1": [(0, 10)]}, answer_id="a1", stats=stats))
    html = render_turn(turn, 1, DARK)
    assert "first word 4.25 s: search 0.12 s, reading the prompt (412 tokens) 3.90 s, first token 0.10 s" in html
