"""The document's own answering sentence in a turn (Qt-free): kept in the turn from its
event, rendered under the question and above the answer while tokens stream, narrowed to
the sentence when opened, named for a screen reader, reopened from a saved record and
exported; a turn that found the passage only shows no model at work; and a turn without a
quote renders as before."""

from __future__ import annotations

import html as entities
import re

from desktop_app.core.types import (
    AnswerFinished,
    AnswerQuoted,
    AnswerStarted,
    NoBasis,
    QuotePayload,
    SavedAnswer,
    SourcePayload,
    TokenDelta,
)
from desktop_app.ui.conversation.answer_html import (
    QUOTE_ONLY_TEXT,
    link_name,
    quote_name,
    render_turn,
)
from desktop_app.ui.conversation.answer_turn import AnswerTurn, TurnState
from desktop_app.ui.conversation.history_panel import turn_from_record
from desktop_app.ui.conversation.markdown_export import turn_to_markdown
from desktop_app.ui.qt.palette import Colours

TEXT = ("The committee met twice. The warranty covers the battery for eight years. "
        "Members asked for agendas.")
SENTENCE = "The warranty covers the battery for eight years."
START = TEXT.index(SENTENCE)
CHUNK_START = 300  # where the chunk begins in its page's text
ANSWER = "The battery is covered for eight years [1]."


def source(sid: str = "1") -> SourcePayload:
    return SourcePayload(id=sid, chunk_id=f"doc:{sid}", doc_id="doc", doc_path="/docs/manual.pdf",
                         doc_title="Owner's manual", page=4, page_label="4", section="Warranty",
                         text=TEXT, char_start=CHUNK_START, char_end=CHUNK_START + len(TEXT), read=((0, 24),))


def quote(span: tuple[int, int] = (START, START + len(SENTENCE)), text: str = SENTENCE) -> QuotePayload:
    return QuotePayload("1", text, span, "/docs/manual.pdf", 4, (CHUNK_START + span[0], CHUNK_START + span[1]),
                        0.8, "amount")


def started() -> AnswerStarted:
    return AnswerStarted(question="How long is the battery warranty?", sources=(source("1"), source("2")),
                         answer_id="a1", prompt_tokens=412, estimate_s=20.0)


def plain_text(html: str) -> str:
    """The words a reader sees (tags and their tooltips dropped)."""
    return entities.unescape(re.sub(r"<[^>]+>", "", html))


def test_the_quote_stands_under_the_question_and_above_the_answer_while_it_streams() -> None:
    turn = AnswerTurn("How long is the battery warranty?")
    turn.apply(started())
    revision = turn.revision
    turn.apply(AnswerQuoted((quote(),)))
    assert turn.quotes == (quote(),) and turn.revision > revision  # the pane knows to re-render
    html = render_turn(turn, 0, Colours())
    seen = plain_text(html)
    # Before the model's first word: the document's words, in quotation marks, with its marker.
    assert f"“{SENTENCE}”" in seen and "From the document · Owner's manual — p. 4 · Warranty" in seen
    assert 'href="quote:0?turn=0"' in html
    assert seen.index("How long is the battery warranty?") < seen.index("From the document") < seen.index(
        "The model is reading")
    for delta in ("The battery is covered ", "for eight years [1]."):
        turn.apply(TokenDelta(delta))
        seen = plain_text(render_turn(turn, 0, Colours()))
        assert seen.index(f"“{SENTENCE}”") < seen.index("The battery is covered")  # still there, still above
    turn.apply(AnswerFinished(text=ANSWER, citations={"1": [(39, 42)]}, answer_id="a1"))
    seen = plain_text(render_turn(turn, 0, Colours()))
    assert seen.index(f"“{SENTENCE}”") < seen.index("The battery is covered") and not turn.quote_only


def test_a_later_quote_replaces_the_first() -> None:
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(AnswerQuoted((quote(),)))
    other = quote((0, 24), "The committee met twice.")
    turn.apply(AnswerQuoted((other,)))
    html = render_turn(turn, 0, Colours())
    assert turn.quotes == (other,) and "“The committee met twice.”" in html and f"“{SENTENCE}”" not in html


def test_opening_the_quote_highlights_the_sentence_alone_not_the_chunk() -> None:
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(AnswerQuoted((quote(),)))
    opened = turn.quote_source(0)
    assert opened is not None and opened.chunk_id == "doc:1" and opened.doc_id == "doc"
    assert opened.text == SENTENCE
    assert (opened.char_start, opened.char_end) == quote().page_span  # the page's offsets of the sentence
    assert opened.read == ((0, len(SENTENCE)),)  # the strong highlight: the whole sentence, nothing else
    assert turn.source("1") == source("1")  # the marker still opens the whole passage
    assert turn.quote_source(1) is None


def test_a_quote_whose_span_moved_is_found_by_its_words_and_one_not_in_the_source_opens_it_whole() -> None:
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(AnswerQuoted((quote(span=(0, len(SENTENCE))), quote(span=(5, 10), text="Pets are welcome."))))
    moved = turn.quote_source(0)
    assert moved is not None and moved.text == SENTENCE and moved.char_start == CHUNK_START + START
    assert turn.quote_source(1) == source("1")


def test_the_quote_has_a_name_for_a_screen_reader() -> None:
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(AnswerQuoted((quote(),)))
    name = f"Quote from Owner's manual, p. 4: {SENTENCE}"
    assert quote_name(turn, 0) == name and link_name(turn, "quote", "0") == name
    assert 'title="Quote from Owner&#x27;s manual, p. 4: ' in render_turn(turn, 0, Colours())
    assert link_name(turn, "cite", "1") == "Citation 1: Owner's manual — p. 4 · Warranty"
    assert link_name(turn, "quote", "3") == "" and link_name(turn, "searched", "") == ""


def test_without_a_quote_the_turn_renders_as_before() -> None:
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(TokenDelta(ANSWER))
    turn.apply(AnswerFinished(text=ANSWER, citations={"1": [(39, 42)]}, answer_id="a1"))
    html = render_turn(turn, 0, Colours())
    assert turn.quotes == () and "From the document" not in html and "quote:" not in html
    assert "(not cited)" in html  # source 2 was given and not cited
    assert "From the document" not in turn_to_markdown(turn)


def test_finding_the_passage_only_shows_no_model_at_work() -> None:
    turn = AnswerTurn("How long is the battery warranty?", quote_only=True)
    assert "Finding the passage that answers" in render_turn(turn, 0, Colours())
    turn.apply(started())
    html = render_turn(turn, 0, Colours())
    assert "The model is reading" not in html and "Answering" not in html
    turn.apply(AnswerQuoted((quote(),)))
    turn.apply(AnswerFinished(text="", citations={}, hallucinated=(), answer_id="a1"))
    html = render_turn(turn, 0, Colours())
    assert turn.state is TurnState.FINISHED and f"“{SENTENCE}”" in html
    assert QUOTE_ONLY_TEXT in plain_text(html)
    assert 'href="source:1?turn=0"' in html and "(not cited)" not in html  # its sources, no model to cite them


def test_finding_the_passage_only_with_nothing_that_answers_says_so() -> None:
    turn = AnswerTurn("Who painted the pump?", quote_only=True)
    turn.apply(started())
    turn.apply(NoBasis(reason="No sentence in the sources answers the question surely enough."))
    turn.apply(AnswerFinished(text="", citations={}, hallucinated=(), answer_id="a1"))
    html = render_turn(turn, 0, Colours())
    assert turn.state is TurnState.NO_BASIS and "The documents hold no basis for this question" in html
    assert "From the document" not in html and "The model is reading" not in html


def test_a_turn_that_finished_with_the_quote_alone_reads_as_the_passage_only() -> None:
    """The facade's own settings may find the passage only: an empty finish after a quote says so."""
    turn = AnswerTurn("q")
    turn.apply(started())
    turn.apply(AnswerQuoted((quote(),)))
    turn.apply(AnswerFinished(text="", citations={}, hallucinated=(), answer_id="a1"))
    assert turn.quote_only and "(not cited)" not in render_turn(turn, 0, Colours())


def test_a_saved_answer_reopens_with_its_quote_and_exports_it() -> None:
    record = SavedAnswer(answer_id="a1", question="How long is the battery warranty?", text=ANSWER,
                         sources=(source("1"), source("2")), citations={"1": ((39, 42),)}, quotes=(quote(),),
                         created_at="2024-05-01 10:00:00")
    record = SavedAnswer.from_json(record.to_json())  # as the answers file gives it back
    turn = turn_from_record(record)
    assert turn.quotes == (quote(),)
    seen = plain_text(render_turn(turn, 0, Colours()))
    assert seen.index(f"“{SENTENCE}”") < seen.index("The battery is covered")
    markdown = turn_to_markdown(turn)
    assert f"From the document, source [1]: Owner's manual, p. 4 (`manual.pdf`)\n\n> {SENTENCE}\n" in markdown
    assert markdown.index(SENTENCE) < markdown.index("The battery is covered")
