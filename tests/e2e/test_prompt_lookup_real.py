"""Prompt-lookup decoding with the real small GGUF, in process and through the worker
process: the same text as without the draft at temperature 0, the draft's counts in the
stats, and the stats AnswerFinished carries."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.speed import SpeedMeter
from desktop_app.core.models.worker import WorkerGenerator
from desktop_app.core.types import GenerationStats

pytestmark = pytest.mark.e2e

# An answer that copies its source: the draft finds what follows in the prompt.
COPY = [
    {"role": "system", "content": "Repeat the source sentence exactly, then stop."},
    {"role": "user", "content": "Source: [1] The north gate of the old harbour opens at seven in the "
                                "morning and closes at nine in the evening.\n\nRepeat the source sentence."},
]


def test_the_draft_changes_no_word_and_counts_what_it_proposed(small_model_path: Path) -> None:
    plain = LlamaGenerator(small_model_path, context_tokens=2048, threads=1)
    expected = "".join(plain.stream(COPY, max_tokens=40, temperature=0.0))
    drafted = LlamaGenerator(small_model_path, context_tokens=2048, threads=1, prompt_lookup=4)
    got = "".join(drafted.stream(COPY, max_tokens=40, temperature=0.0))
    assert got == expected and len(got) > 10
    stats = drafted.last_stats
    assert stats is not None and stats.drafted > 0 and 0 <= stats.accepted <= stats.drafted
    assert plain.last_stats is not None and plain.last_stats.drafted == 0
    # A second question on the same instance: the draft's counts start again.
    again = "".join(drafted.stream(COPY, max_tokens=40, temperature=0.0))
    assert again == expected and drafted.last_stats is not None
    assert drafted.last_stats.drafted == stats.drafted


def test_the_worker_runs_the_draft_and_reports_its_stats(small_model_path: Path) -> None:
    local = LlamaGenerator(small_model_path, context_tokens=2048, threads=1)
    expected = "".join(local.stream(COPY, max_tokens=40, temperature=0.0))
    worker = WorkerGenerator(small_model_path, context_tokens=2048, threads=1, prompt_lookup=4)
    try:
        got = "".join(worker.stream(COPY, max_tokens=40, temperature=0.0))
        assert got == expected
        stats = worker.last_stats
        assert stats is not None and stats.drafted > 0
        data = stats.to_json()
        assert set(data) >= {"prompt_tokens", "cached_tokens", "first_token_s", "tokens_per_s", "draft_accept_rate"}
        assert data["prompt_tokens"] > 20 and 0.0 <= data["draft_accept_rate"] <= 1.0
        assert worker.speed.decode_per_s > 0  # the running measure took this answer in
    finally:
        worker.close()


def test_speed_meter_estimates_from_what_it_measured() -> None:
    meter = SpeedMeter()
    assert meter.estimate(500, 160) == pytest.approx(500 / 50.0 + 160 / 16.0)  # before any answer
    meter.add(GenerationStats(prompt_tokens=600, completion_tokens=101, seconds_to_first_token=5.0,
                              seconds=15.0, cached_tokens=100))
    assert meter.prompt_per_s == pytest.approx(100.0) and meter.decode_per_s == pytest.approx(10.0)
    assert meter.estimate(200, 50) == pytest.approx(2.0 + 5.0)
    meter.add(GenerationStats(600, 101, 10.0, 30.0, 100))  # a slower answer moves the mean 30% of the way
    assert meter.prompt_per_s == pytest.approx(0.7 * 100 + 0.3 * 50)
