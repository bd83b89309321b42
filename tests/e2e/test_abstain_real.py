"""The model's abstention measure with the real small GGUF, in-process and in its worker:
a probability, ranked sensibly, that leaves the answer that follows unchanged."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from desktop_app.core.answer import prompts
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.worker import WorkerGenerator
from tests.e2e.test_generate_real import QUESTION

pytestmark = pytest.mark.e2e

REFUSAL = prompts.NO_ANSWER["en"]
NONSENSE = "Purple elephants sing in the harbour at midnight."


def test_the_measure_is_a_probability_and_ranks_a_refusal_above_nonsense(small_model_path: Path) -> None:
    local = LlamaGenerator(small_model_path, context_tokens=1024, threads=1)
    refusal = local.reply_logprob(QUESTION, REFUSAL)
    nonsense = local.reply_logprob(QUESTION, NONSENSE)
    assert -200.0 < refusal < 0.0 and -400.0 < nonsense < 0.0
    assert refusal > nonsense
    # The same prompt measured twice (the second time from the KV cache) gives the same figure.
    assert math.isclose(local.reply_logprob(QUESTION, REFUSAL), refusal, abs_tol=1e-3)


def test_the_answer_after_the_measure_is_the_answer_without_it(small_model_path: Path) -> None:
    fresh = LlamaGenerator(small_model_path, context_tokens=1024, threads=1)
    expected = list(fresh.stream(QUESTION, max_tokens=24, temperature=0.0))
    worker = WorkerGenerator(small_model_path, context_tokens=1024, threads=1)
    try:
        measured = worker.reply_logprob(QUESTION, REFUSAL)
        assert measured < 0.0
        got = list(worker.stream(QUESTION, max_tokens=24, temperature=0.0))
        assert got == expected and len(got) > 1
        assert worker.last_stats is not None and worker.last_stats.cached_tokens > 0
    finally:
        worker.close()
