"""One marker grammar: the streaming tracker, the sentence splitter and the verifier see the
same markers in the same strings (issue 12: they once disagreed on ``[1;2]`` and ``[1～3]``)."""

from __future__ import annotations

import pytest

from desktop_app.core.answer.citations import CitationTracker
from desktop_app.core.text.markers import (
    find_markers,
    marker_end,
    strip_markers,
    unclosed_marker_start,
)
from desktop_app.core.text.sentences import attach_citations, split_sentences

# (marker as written, the ids it names; [] when it is not a marker)
CASES = [
    ("[1]", ["1"]),
    ("[1;2]", ["1", "2"]),
    ("[1；2]", ["1", "2"]),
    ("[1, 3]", ["1", "3"]),
    ("[1、3]", ["1", "3"]),
    ("[1-3]", ["1", "2", "3"]),
    ("[1～3]", ["1", "2", "3"]),
    ("[1234]", ["1234"]),
    ("[01]", ["1"]),
    ("【1】", ["1"]),
    ("［２］", ["2"]),
    ("[ABC1234]", ["ABC1234"]),
    ("[abc1234, def5678]", ["abc1234", "def5678"]),
    ("[abc123]", []),
    ("[abcdefghi]", []),
    ("[ 1]", []),
    ("[1,]", []),
    ("[]", []),
    ("[Appendix]", ["Appendix"]),  # 8 letters: a short id to any-style readers; the label
    # style (the default answer style) narrows it away: see test_citations.py
]


@pytest.mark.parametrize(("marker", "ids"), CASES)
def test_the_tracker_and_the_sentence_splitter_see_the_same_markers(marker: str, ids: list[str]) -> None:
    text = f"The pump runs 5 hours a day.{marker} It stops at night."
    at = text.index(marker)
    span = (at, at + len(marker))
    expected = [(cid, span) for cid in ids]

    tracker = CitationTracker()
    streamed = [pair for ch in text for pair in tracker.feed(ch)]  # one character at a time
    assert streamed == expected
    assert find_markers(text) == expected  # what the splitter and the verifier read

    sentences = split_sentences(text)
    attached = attach_citations(sentences, find_markers(text))
    if ids:
        # The marker after the full stop ends the first sentence, with all its ids.
        assert len(sentences) == 2 and sentences[0].end == span[1]
        assert attached[0][1] == tuple(ids) and attached[1][1] == ()
        assert marker_end(text, at) == span[1]
        assert strip_markers(text) == text.replace(marker, "")
    else:
        assert all(not cited for _, cited in attached)
        assert marker_end(text, at) is None
        assert strip_markers(text) == text


def test_a_marker_still_being_written_is_recognised_as_such() -> None:
    assert unclosed_marker_start("It opens at 9 [1, ") == 14
    assert unclosed_marker_start("It opens at 9 【2") == 14
    assert unclosed_marker_start("It opens at 9 [see the") is None
    assert unclosed_marker_start("It opens at 9 [1].") is None
    assert unclosed_marker_start("It opens at 9 [abc1234, de") == 14
    assert unclosed_marker_start("It opens at 9 [1-") == 14
