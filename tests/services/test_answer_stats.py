"""An answer's figures as `folio ask --stats` and the window show them."""

from __future__ import annotations

from desktop_app.services.answer_stats import first_word_line, stats_line

STATS = {
    "prompt_tokens": 731, "cached_tokens": 279, "completion_tokens": 60, "prefill_tokens": 452,
    "prefill_s": 3.9, "first_token_s": 4.1, "tokens_per_s": 12.5, "draft_accept_rate": 0.0,
    "first_word": {"model_start_s": 0.0, "embed_s": 0.05, "search_s": 0.12, "gate_s": 0.01,
                   "evidence_s": 0.02, "pack_s": 0.004, "pack_token_counts": 11, "prefill_s": 3.9,
                   "prefill_tokens": 452, "first_decode_s": 0.09, "to_visible_word_s": 0.0,
                   "first_token_s": 4.3, "first_word_s": 4.31, "model_load_ms": 0},
}


def test_the_stats_line_says_the_prompts_reading_and_the_decode_rate() -> None:
    line = stats_line(STATS)
    assert line.startswith("stats: prompt 731 tokens (279 cached)")
    assert "read 452 in 3.90 s" in line and "first token 4.30 s" in line and "first word 4.31 s" in line
    assert "12.5 tokens/s (decoding)" in line
    assert stats_line({}) == "stats: none (no model ran)"


def test_the_first_word_line_lists_the_steps_that_took_time_in_order() -> None:
    line = first_word_line(STATS)
    assert line.startswith("first word 4.31 s: ")
    assert line.index("question embedding 0.05 s") < line.index("search 0.12 s") < line.index(
        "reading the prompt (452 tokens) 3.90 s") < line.index("first token 0.09 s")
    assert "prompt packing" not in line  # 4 ms: left out
    assert line.endswith("(11 token counts to pack the prompt)")
    assert first_word_line({"prompt_tokens": 3}) == ""


def test_the_first_word_line_says_how_many_threads_read_the_prompt() -> None:
    two = {**STATS, "first_word": {**STATS["first_word"], "prefill_threads": 2}}
    assert "reading the prompt (452 tokens, 2 threads) 3.90 s" in first_word_line(two)
    one = {**STATS, "first_word": {**STATS["first_word"], "prefill_threads": 1}}
    assert "reading the prompt (452 tokens, 1 thread) 3.90 s" in first_word_line(one)
