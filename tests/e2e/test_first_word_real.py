"""The real small GGUF on the way to the first word: a prompt head primed per language is
kept by the model process and restored for a question in that language (the same answer as
a model that read the whole prompt), the caller counts tokens as the model does without
asking its process, and an answer's stats say how long the prompt took to read."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.answer import prompts
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.worker import WorkerGenerator

pytestmark = pytest.mark.e2e


def _prompt(generator: WorkerGenerator | LlamaGenerator, question: str, language: str) -> list[dict[str, str]]:
    return prompts.build_prompt(question, [], count_tokens=generator.count_tokens,
                                context_tokens=generator.context_tokens, answer_tokens=64,
                                language=language).messages


def test_each_languages_primed_head_is_restored_and_answers_as_a_fresh_model_would(small_model_path: Path) -> None:
    fresh = LlamaGenerator(small_model_path, context_tokens=2048, threads=1)
    asked = {"en": "When does the library open?", "zh": "图书馆几点开门？"}
    expected = {lang: "".join(fresh.stream(_prompt(fresh, q, lang), max_tokens=16, temperature=0.0))
                for lang, q in asked.items()}
    fresh.close()
    worker = WorkerGenerator(small_model_path, context_tokens=2048, threads=1)
    try:
        heads = {lang: worker.prime(_prompt(worker, "", lang)) for lang in ("en", "zh")}
        assert all(n > 100 for n in heads.values()), heads
        for lang in ("en", "zh", "en"):  # the zh head was read last; then en again
            text = "".join(worker.stream(_prompt(worker, asked[lang], lang), max_tokens=16, temperature=0.0))
            stats = worker.last_stats
            assert stats is not None
            # Only what follows the head is read: the part of the head the question's prompt
            # shares (up to its sources) comes from the head's kept cache.
            assert stats.cached_tokens > 200, (lang, stats)
            assert stats.prefill_tokens == stats.prompt_tokens - stats.cached_tokens - 1 and stats.prefill_s > 0
            assert text == expected[lang]
    finally:
        worker.close()


def test_the_caller_counts_tokens_as_the_model_does(small_model_path: Path) -> None:
    local = LlamaGenerator(small_model_path, context_tokens=2048, threads=1)
    worker = WorkerGenerator(small_model_path, context_tokens=2048, threads=1)
    try:
        for text in ("When does the library open?", "图书馆几点开门？", "<|im_start|>user\nHallo, Welt!<|im_end|>\n",
                     "ﬁnance ﬂow [1] 3.14 %", ""):
            assert worker.count_tokens(text) == local.count_tokens(text), text
    finally:
        worker.close()
        local.close()


def test_a_prompt_read_with_two_threads_answers_as_one_thread_does(small_model_path: Path) -> None:
    """The prompt's threads are chosen from the free cores at each prompt (core/models/cores.py):
    the answer must not depend on that choice."""
    question = "Explain in one sentence why the sky is blue, citing [1]."
    texts: dict[int, str] = {}
    for batch in (1, 2):
        generator = LlamaGenerator(small_model_path, context_tokens=2048, threads=1, batch_threads=batch)
        try:
            texts[batch] = "".join(generator.stream(_prompt(generator, question, "en"), max_tokens=24,
                                                    temperature=0.0))
            assert generator.last_stats is not None and generator.last_stats.prefill_threads == batch
        finally:
            generator.close()
    assert texts[1] and texts[1] == texts[2]


def test_the_prompts_threads_are_chosen_from_the_free_cores_and_reported(small_model_path: Path) -> None:
    from desktop_app.core.models import cores

    worker = WorkerGenerator(small_model_path, context_tokens=2048, threads=1)
    try:
        assert worker.batch_threads == 0  # chosen at each prompt
        "".join(worker.stream(_prompt(worker, "When does the library open?", "en"), max_tokens=4, temperature=0.0))
        stats = worker.last_stats
        assert stats is not None and 1 <= stats.prefill_threads <= cores.usable_cores()
        assert stats.to_json()["prefill_threads"] == stats.prefill_threads
    finally:
        worker.close()
