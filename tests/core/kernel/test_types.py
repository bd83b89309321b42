"""The kernel's values: an answer's model figures and the first word's clock."""

from __future__ import annotations

import time

from desktop_app.core.types import (
    FIRST_WORD_STEP_NAMES,
    FIRST_WORD_STEPS,
    FirstWordClock,
    GenerationStats,
)


def test_the_first_word_clock_sums_each_step_and_marks_times_from_the_question() -> None:
    clock = FirstWordClock(time.perf_counter() - 1.0)  # asked a second ago
    with clock.timing("search_s"):
        time.sleep(0.02)
    clock.add("search_s", 0.5)
    clock.add("prefill_s", -1.0)  # never negative
    clock.counts["pack_token_counts"] = 3
    clock.mark("first_token_s")
    clock.mark("first_token_s")  # the first mark stays
    data = clock.to_json()
    assert list(data)[: len(FIRST_WORD_STEPS)] == list(FIRST_WORD_STEPS)
    assert 0.52 <= data["search_s"] < 0.7 and data["prefill_s"] == 0.0
    assert data["pack_token_counts"] == 3 and 1.0 <= data["first_token_s"] < 1.5


def test_every_step_the_clock_gives_has_its_words_in_the_same_order() -> None:
    shown = [step for step, _ in FIRST_WORD_STEP_NAMES]
    assert [step for step in shown if step in FIRST_WORD_STEPS] == list(FIRST_WORD_STEPS)
    assert len(set(shown)) == len(shown)


def test_the_decode_rate_leaves_out_the_prompt_and_reading_speed_uses_prefill() -> None:
    stats = GenerationStats(prompt_tokens=700, completion_tokens=41, seconds_to_first_token=4.0, seconds=8.0,
                            cached_tokens=300, prefill_tokens=400, prefill_s=3.2)
    assert stats.tokens_per_second == 10.0  # 40 tokens after the first, in 4 s
    assert stats.prompt_tokens_per_second == 125.0
    assert stats.to_json()["prefill_s"] == 3.2 and stats.to_json()["prefill_tokens"] == 400
