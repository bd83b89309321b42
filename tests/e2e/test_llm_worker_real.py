"""The real small GGUF in its own worker process: the same answers as in-process, a prompt
cancelled midway within half a second, and a worker that dies (killed, aborting on load)
ending one answer with a message, never the caller."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from desktop_app.core.errors import Cancelled, KnownError
from desktop_app.core.models.generate import LlamaGenerator
from desktop_app.core.models.worker import (
    FAULT_ENV,
    ModelProcessDied,
    WorkerGenerator,
    death_reason,
)
from tests.e2e.test_generate_real import QUESTION, long_question
from tests.timing import within

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def worker(small_model_path: Path):  # type: ignore[no-untyped-def]
    generator = WorkerGenerator(small_model_path, context_tokens=2048, threads=1)
    yield generator
    generator.close()


def test_the_worker_writes_what_the_model_writes_in_process(
    worker: WorkerGenerator, small_model_path: Path
) -> None:
    local = LlamaGenerator(small_model_path, context_tokens=2048, threads=1)
    assert worker.model_id == local.model_id and worker.context_tokens == local.context_tokens
    assert worker.render(QUESTION) == local.render(QUESTION)
    assert worker.count_tokens("When does the library open?") == local.count_tokens("When does the library open?")
    expected = list(local.stream(QUESTION, max_tokens=24, temperature=0.0))
    got = list(worker.stream(QUESTION, max_tokens=24, temperature=0.0))
    assert got == expected and len(got) > 1
    assert worker.last_stats is not None and worker.last_stats.completion_tokens >= len(got)


def test_cancel_during_the_prompt_stops_the_worker_within_half_a_second(worker: WorkerGenerator) -> None:
    base = long_question("archive")
    question = [base[0], {"role": "user", "content": base[1]["content"] * 4}]  # several prefill steps

    def cancelled_in() -> float:
        asked_at: list[float] = []

        def cancel_after_a_moment() -> bool:
            if not asked_at:
                asked_at.append(time.monotonic() + 0.3)
            return time.monotonic() >= asked_at[0]

        stream = worker.stream(question, max_tokens=16, temperature=0.0, should_cancel=cancel_after_a_moment)
        with pytest.raises(Cancelled):
            next(iter(stream))
        assert worker.is_alive()  # stopped by the flag, not killed
        return time.monotonic() - asked_at[0]

    within(cancelled_in, 0.5)  # under 0.5 s, up to 3 tries on a busy machine
    # The worker is free and its cache sound: the next answer is the usual one.
    assert "".join(worker.stream(QUESTION, max_tokens=8, temperature=0.0)).strip()


def test_a_worker_killed_mid_answer_ends_that_answer_with_a_reason_and_the_next_one_works(
    worker: WorkerGenerator,
) -> None:
    first_pid = worker.pid
    assert first_pid is not None
    received: list[str] = []
    with pytest.raises(ModelProcessDied, match="SIGKILL") as error:
        for delta in worker.stream(QUESTION, max_tokens=64, temperature=0.0):
            received.append(delta)
            if len(received) == 2:
                os.kill(first_pid, signal.SIGKILL)
    assert len(received) >= 2  # what was written before the kill was handed out
    assert "memory" in str(error.value)
    # The next question starts a fresh worker.
    assert "".join(worker.stream(QUESTION, max_tokens=8, temperature=0.0)).strip()
    assert worker.pid != first_pid and worker.is_alive()


def test_a_worker_that_aborts_while_loading_is_a_known_error(
    small_model_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, "SIGABRT")  # as llama.cpp's GGML_ASSERT does
    with pytest.raises(ModelProcessDied, match="could not be loaded.*SIGABRT") as error:
        WorkerGenerator(small_model_path, context_tokens=256)
    assert "GGUF" in error.value.hint  # says what to do
    monkeypatch.delenv(FAULT_ENV)
    healthy = WorkerGenerator(small_model_path, context_tokens=256)  # the file itself is fine
    assert healthy.model_id and healthy.is_alive()
    healthy.close()
    assert not healthy.is_alive()


def test_a_junk_file_fails_in_the_worker_with_the_loaders_message(tmp_path: Path) -> None:
    junk = tmp_path / "junk-model.gguf"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(KnownError, match="junk-model.gguf"):
        WorkerGenerator(junk)


def test_the_reasons_name_the_cause_and_what_to_do() -> None:
    assert "illegal CPU instruction" in death_reason(-signal.SIGILL)[0]
    assert "llama-rebuild" in death_reason(-signal.SIGILL)[1]
    assert "memory" in death_reason(-signal.SIGKILL)[0]
    assert "SIGSEGV" in death_reason(-signal.SIGSEGV)[0]
    assert "exit code 3" in death_reason(3)[0]


def test_a_stream_dropped_early_leaves_the_worker_ready(worker: WorkerGenerator) -> None:
    stream = worker.stream(QUESTION, max_tokens=64, temperature=0.0)
    next(iter(stream))
    stream.close()  # the consumer walked away
    done = threading.Event()

    def ask() -> None:
        assert "".join(worker.stream(QUESTION, max_tokens=8, temperature=0.0)).strip()
        done.set()

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join(60)
    assert done.is_set()
